import Foundation
import KeychainModel
import KeychainStore
import ProcessTesting
import Testing

/// Everything `keychain` prints goes through one escaping function (decision 0263): a value with
/// quotes, newlines or terminal escapes cannot break a line of output, forge another attribute or
/// reach the terminal raw. `export --format json` writes named fields that `jq` reads, and
/// `import --format json` reads them and the earlier form.
@Suite struct OutputEscapingTests {
    static let hostile = "a\"b\u{1B}[31mred\nforged: \"x\"\t\u{202E}end\\"
    static let escaped = #""a\"b\u{1B}[31mred\nforged: \"x\"\t\u{202E}end\\""#

    @Test func findAndDumpPrintValuesQuotedWithControlCharactersEscaped() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        #expect(try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "pw", "-l", Self.hostile, "-j", "plain é 🔑"]).status == 0)
        let found = try keychain.run(["find-generic-password", "-a", "me", "-s", "svc"])
        #expect(found.status == 0)
        #expect(!found.stdout.contains(0x1B), "an escape reached the output raw")
        #expect(found.text.contains("    label: \(Self.escaped)\n"), "\(found.text)")
        #expect(found.text.contains("    comment: \"plain é 🔑\"\n"))
        #expect(!found.text.contains("\nforged"))
        // One line per attribute: the label did not add any.
        let plain = try keychain.run(["add-generic-password", "-a", "me", "-s", "other", "-w", "pw", "-l", "x", "-j", "plain é 🔑"])
        #expect(plain.status == 0)
        let reference = try keychain.run(["find-generic-password", "-a", "me", "-s", "other"])
        #expect(found.text.split(separator: "\n").count == reference.text.split(separator: "\n").count)

        let dump = try keychain.run(["dump-keychain", "-d"])
        #expect(!dump.stdout.contains(0x1B))
        #expect(dump.text.contains("    label: \(Self.escaped)\n"))
        // -w prints the secret alone, byte for byte, as before.
        #expect(try keychain.run(["add-generic-password", "-a", "me", "-s", "raw", "-w", "x\u{1B}y"]).status == 0)
        #expect(try keychain.run(["find-generic-password", "-a", "me", "-s", "raw", "-w"]).text == "x\u{1B}y\n")
        let data = try keychain.run(["dump-keychain", "-d"])
        #expect(data.text.contains("data:\n\"x\\u{1B}y\"\n"), "\(data.text)")
    }

    @Test func historyCellsAndErrorsAreEscapedToo() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        #expect(try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "now", "--sync"]).status == 0)
        try Keychain.open(at: keychain.path).recordHistoryVersion(Item.genericPassword(service: "svc", account: "me", data: Array("p\tw\n".utf8)) {
            $0.synchronizable = true
            $0.label = "tab\there\u{1B}]0;title\u{7}"
        }, versionTag: [1])
        let history = try keychain.run(["history", "-a", "me", "-s", "svc", "-w"])
        #expect(!history.stdout.contains(0x1B) && !history.stdout.contains(0x07))
        let rows = history.text.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        #expect(rows.count == 2 && rows.allSatisfy { $0.count == 6 }, "\(history.text)")
        #expect(rows.last?[safe: 4] == "tab\\there\\u{1B}]0;title\\u{7}")
        #expect(rows.last?[safe: 5] == "p\\tw\\n")

        let path = keychain.directory.appendingPathComponent("no\u{1B}[2Jsuch\nfile.csv").path
        let failed = try keychain.run(["import", "--format", "chrome-csv", path])
        #expect(failed.status != 0)
        #expect(!failed.stderr.utf8.contains(0x1B))
        #expect(failed.stderr.split(separator: "\n").count == 1)
        #expect(failed.stderr.contains("no\\u{1B}[2Jsuch file.csv"), "\(failed.stderr)")
    }

    static let awkwardDates: [Double] = [
        -100.25, 0.000_007_629_394_531_25, -62_135_596_800, 253_402_300_799, 1_000_000_000.1, 1_764_064_800.125, -0.5, 951_782_400,
    ]

    @Test func exportWritesNamedFieldsThatJqReadsAndImportGivesEverythingBack() throws {
        let source = KeychainProcess.temporary()
        let target = KeychainProcess.temporary()
        defer { source.remove(); target.remove() }
        #expect(try source.run(["add-generic-password", "-a", "ann", "-s", "mail", "-w", "pw", "-l", "Mail", "-G", "gen"]).status == 0)
        #expect(try source.run(["add-internet-password", "-a", "bob", "-s", "example.com", "-P", "8443", "-r", "htps", "-w", "web", "--sync"]).status == 0)
        let store = try Keychain.open(at: source.path)
        let dated = Self.awkwardDates.enumerated().map { index, seconds in
            Item.genericPassword(service: "dated", account: "\(index)", data: [0xFF, 0x00, 0x41]) {
                $0.creationDate = Date(timeIntervalSince1970: seconds)
                $0.modificationDate = Date(timeIntervalSince1970: seconds)
                $0.generic = [0xC3, 0x28]
            }
        }
        _ = try store.importItems(dated, keepingDates: true)
        let export = try source.run(["export", "--format", "json"])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(!export.text.contains("\"_0\""), "the attributes' Codable form is gone")
        let file = source.directory.appendingPathComponent("export.json")
        try export.stdout.write(to: file)

        let jq = try ChildProcess.runBlocking(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["jq", "-r", #".version, (.items[] | select(.service == "mail") | [.class, .account, .label, .data, .generic, .accessible, .created] | @tsv)"#, file.path])
        #expect(jq.status == 0, "\(jq.stderr)")
        let lines = jq.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "2")
        let fields = try #require(lines.last?.split(separator: "\t").map(String.init))
        #expect(Array(fields.prefix(6)) == ["generic-password", "ann", "Mail", "pw", "gen", "when-unlocked"], "\(jq.stdout)")
        let timestamp = try Regex(#"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"#)
        let matched = try fields.count == 7 && timestamp.wholeMatch(in: fields[6]) != nil
        #expect(matched, "\(fields)")
        let web = try ChildProcess.runBlocking(
            URL(fileURLWithPath: "/usr/bin/env"), ["jq", "-c", #".items[] | select(.server == "example.com") | [.port, .protocol, .synchronizable]"#, file.path])
        #expect(web.stdout == "[8443,\"htps\",true]\n", "\(web.stdout)")
        let document = try #require(try JSONSerialization.jsonObject(with: export.stdout) as? [String: Any])
        let items = try #require(document["items"] as? [[String: Any]])
        let created = Dictionary(uniqueKeysWithValues: items.filter { $0["service"] as? String == "dated" }.map {
            ($0["account"] as? String ?? "", $0["created"] as? String ?? "")
        })
        #expect(created == [
            "0": "1969-12-31T23:58:19.75Z", "1": "1970-01-01T00:00:00.00000762939453125Z", "2": "0001-01-01T00:00:00Z", "3": "9999-12-31T23:59:59Z",
            "4": "2001-09-09T01:46:40.1Z", "5": "2025-11-25T10:00:00.125Z", "6": "1969-12-31T23:59:59.5Z", "7": "2000-02-29T00:00:00Z",
        ])
        let first = try #require(items.first { $0["service"] as? String == "dated" })
        #expect(first["data_base64"] as? String == "/wBB" && first["generic_base64"] as? String == "wyg=" && first["data"] == nil)

        #expect(try target.run(["import", "--format", "json", file.path]).text == "imported 10, updated 0, unchanged 0, skipped 0\n")
        let before = try Keychain.open(at: source.path).exportItems(synchronizable: .any)
        let after = try Keychain.open(at: target.path).exportItems(synchronizable: .any)
        #expect(Set(before) == Set(after))
        #expect(Set(after.filter { $0.attributes.service == "dated" }.map { $0.attributes.creationDate!.timeIntervalSince1970 }) == Set(Self.awkwardDates))
    }

    @Test func importStillReadsTheEarlierForm() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let document = """
            {"format": "synckeychain-export", "version": 1, "items": [{"class": "genp", "data": "cHc=",
              "attributes": {"values": ["svce", {"string": {"_0": "old-form"}}, "acct", {"string": {"_0": "a"}},
                "sync", {"bool": {"_0": true}}, "cdat", {"date": {"_0": 1000.5}}, "mdat", {"date": {"_0": 1000.5}}]}}]}
            """
        try FileManager.default.createDirectory(at: keychain.directory, withIntermediateDirectories: true)
        let file = keychain.directory.appendingPathComponent("old.json")
        try Data(document.utf8).write(to: file)
        #expect(try keychain.run(["import", "--format", "json", file.path]).text == "imported 1, updated 0, unchanged 0, skipped 0\n")
        #expect(try keychain.run(["find-generic-password", "-s", "old-form", "--sync", "yes", "-w"]).text == "pw\n")
        #expect(try keychain.run(["find-generic-password", "-s", "old-form", "--sync", "yes"]).text.contains("created: \"1970-01-01T00:16:40.500Z\""))

        let unknown = """
            {"format": "synckeychain-export", "version": 2, "items": [{"class": "generic-password", "service": "s", "colour": "red", "data": "x"}]}
            """
        try Data(unknown.utf8).write(to: file)
        let refused = try keychain.run(["import", "--format", "json", file.path])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("item 1 / colour / unknown field"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("red"))
    }
}
