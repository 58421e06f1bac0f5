import Foundation
import KeychainModel
import Testing
@testable import KeychainStore

#if canImport(Glibc)
import Glibc
#endif

/// Without `$XDG_RUNTIME_DIR`, the session keys go to a 0700 directory of the user's own in the
/// shared base, and a directory there that someone else made (or made open) is refused.
@Suite struct SessionKeysDirectoryTests {
    @Test func theFallbackIsADirectoryOfTheUsersOwnMadePrivate() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("session-base-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: base) }
        let directory = try SessionKeys.directory([:], fallbackBase: base.path)
        #expect(directory == base.path + "/synckeychain-\(getuid())")
        let mode = try FileManager.default.attributesOfItem(atPath: directory)[.posixPermissions] as? Int
        #expect(mode == 0o700)
        // Opened up by someone: refused, by name.
        chmod(directory, 0o777)
        #expect(throws: KeychainError.self) { try SessionKeys.directory([:], fallbackBase: base.path) }
        // Another user's, or a link: refused.
        chmod(directory, 0o700)
        if getuid() == 0 {
            chown(directory, 65534, 65534)
            #expect(throws: KeychainError.self) { try SessionKeys.directory([:], fallbackBase: base.path) }
        }
        try FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createSymbolicLink(atPath: directory, withDestinationPath: base.path)
        #expect(throws: KeychainError.self) { try SessionKeys.directory([:], fallbackBase: base.path) }
    }
}
