import Foundation
import KeychainModel
import KeychainStore
import ProcessTesting
import Testing

/// `keychain import` and `export` on the built binary, with files written here in each format's
/// documented layout.
@Suite struct ImportExportTests {
    func write(_ text: String, in keychain: KeychainProcess, name: String = "export.csv") throws -> String {
        try FileManager.default.createDirectory(at: keychain.directory, withIntermediateDirectories: true)
        let url = keychain.directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    /// Commas, doubled quotes and a newline inside quoted fields, Unicode, and empty fields.
    static let chrome = """
        name,url,username,password,note
        "Example, Inc.",https://example.com:8443/login,"bob ""the"" builder","pa,ss""word
        two",note é 日本
        Local thing,,alice,secret,

        """

    @Test func chromeCSVWithAwkwardValuesImportsAndReimportingUpdatesInsteadOfDuplicating() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let file = try write(Self.chrome, in: keychain)
        let first = try keychain.run(["import", "--format", "chrome-csv", file])
        #expect(first.status == 0 && first.text == "imported 2, updated 0, unchanged 0, skipped 0\n", "\(first.stderr)")
        let web = try keychain.run(["find-internet-password", "-s", "example.com", "-a", "bob \"the\" builder", "-P", "8443", "-w"])
        #expect(web.text == "pa,ss\"word\ntwo\n")
        let attributes = try keychain.run(["find-internet-password", "-s", "example.com"]).text
        #expect(attributes.contains("note é 日本") && attributes.contains("Example, Inc.") && attributes.contains("htps"))
        #expect(try keychain.run(["find-generic-password", "-s", "Local thing", "-a", "alice", "-w"]).text == "secret\n")

        #expect(try keychain.run(["import", "--format", "chrome-csv", file]).text == "imported 0, updated 0, unchanged 2, skipped 0\n")
        _ = try write(Self.chrome.replacingOccurrences(of: "secret", with: "changed"), in: keychain)
        #expect(try keychain.run(["import", "--format", "chrome-csv", file, "--dry-run"]).text == "would import 0, updated 1, unchanged 1, skipped 0\n")
        #expect(try keychain.run(["find-generic-password", "-s", "Local thing", "-a", "alice", "-w"]).text == "secret\n")
        #expect(try keychain.run(["import", "--format", "chrome-csv", file]).text == "imported 0, updated 1, unchanged 1, skipped 0\n")
        #expect(try keychain.run(["find-generic-password", "-s", "Local thing", "-a", "alice", "-w"]).text == "changed\n")
    }

    @Test(arguments: [
        ("name,url,username,password\nok,https://a.example,u,first-secret\n\"broken,https://b.example,u,second-secret\n", "line 3"),
        ("name,url,username,password\nok,https://a.example,u,first-secret\nshort,second-secret\n", "line 3"),
        ("name,url,username,password\nok,https://a.example,u,first-secret\n\"x\"y,https://b.example,u,second-secret\n", "line 3"),
        ("title,password\nok,first-secret\n", "line 1"),
    ])
    func aMalformedFileIsRefusedWithItsLineAndNothingIsImported(text: String, line: String) throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        #expect(try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "pw"]).status == 0)
        let file = try write(text, in: keychain)
        let result = try keychain.run(["import", "--format", "chrome-csv", file])
        #expect(result.status != 0 && result.status != 44)
        #expect(result.stderr.contains(line), "\(result.stderr)")
        #expect(!result.stderr.contains("secret"))
        #expect(try keychain.run(["find-internet-password", "-s", "a.example"]).status == 44)
    }

    @Test func bitwardenJSONKeepsNotesAndTOTPSealedAndSkipsCards() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let json = """
            {"encrypted": false, "folders": [], "items": [
              {"type": 1, "name": "Mail", "notes": "recovery: 1234", "login": {"uris": [{"match": null, "uri": "https://mail.example.org"}],
               "username": "me@example.org", "password": "p\\"w,1", "totp": "otpauth://totp/Mail?secret=JBSWY3DPEHPK3PXP"}},
              {"type": 2, "name": "Safe combination", "notes": "12-34-56", "secureNote": {"type": 0}},
              {"type": 3, "name": "Visa", "card": {"number": "4111111111111111"}}
            ]}
            """
        let file = try write(json, in: keychain, name: "bitwarden.json")
        let result = try keychain.run(["import", "--format", "bitwarden-json", file, "--sync"])
        #expect(result.text == "imported 3, updated 0, unchanged 0, skipped 1\n", "\(result.stderr)")
        #expect(try keychain.run(["find-internet-password", "-s", "mail.example.org", "--sync", "yes", "-w"]).text == "p\"w,1\n")
        #expect(try keychain.run(["find-internet-password", "-s", "mail.example.org", "--sync", "yes"]).text.contains("recovery: 1234"))
        let totp = try keychain.run(["find-generic-password", "-s", "totp:mail.example.org", "-a", "me@example.org", "--sync", "yes", "-w"])
        #expect(totp.text == "otpauth://totp/Mail?secret=JBSWY3DPEHPK3PXP\n")
        #expect(try keychain.run(["find-generic-password", "-s", "Safe combination", "--sync", "yes", "-w"]).text == "12-34-56\n")
        let encrypted = try write(#"{"encrypted": true, "items": []}"#, in: keychain, name: "encrypted.json")
        #expect(try keychain.run(["import", "--format", "bitwarden-json", encrypted]).stderr.contains("encrypted"))
    }

    /// A file read whole is read only up to a bound: `/dev/zero` (and a file past it) gets a clear
    /// error and stores nothing, in every format read from one file.
    @Test func aFileWithoutEndIsRefusedAtTheBound() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        for format in ["json", "bitwarden-json", "chrome-csv"] {
            let result = try keychain.run(["import", "--format", format, "/dev/zero"])
            #expect(result.status != 0)
            #expect(result.stderr.contains("/dev/zero is larger than 256 MiB"), "\(result.stderr)")
        }
        // Refused before the keychain is opened: none was made.
        #expect(!FileManager.default.fileExists(atPath: keychain.path))
        let missing = try keychain.run(["import", "--format", "chrome-csv", keychain.directory.appendingPathComponent("none.csv").path])
        #expect(missing.status != 0 && missing.stderr.contains("cannot read"), "\(missing.stderr)")
    }

    @Test func bitwardenKeePassXCAndFirefoxCSVLayouts() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let bitwarden = """
            folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp
            ,,login,Forum,,,0,"https://forum.example,https://m.forum.example",fan,bw-secret,
            ,,note,Wifi,"ssid: home
            key: 42",,0,,,,

            """
        #expect(try keychain.run(["import", "--format", "bitwarden-csv", try write(bitwarden, in: keychain, name: "bw.csv")]).text == "imported 2, updated 0, unchanged 0, skipped 0\n")
        #expect(try keychain.run(["find-internet-password", "-s", "forum.example", "-a", "fan", "-w"]).text == "bw-secret\n")
        #expect(try keychain.run(["find-generic-password", "-s", "Wifi", "-w"]).text == "ssid: home\nkey: 42\n")

        let keepass = """
            "Group","Title","Username","Password","URL","Notes","TOTP","Icon","Last Modified","Created"
            "Root/Work","VPN","kp","kp-secret","","","","0","2024-01-01T00:00:00Z","2024-01-01T00:00:00Z"

            """
        #expect(try keychain.run(["import", "--format", "keepassxc-csv", try write(keepass, in: keychain, name: "kp.csv")]).text == "imported 1, updated 0, unchanged 0, skipped 0\n")
        #expect(try keychain.run(["find-generic-password", "-s", "VPN", "-a", "kp", "-w"]).text == "kp-secret\n")

        let firefox = """
            "url","username","password","httpRealm","formActionOrigin","guid","timeCreated","timeLastUsed","timePasswordChanged"
            "http://router.local:8080","admin","ff-secret","Router","","{1}","1","1","1"

            """
        #expect(try keychain.run(["import", "--format", "firefox-csv", try write(firefox, in: keychain, name: "ff.csv")]).text == "imported 1, updated 0, unchanged 0, skipped 0\n")
        #expect(try keychain.run(["find-internet-password", "-s", "router.local", "-P", "8080", "-r", "http", "-d", "Router", "-w"]).text == "ff-secret\n")
    }

    @Test func exportThenImportLosesNothing() throws {
        let source = KeychainProcess.temporary()
        let target = KeychainProcess.temporary()
        defer { source.remove(); target.remove() }
        #expect(try source.run(["add-generic-password", "-a", "--", "-s", "svc", "-w", "a,b\"c\nd é", "-l", "L", "-j", "C", "-G", "g"]).status == 0)
        #expect(try source.run(["add-internet-password", "-a", "u", "-s", "example.com", "-P", "443", "-r", "htps", "-p", "/x", "-w", "w", "--sync"]).status == 0)
        #expect(try source.run(["add-generic-password", "-a", "local", "-s", "svc", "-w", "", "--accessible", "always-this-device-only"]).status == 0)
        try Keychain.open(at: source.path).add(Item(itemClass: .genericPassword, attributes: { var a = ItemAttributes(); a.service = "nodata"; return a }()))
        // The ThisDeviceOnly item goes only with the flag.
        #expect(try !source.run(["export", "--format", "json"]).text.contains("\"local\""))
        let export = try source.run(["export", "--format", "json", "--include-this-device-only"])
        #expect(export.status == 0, "\(export.stderr)")
        let file = try write(export.text, in: target, name: "export.json")
        #expect(try target.run(["import", "--format", "json", file]).text == "imported 4, updated 0, unchanged 0, skipped 0\n")
        let before = try Keychain.open(at: source.path).exportItems(synchronizable: .any, includingThisDeviceOnly: true)
        let after = try Keychain.open(at: target.path).exportItems(synchronizable: .any, includingThisDeviceOnly: true)
        #expect(Set(before) == Set(after))
        #expect(after.contains { $0.attributes.service == "nodata" && $0.data == nil })
        #expect(try target.run(["import", "--format", "json", file]).text == "imported 0, updated 0, unchanged 4, skipped 0\n")
        let onlySynced = try source.run(["export", "--sync", "yes"])
        #expect(onlySynced.text.contains("example.com") && !onlySynced.text.contains("nodata"))
    }

    @Test func passStoreIsReadThroughGPG() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let home = keychain.directory.appendingPathComponent("gnupg")
        let store = keychain.directory.appendingPathComponent("store/web")
        try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: keychain.directory.path)
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let environment = ["GNUPGHOME": home.path]
        defer { _ = try? run("/usr/bin/env", ["gpgconf", "--kill", "all"], environment: environment) }
        try run("/usr/bin/env", ["gpg", "--batch", "--passphrase", "", "--quick-gen-key", "pass-test@example.org", "default", "default", "never"], environment: environment)
        let plain = keychain.directory.appendingPathComponent("entry.txt")
        try Data("pa ss, \"word\"\nlogin: me\nurl: https://shop.example\notpauth://totp/shop?secret=ABC\nnote line\n".utf8).write(to: plain)
        try run("/usr/bin/env", ["gpg", "--batch", "--yes", "-r", "pass-test@example.org", "-o", store.appendingPathComponent("shop.gpg").path, "-e", plain.path], environment: environment)
        let result = try keychain.run(["import", "--format", "pass", keychain.directory.appendingPathComponent("store").path], environment: environment)
        #expect(result.text == "imported 2, updated 0, unchanged 0, skipped 0\n", "\(result.stderr)")
        #expect(try keychain.run(["find-internet-password", "-s", "shop.example", "-a", "me", "-w"]).text == "pa ss, \"word\"\n")
        #expect(try keychain.run(["find-internet-password", "-s", "shop.example"]).text.contains("web/shop"))
        #expect(try keychain.run(["find-generic-password", "-s", "totp:shop.example", "-w"]).text == "otpauth://totp/shop?secret=ABC\n")
    }

    @discardableResult
    func run(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> Int32 {
        let process = try SpawnedProcess(executable, arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        let status = process.waitForExit(timeout: .seconds(60))
        if status == nil { process.signal(SIGKILL) }
        #expect(status == 0, "\(arguments.prefix(2)) failed")
        return status ?? -1
    }
}
