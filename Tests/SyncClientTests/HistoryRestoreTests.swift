import Testing

/// `keychain history --restore` with the binaries: the restored value is a new local write, which
/// syncs, and the value it replaced goes into the history.
@Suite(.serialized)
struct HistoryRestoreTests {
    @Test func aRestoredHistoryVersionSyncsAsANewWrite() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "undo", account: "gus", password: "first")
            try await b.add(service: "undo", account: "gus", password: "second")
            try await a.sync()
            try await b.sync()
            let listing = try await b.keychain(["history", "-s", "undo", "-a", "gus", "--sync", "-w"])
            // The first line is the header row.
            let rows = listing.stdout.split(separator: "\n")
            #expect(rows.first?.hasPrefix("VERSION\t") == true)
            let number = try #require(rows.dropFirst().first?.split(separator: "\t").first.map(String.init))
            #expect(listing.stdout.hasSuffix("\tfirst\n"))
            #expect(try await b.keychain(["history", "-s", "undo", "-a", "gus", "--sync", "--restore", number]).status == 0)
            #expect(try await b.password(service: "undo", account: "gus") == "first")
            try await b.sync()
            try await a.sync()
            #expect(try await a.password(service: "undo", account: "gus") == "first")
            let after = try await b.keychain(["history", "-s", "undo", "-a", "gus", "--sync", "-w"])
            #expect(after.stdout.hasSuffix("\tsecond\n"))
        }
    }
}
