import Foundation
import KeyValueStore
import KeychainCLI
import KeychainModel

/// `keychain import --format …` (every format read from a file) and `kv set`'s typed values.
extension FuzzTargets {
    /// A fixed "now", so that a prepared item is the same on every run.
    static let now = Date(timeIntervalSince1970: 1_790_000_000)

    static var importTargets: [FuzzTarget] {
        [importJSON] + foreignFormats.map { format, seeds in
            FuzzTarget(
                "import-\(format)", seeds: seeds.map { Array($0.utf8) }, isJSON: format.hasSuffix("json"),
                tokens: ["\"", ",", "\n", "\r\n", "login_uri", "login_password", "Title", "url", "https://", "type", "items", "uris"],
                clearErrors: { $0 is KeychainError }
            ) { bytes in
                try checkImported(try OutsideInput.importedItems(bytes, format: format, now: now))
            }
        }
    }

    /// The keychain's own export, version 2 as `keychain export` writes it and version 1 as it was.
    static var importJSON: FuzzTarget {
        FuzzTarget(
            "import-json", seeds: [try! OutsideInput.exportDocument(sampleItems), legacyExport], isJSON: true,
            tokens: ["class", "data_base64", "created", "modified", "accessible", "synchronizable", "_base64", "\"version\":1", "\"version\":2"],
            clearErrors: { $0 is KeychainError }
        ) { bytes in
            let items = try OutsideInput.importedItems(bytes, format: "json", now: now)
            try checkImported(items)
            // What was imported exports and imports back as itself.
            let again = try OutsideInput.importedItems(try OutsideInput.exportDocument(items), format: "json", now: now)
            try FuzzCheck.require(again == items, "an imported item does not export and import back as itself")
        }
    }

    /// What every import must give the keychain: items it accepts, dates it can stamp.
    static func checkImported(_ items: [Item]) throws(FuzzCheck.Failure) {
        for item in items {
            for attribute in item.attributes.present {
                try FuzzCheck.require(item.attributes[attribute]!.isInRange, "an imported item carries a date outside the keychain's range")
            }
        }
    }

    static let sampleItems: [Item] = {
        var login = ItemAttributes()
        login.server = "example.com"
        login.account = "ada"
        login.protocol = "htps"
        login.port = 8443
        login.path = "/login"
        login.label = "Example"
        login.comment = "note\nwith \"quotes\""
        login.synchronizable = true
        login.creationDate = Date(timeIntervalSince1970: 1_700_000_000.125)
        login.modificationDate = Date(timeIntervalSince1970: 1_700_000_100)
        var generic = ItemAttributes()
        generic.service = "mail"
        generic.account = "bob"
        generic.generic = [0xFF, 0x00, 0x80]
        generic.creationDate = Date(timeIntervalSince1970: -86_400.5)
        generic.modificationDate = Date(timeIntervalSince1970: 253_402_300_799)
        return [
            Item(itemClass: .internetPassword, attributes: login, data: Array("s3cret".utf8)),
            Item(itemClass: .genericPassword, attributes: generic, data: [0xC3, 0x28, 0x00]),
        ]
    }()

    /// Version 1 of the export: each item's attributes in their own Codable form.
    static let legacyExport: [UInt8] = {
        struct Entry: Encodable {
            var itemClass: ItemClass
            var attributes: ItemAttributes
            var data: String?
            enum CodingKeys: String, CodingKey { case itemClass = "class", attributes, data }
        }
        struct Document: Encodable {
            var format = "synckeychain-export"
            var version = 1
            var items: [Entry]
        }
        let entries = sampleItems.map { Entry(itemClass: $0.itemClass, attributes: $0.attributes, data: $0.data.map { Data($0).base64EncodedString() }) }
        return Array(try! JSONEncoder().encode(Document(items: entries)))
    }()

    /// Other password managers' exports, as they write them.
    static let foreignFormats: [(String, [String])] = [
        ("bitwarden-json", [
            #"{"encrypted":false,"folders":[],"items":[{"id":"1","type":1,"name":"Example","notes":"n","login":{"username":"ada","password":"pw","totp":"otpauth://totp/x?secret=ABC","uris":[{"match":null,"uri":"https://example.com/login"}]}},{"id":"2","type":2,"name":"Note","notes":"text"},{"id":"3","type":3,"name":"Card"}]}"#,
        ]),
        ("bitwarden-csv", [
            "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n,1,login,Example,\"multi\nline\",,0,\"https://example.com,https://b.example\",ada,pw,JBSWY3DP\n,,note,Note,text,,0,,,,\n",
        ]),
        ("keepassxc-csv", [
            "\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\",\"TOTP\",\"Icon\",\"Last Modified\",\"Created\"\n\"Root\",\"Example\",\"ada\",\"p\"\"w\",\"https://example.com:8443/x\",\"n\",\"\",\"0\",\"2024-01-01T00:00:00Z\",\"2024-01-01T00:00:00Z\"\n",
        ]),
        ("chrome-csv", ["name,url,username,password,note\nexample.com,https://example.com/,ada,pw,\nlocal,,bob,secret,a note\n"]),
        ("firefox-csv", [
            "\"url\",\"username\",\"password\",\"httpRealm\",\"formActionOrigin\",\"guid\",\"timeCreated\",\"timeLastUsed\",\"timePasswordChanged\"\n\"https://example.com\",\"ada\",\"pw\",\"realm\",\"\",\"{1}\",\"1700000000000\",\"1700000000000\",\"1700000000000\"\n",
        ]),
    ]

    // MARK: kv set

    /// `kv set --json` (and the other type flags), then the store's own encoding of the value.
    static var keyValueText: FuzzTarget {
        FuzzTarget(
            "kv-set-json", seeds: [#"{"a":[1,2.5,"x",true,{"b":"c"}],"n":-9007199254740993}"#, #"[1e300,-0.5,"é",false]"#, #""text""#].map { Array($0.utf8) },
            isJSON: true, clearErrors: { error in String(describing: type(of: error)) == "ValidationError" }
        ) { bytes in
            let value = try OutsideInput.keyValue(String(decoding: bytes, as: UTF8.self), type: "json")
            try checkStorable(value)
        }
    }

    /// A value the store takes encodes and decodes back as itself.
    static func checkStorable(_ value: KeyValue) throws(FuzzCheck.Failure) {
        guard value.nestingDepth <= KeyValue.maximumNestingDepth else { return }
        let decoded = try? KeyValue(canonicalEncoding: value.canonicalEncoding)
        try FuzzCheck.require(decoded == value, "a value does not decode back from its canonical encoding")
    }
}
