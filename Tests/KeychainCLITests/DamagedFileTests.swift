import Foundation
import Testing

@Suite struct DamagedFileTests {
    enum Damage: String, CaseIterable {
        case corrupt, newerVersion, otherDatabase, notADatabase
    }

    /// Builds the damaged file: a real keychain changed in place, or a plain text file.
    func damage(_ keychain: KeychainProcess, _ damage: Damage) throws {
        if damage == .notADatabase {
            try FileManager.default.createDirectory(at: keychain.directory.appendingPathComponent("kc"), withIntermediateDirectories: true)
            try Data("just some notes, not a database\n".utf8).write(to: URL(fileURLWithPath: keychain.path))
            return
        }
        #expect(try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "pw"]).status == 0)
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: keychain.path))
        defer { try? handle.close() }
        switch damage {
        case .corrupt:
            try handle.seek(toOffset: 100)
            try handle.write(contentsOf: Data(repeating: 0xA5, count: 4000))
        case .newerVersion:
            try handle.seek(toOffset: 60)  // PRAGMA user_version
            try handle.write(contentsOf: Data([0, 0, 0, 99]))
        case .otherDatabase:
            try handle.seek(toOffset: 68)  // PRAGMA application_id
            try handle.write(contentsOf: Data([0, 0, 0, 7]))
        case .notADatabase:
            break
        }
    }

    @Test(arguments: Damage.allCases)
    func damagedFileGetsAClearErrorAndStaysUntouched(kind: Damage) throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        try damage(keychain, kind)
        let directory = keychain.directory.appendingPathComponent("kc")
        let before = try Data(contentsOf: URL(fileURLWithPath: keychain.path))
        let filesBefore = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        for arguments in [["find-generic-password", "-a", "me", "-w"], ["add-generic-password", "-a", "x", "-s", "y", "-w", "z"], ["lock"], ["dump-keychain"]] {
            let result = try keychain.run(arguments)
            #expect(![0, 44, 45].contains(result.status), "\(arguments[0])")
            #expect(result.stderr.split(separator: "\n").count == 1)
            let expected = switch kind {
            case .corrupt: "corrupt"
            case .newerVersion: "newer version"
            case .otherDatabase, .notADatabase: "not a keychain"
            }
            #expect(result.stderr.contains(expected), "\(result.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: keychain.path)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == filesBefore)
    }
}
