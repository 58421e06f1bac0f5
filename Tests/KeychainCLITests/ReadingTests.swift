import Foundation
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
        let process = Process()
        process.executableURL = KeychainProcess.binary
        process.arguments = ["find-generic-password", "-a", "alice", "-s", "long", "-w", "--keychain", keychain.path]
        process.environment = ["HOME": keychain.directory.path]
        let output = Pipe()
        let writeEnd = output.fileHandleForWriting.fileDescriptor
        #expect(fcntl(writeEnd, F_SETFL, fcntl(writeEnd, F_GETFL) | O_NONBLOCK) == 0)
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try output.fileHandleForWriting.close()
        // Read only once the child has filled the pipe (or ended): from then on a write fails
        // with EAGAIN until the pipe drains, which is the case under test.
        let readEnd = output.fileHandleForReading.fileDescriptor
        let capacity = fcntl(readEnd, 1032 /* F_GETPIPE_SZ, not exported to Swift */)
        let deadline = ContinuousClock.now + .seconds(60)
        var queued: Int32 = 0
        while process.isRunning, ioctl(readEnd, UInt(FIONREAD), &queued) == 0, queued < capacity, ContinuousClock.now < deadline {
            usleep(1_000)
        }
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(printed.count == password.utf8.count + 1)
    }
}
