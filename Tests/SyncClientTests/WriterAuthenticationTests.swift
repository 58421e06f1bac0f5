import Foundation
import KeychainCrypto
import KeychainStore
import ProcessTesting
import SyncClient
import SyncCore
import SyncProtocol
import Testing

/// Writers authenticated (issue 34, decision 0275), with real processes: a revoked device still
/// holds epoch 1's key and its own identity key, computes item IDs and reads the vectors the server
/// keeps in the clear; with the server's help (the rewriting proxy) its versions and tombstones,
/// sealed under epoch 1 with vectors that dominate the current ones, are served to the remaining
/// devices, which refuse them, report them, and go on syncing.
@Suite(.serialized)
struct WriterAuthenticationTests {
    @Test func versionsARevokedDeviceForgesUnderTheOldEpochAreRefusedAndReported() async throws {
        try await withProxiedAccount(["a", "b", "c"], proxied: ["c"]) { account in
            let (a, b, c) = (account.devices[0], account.devices[1], account.devices[2])
            try await a.add(service: "site", account: "u", password: "site-1")
            try await a.add(service: "vault", account: "u", password: "vault-1")
            for device in [a, b, c] { try await device.sync() }
            let bID = try #require(DeviceID(try await KeyEpochTests.deviceID(of: b)))
            let revoked = try await a.syncClient(["revoke", bID.rawValue])
            #expect(revoked.status == 0, "\(revoked.stderr)")
            // c reads the revocation (epoch 2); a writes both items again.
            try await c.sync()
            try await a.add(service: "site", account: "u", password: "site-2", update: true)
            try await a.add(service: "vault", account: "u", password: "vault-2", update: true)
            try await a.sync()

            // What b still holds: epoch 1's account key and its identity key.
            let bKeys = try KeyEpochTests.epochKeys(of: b)
            #expect(bKeys.keys.sorted() == [1])
            let bIdentity = try #require(try DeviceSecrets(keychain: try Keychain.open(at: b.keychainPath)).identity())
            let aKeys = try KeyEpochTests.epochKeys(of: a)
            let served = try await KeyEpochTests.servedBlobs(of: a, zone: "keychain")
            func current(_ secret: String) throws -> (blob: KeyEpochTests.ServedBlob, version: ItemVersion) {
                let sealer = VersionSealer(keys: try AccountKeys(epochs: aKeys), account: served[0].account, zone: .keychain)
                for blob in served {
                    let version = try sealer.open(blob.blob, item: blob.item, vector: blob.vector, deleted: blob.deleted)
                    if version.content.contains(anyOf: [secret]) { return (blob, version) }
                }
                throw TestFailure("no served version holds \(secret)")
            }
            let site = try current("site-2")
            let vault = try current("vault-2")
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            var phishing = try #require(ItemContent.decode(site.version.content))
            phishing.data = Array("phishing".utf8)
            // A version signed by b (the signed format) and a tombstone in the format before
            // signatures, both under epoch 1, each vector a's plus one write of b.
            let bSealer = VersionSealer(keys: try AccountKeys(epochs: bKeys), account: site.blob.account, zone: .keychain)
            let forgedSite = ItemVersion(
                vector: site.blob.vector.incremented(for: bID), isDeleted: false, modifiedAt: now, device: bID,
                content: ItemContent.encode(phishing))
            let forgedVault = ItemVersion(vector: vault.blob.vector.incremented(for: bID), isDeleted: true, modifiedAt: now, device: bID, content: [])
            let siteBlob = try bSealer.with(signer: bIdentity.signingKey, as: bID).seal(forgedSite, item: site.blob.item)
            let vaultBlob = try bSealer.seal(forgedVault, item: vault.blob.item)
            #expect(AccountKeys.epoch(ofBlob: siteBlob) == 1 && AccountKeys.isSigned(blob: siteBlob))
            #expect(AccountKeys.epoch(ofBlob: vaultBlob) == 1 && !AccountKeys.isSigned(blob: vaultBlob))
            try account.proxy.serveVersions([
                FeedItem(id: site.blob.item, sequence: 0, versions: [WireVersion(vector: forgedSite.vector, deleted: false, blob: Base64Bytes(siteBlob))]),
                FeedItem(id: vault.blob.item, sequence: 0, versions: [WireVersion(vector: forgedVault.vector, deleted: true, blob: Base64Bytes(vaultBlob))]),
            ])

            // c refuses both, says why, and keeps what it had.
            let synced = try await c.syncClient(["sync"])
            #expect(synced.status != 0)
            #expect(synced.stderr.contains("2 pulled version(s) were rejected"), "\(synced.stderr)")
            #expect(synced.stderr.contains("its writer was revoked"), "\(synced.stderr)")
            #expect(synced.stderr.contains("unsigned, under a key epoch a revoked device holds"), "\(synced.stderr)")
            #expect(try await c.password(service: "site", account: "u") == "site-1")
            #expect(try await c.password(service: "vault", account: "u") == "vault-1")
            let status = try await c.syncClient(["status", "--json"])
            let problems = (try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["problems"] as? [Any]
            #expect(problems?.count == 2, "\(status.stdout)")

            // A device enrolled now, through the same server, pulls the whole feed and refuses them too.
            let d = account.newDevice("d")
            let enrolled = try await d.syncClient(account.enrolment(of: d, throughProxy: true))
            #expect(enrolled.status == 0, "\(enrolled.stderr)")
            let pulled = try await d.syncClient(["sync"])
            #expect(pulled.status != 0 && pulled.stderr.contains("its writer was revoked"), "\(pulled.stderr)")
            #expect(try await d.password(service: "site", account: "u") == nil)

            // The server stops forging: a's next write reaches both, and the problems settle.
            try account.proxy.serveVersions([])
            try await a.add(service: "site", account: "u", password: "site-3", update: true)
            try await a.add(service: "vault", account: "u", password: "vault-3", update: true)
            try await a.sync()
            for device in [c, d] {
                try await device.sync()
                #expect(try await device.password(service: "site", account: "u") == "site-3")
                #expect(try await device.password(service: "vault", account: "u") == "vault-3")
            }
        }
    }

    /// Decision 0281: what a device wrote before its revocation is answered for by the revoking
    /// device, so a device that pulls it afterwards takes it; what it forges later is refused.
    @Test func whatARevokedDeviceWroteBeforeItsRevocationReachesADeviceEnrolledLater() async throws {
        try await withProxiedAccount(["a", "b"], proxied: []) { account in
            let (a, b) = (account.devices[0], account.devices[1])
            try await a.add(service: "site", account: "u", password: "site-1")
            try await a.sync()
            try await b.sync()
            try await b.add(service: "router", account: "admin", password: "written-by-b")
            try await b.add(service: "site", account: "u", password: "site-by-b", update: true)
            try await b.sync()
            let bID = try await KeyEpochTests.deviceID(of: b)
            let revoked = try await a.syncClient(["revoke", bID])
            #expect(revoked.status == 0, "\(revoked.stderr)")

            let d = account.newDevice("d")
            let enrolled = try await d.syncClient(account.enrolment(of: d, throughProxy: false))
            #expect(enrolled.status == 0, "\(enrolled.stderr)")
            let pulled = try await d.syncClient(["sync"])
            #expect(pulled.status == 0, "\(pulled.stderr)")
            #expect(try await d.password(service: "router", account: "admin") == "written-by-b")
            #expect(try await d.password(service: "site", account: "u") == "site-by-b")
            try await a.sync()
            #expect(try await a.password(service: "router", account: "admin") == "written-by-b")
        }
    }
}
