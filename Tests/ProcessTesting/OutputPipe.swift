import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child's standard output or error: a pipe whose ends are close-on-exec, read to its end by a
/// thread of its own.
///
/// Close-on-exec matters because tests start processes from many threads at once: a pipe made
/// without it is inherited by every other child started before the parent closes its write end,
/// and a long-lived one (a server, a daemon) then holds it open, so the reader never sees the end
/// and a reader that stops waiting loses the tail of the output. Only the child gets this write
/// end, through the `dup2` that makes it its standard output (which clears the flag there).
public final class OutputPipe: Sendable {
    /// The end handed to the child; closed here once the child has it (``childStarted()``).
    public let writeEnd: FileHandle
    private final class Collected: Sendable {
        let state = Mutex<(bytes: [UInt8], ended: Bool)>(([], false))
        let ended = DispatchSemaphore(value: 0)
    }

    private let collected = Collected()

    public init() throws {
        let (readEnd, write) = try Self.makePipe()
        writeEnd = FileHandle(fileDescriptor: write, closeOnDealloc: false)
        Thread.detachNewThread { [collected] in
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                if count > 0 {
                    collected.state.withLock { $0.bytes += buffer[0..<count] }
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            close(readEnd)
            collected.state.withLock { $0.ended = true }
            collected.ended.signal()
        }
    }

    /// A pipe whose two ends (read, write) are close-on-exec, for a test that reads it itself.
    public static func makePipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard pipe2(&ends, O_CLOEXEC) == 0 else { throw ProcessFailure("pipe2 failed (errno \(errno))") }
        return (ends[0], ends[1])
    }

    /// glibc's pipe2(2), which Swift's Glibc module does not export (it is a GNU extension): both
    /// ends are made close-on-exec atomically, so no child started meanwhile can inherit them.
    private static let pipe2: @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32 = {
        guard let symbol = dlsym(nil /* RTLD_DEFAULT on glibc */, "pipe2") else {
            fatalError("pipe2 is missing from the C library")
        }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32).self)
    }()

    /// Closes this process's copy of the write end: from then on the pipe ends when the child
    /// (and whatever it handed its output to) has ended.
    public func childStarted() {
        try? writeEnd.close()
    }

    /// What arrived so far.
    public var bytes: [UInt8] { collected.state.withLock { $0.bytes } }
    public var text: String { String(decoding: bytes, as: UTF8.self) }
    public var hasEnded: Bool { collected.state.withLock { $0.ended } }

    /// Blocks until the pipe has ended or `timeout` passed; true when it ended.
    public func waitForEnd(timeout: Duration) -> Bool {
        if hasEnded { return true }
        let milliseconds = Int(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        guard collected.ended.wait(timeout: .now() + .milliseconds(milliseconds)) == .success else { return false }
        collected.ended.signal()  // for any later waiter
        return true
    }
}

/// A failure of the machinery around a test's child process (not of the product under test).
public struct ProcessFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
