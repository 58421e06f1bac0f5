import Foundation
import ProcessTesting
import Testing

/// The sync state file (`<keychain>.sync`) opens through `DurableSQLite`, which refuses a path that
/// is there and is not a regular file before SQLite opens it for writing (decision 0258). Before,
/// SQLite opened whatever was there (a device too) and a FIFO failed as "cannot open the sync
/// state file", naming neither the file nor what was wrong with it.
@Suite struct StateFileKindTests {
    @Test func aFIFOInPlaceOfTheStateFileIsRefusedAtOnceAndLeftAsItIs() async throws {
        try await withTemporaryDirectory { directory in
            let keychain = directory.appendingPathComponent("keychain.db").path
            let added = try await ChildProcess.run(Products.keychain, ["add-generic-password", "-a", "me", "-s", "svc", "-w", "pw", "--keychain", keychain])
            #expect(added.status == 0, "\(added.stderr)")
            let state = keychain + ".sync"
            try #require(mkfifo(state, 0o600) == 0)
            // Should anything wait on the FIFO, opening its ends here releases it.
            defer {
                for flags in [O_RDONLY, O_WRONLY] {
                    let end = open(state, flags | O_NONBLOCK | O_CLOEXEC)
                    if end >= 0 { close(end) }
                }
            }
            let before = FileManager.default.contents(atPath: keychain)
            let result = try await ChildProcess.run(Products.syncClient, ["status", "--keychain", keychain], timeout: .seconds(20))
            #expect(result.status != 0)
            #expect(result.stderr == "sync-client: the database file \(state) is not a regular file (a FIFO)\n")
            var status = stat()
            #expect(lstat(state, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO)
            #expect(FileManager.default.contents(atPath: keychain) == before)
        }
    }
}
