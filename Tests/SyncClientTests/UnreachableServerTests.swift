import Foundation
import ProcessTesting
import Testing

/// A server that cannot be reached gets a clear error from every command and a daemon that backs
/// off, never a trap (the certificate probe once left its promise unfulfilled when the connection
/// failed).
@Suite struct UnreachableServerTests {
    @Test func enrollingAgainstAClosedPortFailsWithAClearError() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory.appendingPathComponent("server"))
            let pin = server.pin ?? ""
            try await server.kill9()
            // Not the killed server's port: a server another test starts meanwhile may take it.
            let port = try RefusingPort()
            let device = TestDevice(name: "new", in: directory)
            let result = try await device.syncClient([
                "enroll", "--server", "https://127.0.0.1:\(port.number)", "--account", "nobody", "--create", "--kdf-log-n", "15", "--pin", pin,
            ])
            #expect(result.status == 1, "exit \(result.status): \(result.stderr)")
            #expect(result.stderr.contains("cannot connect"), "\(result.stderr)")
            withExtendedLifetime(port) {}
        }
    }

    @Test func anEnrolledDeviceFailsCleanlyAndItsDaemonBacksOffWhileTheServerIsDown() async throws {
        try await withAccount(devices: 1) { server, devices in
            let device = devices[0]
            try await device.add(service: "s", account: "a", password: "p")
            try await server.kill9()
            // Held, so that no server another test starts meanwhile takes the killed one's port.
            let port = try RefusingPort(number: server.port)
            defer { withExtendedLifetime(port) {} }
            for command in [["sync"], ["devices"]] {
                let result = try await device.syncClient(command)
                #expect(result.status == 1, "\(command): exit \(result.status): \(result.stderr)")
                #expect(!result.stderr.isEmpty, "\(command) printed no error")
            }
            let daemon = try ChildProcess(Products.syncClient, ["run", "--keychain", device.keychainPath], environment: ["LOG_LEVEL": "debug"])
            defer { daemon.stop() }
            // Three failed attempts: the daemon says so once, retries, and backs off in between
            // (each retry is a debug line, decision 0261).
            try await eventually(timeout: .seconds(60), "the daemon retries") {
                (daemon.stdout + daemon.stderr).components(separatedBy: "server still not answering; retrying").count > 3 || !daemon.isRunning
            }
            #expect(daemon.isRunning, "the daemon stopped: \(daemon.stdout)\(daemon.stderr)")
            #expect(daemon.stderr.components(separatedBy: "server unreachable; retrying until it answers").count == 2, "\(daemon.stderr)")
        }
    }
}

/// A TCP port on 127.0.0.1 bound and not listening while the value lives: a connection to it is
/// refused, and no other process can take it meanwhile (as one may take a killed server's port).
private final class RefusingPort {
    let number: Int
    private let descriptor: Int32

    /// - Parameter number: The port to hold (0: any free one), e.g. a killed server's, whose
    ///   closed connections may wait in TIME_WAIT (bound with `SO_REUSEADDR`).
    init(number requested: Int = 0) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.descriptor = descriptor
        var reuse: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(requested).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard descriptor >= 0, bound else {
            close(descriptor)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        number = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }
}
