import Foundation
import Testing

/// The unlocked passcode keys go only to a runtime directory private to the user: in a shared one
/// (`/dev/shm` when `$XDG_RUNTIME_DIR` is unset) another user could take their predictable file
/// name first and keep the keychain from unlocking.
@Suite struct RuntimeDirectoryTests {
    @Test func aRuntimeDirectoryOthersMayEnterIsRefusedByName() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let runtime = keychain.directory.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: runtime.path)
        let environment = ["XDG_RUNTIME_DIR": runtime.path, "KEYCHAIN_NEW_PASSCODE": "1234", "KEYCHAIN_PASSCODE": "1234"]
        #expect(try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "pw"], environment: environment).status == 0)
        let set = try keychain.run(["set-passcode"], environment: environment)
        try keychain.run(["lock"], environment: environment)
        let unlock = try keychain.run(["unlock"], environment: environment)
        #expect(set.status != 0 || unlock.status != 0)
        let said = set.stderr + unlock.stderr
        #expect(said.contains("\(runtime.path) is not private to this user"), "\(said)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: runtime.path).isEmpty)
    }

    @Test func aPrivateRuntimeDirectoryHoldsTheSessionKeysInAPrivateFile() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let runtime = keychain.directory.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: runtime.path)
        let environment = ["XDG_RUNTIME_DIR": runtime.path, "KEYCHAIN_NEW_PASSCODE": "1234", "KEYCHAIN_PASSCODE": "1234"]
        #expect(try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "pw"], environment: environment).status == 0)
        #expect(try keychain.run(["set-passcode"], environment: environment).status == 0)
        try keychain.run(["lock"], environment: environment)
        #expect(try keychain.run(["unlock"], environment: environment).status == 0)
        #expect(try keychain.run(["find-generic-password", "-a", "me", "-w"], environment: environment).text == "pw\n")
        let files = try FileManager.default.contentsOfDirectory(atPath: runtime.path)
        #expect(files.count == 1 && files[0].hasSuffix(".session"))
        let mode = try FileManager.default.attributesOfItem(atPath: runtime.appendingPathComponent(files[0]).path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }
}
