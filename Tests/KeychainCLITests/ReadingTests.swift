import Foundation
import ProcessTesting
import Testing

@Suite struct ReadingTests {
    /// A read opens and closes the keychain without a write transaction: it does not contend for
    /// the write lock with a running daemon, and pays no fdatasync.
    @Test func findingAPasswordLeavesEveryFileByteForByteUnchanged() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        try keychain.run(["add-generic-password", "-a", "alice", "-s", "mail", "-w", "pw", "--sync"])
        let find = ["find-generic-password", "-a", "alice", "-s", "mail", "--sync", "yes", "-w"]
        #expect(try keychain.run(find).text == "pw\n")
        let files = [keychain.path, keychain.path + "-wal"]
        let before = files.map { FileManager.default.contents(atPath: $0) }
        #expect(before.allSatisfy { $0 != nil })
        #expect(try keychain.run(find).text == "pw\n")
        #expect(files.map { FileManager.default.contents(atPath: $0) } == before)
    }

    /// A parent may hand `keychain` a non-blocking pipe as its standard output. Once the pipe is
    /// full a write fails with EAGAIN; the output then ended there (at 64 KiB) with status 0.
    @Test func aLongPasswordReachesANonBlockingPipeWhole() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let password = String(repeating: "p", count: 100_000)  // over 64 KiB, the usual pipe capacity
        try keychain.run(["add-generic-password", "-a", "alice", "-s", "long", "-w", password])
        // Close-on-exec: no child another test starts meanwhile can hold the write end open.
        let ends = try OutputPipe.makePipe()
        let writing = FileHandle(fileDescriptor: ends.write, closeOnDealloc: true)
        let reading = FileHandle(fileDescriptor: ends.read, closeOnDealloc: true)
        #expect(fcntl(ends.write, F_SETFL, fcntl(ends.write, F_GETFL) | O_NONBLOCK) == 0)
        let process = try SpawnedProcess(
            KeychainProcess.binary.path, ["find-generic-password", "-a", "alice", "-s", "long", "-w", "--keychain", keychain.path],
            environment: ["HOME": keychain.directory.path], standardOutput: ends.write
        )
        try writing.close()
        // Read only once the child has filled the pipe (or ended): from then on a write fails
        // with EAGAIN until the pipe drains, which is the case under test.
        let readEnd = ends.read
        let capacity = fcntl(readEnd, 1032 /* F_GETPIPE_SZ, not exported to Swift */)
        let deadline = ContinuousClock.now + .seconds(60)
        var queued: Int32 = 0
        while process.isRunning, ioctl(readEnd, UInt(FIONREAD), &queued) == 0, queued < capacity, ContinuousClock.now < deadline {
            usleep(1_000)
        }
        let printed = reading.readDataToEndOfFile()
        #expect(process.waitForExit(timeout: .seconds(60)) == 0)
        #expect(printed.count == password.utf8.count + 1)
    }
}
