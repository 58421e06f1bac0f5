import Foundation
import Testing

/// A date no clock conversion can hold (1e16 or 1e308 seconds) is refused where it enters: an
/// import of such an item once stopped every later sync of the device with a trap.
@Suite struct ImportedDateTests {
    @Test(arguments: ["1e16", "1e308", "-1e16"])
    func anImportedDateOutOfRangeIsRefusedAndNothingIsStored(date: String) throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        #expect(try keychain.run(["add-generic-password", "-a", "kept", "-s", "svc", "-w", "secret", "--sync"]).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: keychain.path))
        let document = """
            {"format": "synckeychain-export", "version": 1, "items": [{"class": "genp", "data": "cHc=",
              "attributes": {"values": ["svce", {"string": {"_0": "imported"}}, "acct", {"string": {"_0": "a"}},
                "sync", {"bool": {"_0": true}}, "mdat", {"date": {"_0": \(date)}}]}}]}
            """
        try FileManager.default.createDirectory(at: keychain.directory, withIntermediateDirectories: true)
        let file = keychain.directory.appendingPathComponent("export.json")
        try Data(document.utf8).write(to: file)
        let result = try keychain.run(["import", "--format", "json", file.path])
        #expect(result.status != 0)
        #expect(result.stderr.contains("date outside the years 1 to 9999"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: keychain.path)) == before)
        #expect(try keychain.run(["find-generic-password", "-s", "imported", "--sync", "yes"]).status == 44)
    }
}
