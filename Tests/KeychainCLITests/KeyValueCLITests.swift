import Foundation
import GRDB
import Testing

@Suite struct KeyValueCLITests {
    /// `keychain kv --store app VERB ARGUMENTS --keychain PATH`.
    func kv(_ keychain: KeychainProcess, _ verb: String, _ arguments: [String]) throws -> KeychainProcess.Output {
        try keychain.run(["kv", "--store", "app", verb] + arguments)
    }

    /// `keychain kv --store app VERB --keychain PATH -- ARGUMENTS`: takes any key or value.
    func kvEscaped(_ keychain: KeychainProcess, _ verb: String, _ arguments: [String]) throws -> KeychainProcess.Output {
        try keychain.run(["kv", "--store", "app", verb, "--keychain", keychain.path, "--"] + arguments, keychainOption: false)
    }

    static let typed: [(flags: [String], input: String, printed: String, json: String)] = [
        ([], "plain text", "plain text", #"{"string":"plain text"}"#),
        (["--int"], "-9223372036854775808", "-9223372036854775808", #"{"int":-9223372036854775808}"#),
        (["--int"], "42", "42", #"{"int":42}"#),
        (["--double"], "-2.5", "-2.5", #"{"double":-2.5}"#),
        (["--bool"], "true", "true", #"{"bool":true}"#),
        (["--bool"], "false", "false", #"{"bool":false}"#),
        (["--data"], "AAEC/w==", "AAEC/w==", #"{"data":"AAEC/w=="}"#),
        (["--json"], #"[1,2.5,"x",false]"#, #"[1,2.5,"x",false]"#, #"{"array":[{"int":1},{"double":2.5},{"string":"x"},{"bool":false}]}"#),
        (["--json"], #"{"b":{"c":[]},"a":"é"}"#, #"{"a":"é","b":{"c":[]}}"#, #"{"dictionary":{"a":{"string":"é"},"b":{"dictionary":{"c":{"array":[]}}}}}"#),
    ]

    @Test(arguments: typed.indices)
    func everyTypeRoundTrips(index: Int) throws {
        let (flags, input, printed, json) = Self.typed[index]
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let set = try kv(keychain, "set", ["key"] + flags + [input])
        #expect(set.status == 0, "\(set.stderr)")
        let get = try kv(keychain, "get", ["key"])
        #expect(get.status == 0 && get.text == printed + "\n")
        #expect(try kv(keychain, "get", ["key", "--json"]).text == json + "\n")
        #expect(try kv(keychain, "list", ["--json"]).text == #"{"key":"# + json + "}\n")
    }

    @Test(arguments: PasswordVerbTests.awkwardValues)
    func anyKeyOrValueRoundTripsAfterDoubleDash(value: String) throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let key = value.isEmpty ? "k" : String(value.utf8.prefix(64))!
        let set = try kvEscaped(keychain, "set", [key, value])
        #expect(set.status == 0, "\(set.stderr)")
        let get = try kvEscaped(keychain, "get", [key])
        #expect(get.status == 0 && get.stdout == Data((value + "\n").utf8))
        #expect(try kvEscaped(keychain, "remove", [key]).status == 0)
        #expect(try kvEscaped(keychain, "get", [key]).status == 44)
    }

    @Test(arguments: ["-secret", "-", "a b -c --d", "-w", "-5", ""])
    func valuesBeginningWithADashNeedNoEscape(value: String) throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        #expect(try kv(keychain, "set", ["k", value]).status == 0)
        #expect(try kv(keychain, "get", ["k"]).stdout == Data((value + "\n").utf8))
    }

    @Test func exitCodesAndOneLineErrors() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        #expect(try kv(keychain, "set", ["other", "x"]).status == 0)
        #expect(try kv(keychain, "get", ["missing"]).status == 44)
        #expect(try kv(keychain, "remove", ["missing"]).status == 44)
        let tooLong = try kv(keychain, "set", [String(repeating: "k", count: 65), "v"])
        #expect(tooLong.status != 0 && tooLong.status != 44)
        #expect(tooLong.stderr.contains("65 bytes") && tooLong.stderr.split(separator: "\n").count == 1)
        for bad in [["--int", "1.5"], ["--bool", "maybe"], ["--data", "***"], ["--json", "null"], ["--int", "--bool", "1"]] {
            let refused = try kv(keychain, "set", ["k"] + bad)
            #expect(refused.status != 0 && refused.status != 44, "\(bad)")
            #expect(refused.stderr.split(separator: "\n").count == 1, "\(bad)")
        }
        #expect(try kv(keychain, "list", []).text == "other\tstring\tx\n")
        let noStore = try keychain.run(["kv", "get", "k"])
        #expect(noStore.status != 0 && noStore.status != 44)
    }

    @Test func aWriteOverTheStoreLimitIsRefusedWhole() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        // 11 values of 90,000 bytes fit in 1 MB (with their keys and headers); a 12th does not.
        let chunk = Data(count: 90_000).base64EncodedString()
        for index in 0..<11 {
            #expect(try kv(keychain, "set", ["k\(index)", "--data", chunk]).status == 0)
        }
        let before = try kv(keychain, "list", ["--json"]).stdout
        let refused = try kv(keychain, "set", ["k11", "--data", chunk])
        #expect(refused.status != 0 && refused.status != 44)
        #expect(refused.stderr.contains("1048576") && refused.stderr.split(separator: "\n").count == 1)
        #expect(try kv(keychain, "list", ["--json"]).stdout == before)
        #expect(try kv(keychain, "get", ["k11"]).status == 44)
    }

    @Test func storesAreSeparateAndLiveBesideTheKeychain() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        #expect(try keychain.run(["kv", "--store", "one", "set", "k", "1"]).status == 0)
        #expect(try keychain.run(["kv", "--store", "two", "set", "k", "2"]).status == 0)
        #expect(try keychain.run(["kv", "--store", "one", "get", "k"]).text == "1\n")
        #expect(try keychain.run(["kv", "--store", "two", "list"]).text == "k\tstring\t2\n")
        let database = (keychain.path as NSString).deletingLastPathComponent + "/keychain.kv.sqlite"
        #expect(FileManager.default.fileExists(atPath: database))
        // Without --keychain, $KEYCHAIN_PATH decides where the stores are.
        let viaEnvironment = try keychain.run(["kv", "--store", "one", "get", "k"], environment: ["KEYCHAIN_PATH": keychain.path], keychainOption: false)
        #expect(viaEnvironment.text == "1\n")
    }

    /// `nan`, `inf` and numbers beyond a double's range have no JSON form: refused where they are
    /// read (a usage error), the store unchanged. Before, they were stored and `kv list --json`
    /// then failed for the whole store.
    @Test(arguments: ["nan", "NaN", "inf", "-inf", "infinity", "1e400", "-1e400"])
    func aDoubleThatIsNotFiniteIsRefused(text: String) throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        #expect(try kv(keychain, "set", ["k", "--double", "2.5"]).status == 0)
        let database = (keychain.path as NSString).deletingPathExtension + ".kv.sqlite"
        let before = FileManager.default.contents(atPath: database)
        let refused = try kv(keychain, "set", ["k", "--double", text])
        #expect(refused.status == 64)
        #expect(refused.stderr == "keychain: the value is not a finite number (not nan, inf, or beyond ±1.8e308)\n")
        #expect(FileManager.default.contents(atPath: database) == before)
        #expect(try kv(keychain, "list", ["--json"]).text == #"{"k":{"double":2.5}}"# + "\n")
    }

    /// A JSON value nested deeper than the store takes (32 levels) is refused as it is read, before
    /// it is decoded: the decoder's cost grows with the square of the depth, and the fuzzing of
    /// `kv set --json` (decision 0267) found a 3 KB value nested 511 deep taking seconds before the
    /// store refused it. Brackets inside strings do not count.
    @Test(arguments: [33, 511, 5000])
    func aJSONValueNestedTooDeeplyIsRefusedAsItIsRead(depth: Int) throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        #expect(try kv(keychain, "set", ["k", "--json", "[1]"]).status == 0)
        let database = (keychain.path as NSString).deletingPathExtension + ".kv.sqlite"
        let before = FileManager.default.contents(atPath: database)
        for value in [String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth),
                      String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)] {
            let refused = try kv(keychain, "set", ["k", "--json", value])
            #expect(refused.status == 64)
            #expect(refused.stderr == "keychain: the value nests deeper than 32 levels\n")
        }
        #expect(FileManager.default.contents(atPath: database) == before)
        let inString = #"{"a":""# + String(repeating: "[{", count: 100) + #""}"#
        #expect(try kv(keychain, "set", ["k", "--json", inString]).status == 0)
    }

    /// A non-finite double an earlier build stored (written here into the database as it did)
    /// does not fail the listing: JSON shows it as the string the text form prints.
    @Test(arguments: [(UInt64(0x7FF8_0000_0000_0000), "nan"), (0x7FF0_0000_0000_0000, "inf"), (0xFFF0_0000_0000_0000, "-inf")])
    func aStoredDoubleThatIsNotFiniteIsListedAsAString(bits: UInt64, text: String) throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        #expect(try kv(keychain, "set", ["a", "--double", "1.5"]).status == 0)
        #expect(try kv(keychain, "set", ["b", "--json", "[1.5]"]).status == 0)
        #expect(try kv(keychain, "set", ["c", "text"]).status == 0)
        let nonFinite = [UInt8(3)] + withUnsafeBytes(of: bits.bigEndian) { Array($0) }
        let database = try DatabaseQueue(path: (keychain.path as NSString).deletingPathExtension + ".kv.sqlite")
        try database.write { db in
            try db.execute(sql: "UPDATE kv_value SET value = ? WHERE key = 'a'", arguments: [Data(nonFinite)])
            try db.execute(sql: "UPDATE kv_value SET value = ? WHERE key = 'b'", arguments: [Data([7, 0, 0, 0, 1] + nonFinite)])
        }
        try database.close()

        let json = try kv(keychain, "list", ["--json"])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.text == #"{"a":{"double":"\#(text)"},"b":{"array":[{"double":"\#(text)"}]},"c":{"string":"text"}}"# + "\n")
        #expect(try kv(keychain, "get", ["a", "--json"]).text == #"{"double":"\#(text)"}"# + "\n")
        #expect(try kv(keychain, "list", []).text == "a\tdouble\t\(text)\nb\tarray\t[\"\(text)\"]\nc\tstring\ttext\n")
    }
}
