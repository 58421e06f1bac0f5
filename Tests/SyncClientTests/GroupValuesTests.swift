import Foundation
import ProcessTesting
import Testing

/// The values a shared group's members share (decision 0292), with real processes in the contacts'
/// world: Alice (devices a, and p through the rewriting proxy) and Bob (devices b and c).
extension ContactsTests {
    /// Alice sets a value in her group; Bob's device reads it and edits it; both of Alice's devices
    /// read the edit, and the one behind a server that hides it finds it hidden. Once removed, Bob reads and writes nothing more, and what Alice writes next
    /// is sealed under a key his account does not hold; added again as a viewer, he reads it and
    /// changes nothing.
    @Test func aGroupsValuesReachEveryMembersDevicesAndNoRemovedMember() async throws {
        try await withWorld { world in
            try await aliceSharesFamilyWithBob(in: world)

            let set = try await group(["set", "family", "router", "first password"], on: world.a)
            #expect(set.status == 0 && set.stdout.contains("router set and synced"), "\(set.stderr)")
            let read = try await group(["get", "alices", "router"], on: world.b)
            #expect(read.status == 0 && read.stdout == "first password\n", "\(read.stdout) \(read.stderr)")

            // Alice's other device learns the group from the account's records, and its `sync`
            // brings the group's values with the account's zones.
            try await world.a.sync()
            try await world.p.sync()
            let copy = try await group(["get", "--offline", "family", "router"], on: world.p)
            #expect(copy.status == 0 && copy.stdout == "first password\n", "\(copy.stdout) \(copy.stderr)")

            let edit = try ChildProcess(Products.syncClient, ["group", "set", "--keychain", world.b.keychainPath, "alices", "router"], typing: true)
            try edit.type("second password\n")
            #expect(try await edit.waitForExit().status == 0)
            #expect(try await group(["get", "family", "router"], on: world.a).stdout == "second password\n")

            // The server hides Bob's edit from Alice's proxied device: Bob's statement of the
            // group's zone names it, so the device finds it hidden (decision 0294); served again,
            // the edit is read.
            try world.proxied.proxy.set(.hideGroup)
            let hidden = try await group(["get", "family", "router"], on: world.p)
            #expect(hidden.status != 0 && hidden.stderr.contains("stated writes the server did not serve"), "\(hidden.stdout) \(hidden.stderr)")
            try world.proxied.proxy.set(.pass)
            let served = try await group(["get", "family", "router"], on: world.p)
            #expect(served.status == 0 && served.stdout == "second password\n", "\(served.stdout) \(served.stderr)")
            let other = try await group(["values", "family"], on: world.p)
            #expect(other.status == 0 && other.stdout == "router\n", "\(other.stdout) \(other.stderr)")

            #expect(try await group(["remove", "family", world.bob], on: world.a).status == 0)
            #expect(try await group(["set", "family", "router", "third password"], on: world.a).status == 0)
            let removedRead = try await group(["get", "alices", "router"], on: world.b)
            #expect(removedRead.status != 0 && removedRead.stderr.contains("no longer a member"), "\(removedRead.stderr)")
            let removedWrite = try await group(["set", "alices", "router", "mine"], on: world.b)
            #expect(removedWrite.status != 0 && removedWrite.stderr.contains("no longer a member"), "\(removedWrite.stderr)")
            #expect(try await group(["get", "family", "router"], on: world.a).stdout == "third password\n")

            // Added again as a viewer, Bob reads what was written meanwhile and may change nothing.
            #expect(try await group(["invite", "family", world.bob, "--role", "viewer"], on: world.a).status == 0)
            let viewerRead = try await group(["get", "alices", "router"], on: world.b)
            #expect(viewerRead.status == 0 && viewerRead.stdout == "third password\n", "\(viewerRead.stdout) \(viewerRead.stderr)")
            let viewerWrite = try await group(["set", "alices", "router", "mine"], on: world.b)
            #expect(viewerWrite.status != 0 && viewerWrite.stderr.contains("viewer"), "\(viewerWrite.stderr)")
        }
    }
}
