#if canImport(Glibc)
import Glibc
private let systemWrite = Glibc.write
#elseif canImport(Musl)
import Musl
private let systemWrite = Musl.write
#elseif canImport(Darwin)
import Darwin
private let systemWrite = Darwin.write
#endif

/// Standard output and error written with write(2): no FileHandle (and so no Foundation) on the
/// hot path of a one-shot process.
enum StandardStream {
    case output, error

    /// Writes all of `bytes`, retrying on interruption and waiting while a non-blocking stream
    /// is full; a closed stream drops the rest.
    static func write(_ bytes: [UInt8], to stream: StandardStream) {
        let descriptor: Int32 = stream == .output ? 1 : 2
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = systemWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                    // A pipe the parent made non-blocking, full until it reads: wait for room
                    // rather than end the output there (a long `-w` value was cut at 64 KiB).
                    var room = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&room, 1, -1)
                    continue
                }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}
