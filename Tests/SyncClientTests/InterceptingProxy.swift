import Foundation
import ProcessTesting

/// A man in the middle holding a second certificate for the server's name from the server's own
/// CA (a mis-issued certificate), as a real process (Python's standard library) on 127.0.0.1.
/// It passes a connection through to the real server as raw TCP while its pass count lasts (all
/// of them until ``intercept(afterPassing:)``); every other connection it ends itself with its own
/// certificate, and records what the client sent over it (up to the end of an HTTP request head).
final class InterceptingProxy: Sendable {
    /// One connection the proxy ended itself.
    struct Interception: Decodable, Sendable {
        /// The protocol ALPN chose, `none` when the client offered none (AsyncHTTPClient offers
        /// `http/1.1`; the push channel offers none): which of the client's connections it was.
        let alpn: String
        /// Whether the TLS handshake completed on the proxy's side.
        let handshake: Bool
        /// What the client sent after the handshake, as Latin-1 text.
        let sent: String
    }

    let port: Int
    private let process: ChildProcess
    private let passFile: URL

    /// Starts the proxy in front of `upstreamPort`, presenting `chain` (PEM, leaf first) and `key`.
    init(upstreamPort: Int, chain: String, key: String, in directory: URL) async throws {
        let script = directory.appendingPathComponent("intercepting_proxy.py")
        try Self.source.write(to: script, atomically: true, encoding: .utf8)
        passFile = directory.appendingPathComponent("intercept-pass")
        try "all".write(to: passFile, atomically: true, encoding: .utf8)
        process = try ChildProcess(URL(fileURLWithPath: "/usr/bin/python3"), [script.path, String(upstreamPort), chain, key, passFile.path])
        // The whole line, its newline included: a line read in part would give no port.
        try await process.waitForOutput(containing: "\n")
        guard let line = process.stdout.split(separator: "\n").first(where: { $0.hasPrefix("listening ") }),
            let port = Int(line.dropFirst("listening ".count))
        else { throw TestFailure("the proxy printed no port: \(process.stdout) \(process.stderr)") }
        self.port = port
    }

    /// From now on the proxy passes `count` more connections through, then ends every other one
    /// itself.
    func intercept(afterPassing count: Int) throws {
        try String(count).write(to: passFile, atomically: true, encoding: .utf8)
    }

    /// The connections the proxy ended itself so far.
    func interceptions() throws -> [Interception] {
        guard let text = try? String(contentsOf: URL(fileURLWithPath: passFile.path + ".log"), encoding: .utf8) else { return [] }
        return try text.split(separator: "\n").map { try JSONDecoder().decode(Interception.self, from: Data($0.utf8)) }
    }

    func stop() { process.stop() }

    private static let source = #"""
        import json, os, socket, ssl, sys, threading

        UPSTREAM, CHAIN, KEY, PASS_FILE = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
        lock = threading.Lock()

        def passes():
            with lock:
                with open(PASS_FILE) as f:
                    text = f.read().strip()
                if text == "all":
                    return True
                left = int(text)
                if left <= 0:
                    return False
                with open(PASS_FILE + ".tmp", "w") as f:
                    f.write(str(left - 1))
                os.replace(PASS_FILE + ".tmp", PASS_FILE)
                return True

        def record(entry):
            with lock:
                with open(PASS_FILE + ".log", "a") as f:
                    f.write(json.dumps(entry) + "\n")

        def pipe(source, sink):
            try:
                while True:
                    data = source.recv(65536)
                    if not data:
                        break
                    sink.sendall(data)
            except OSError:
                pass
            for s in (source, sink):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(CHAIN, KEY)
        context.set_alpn_protocols(["http/1.1"])

        def intercept(client):
            client.settimeout(20)
            try:
                tls = context.wrap_socket(client, server_side=True)
            except (ssl.SSLError, OSError):
                record({"alpn": "none", "handshake": False, "sent": ""})
                client.close()
                return
            alpn = tls.selected_alpn_protocol() or "none"
            sent = b""
            try:
                while b"\r\n\r\n" not in sent:
                    data = tls.recv(65536)
                    if not data:
                        break
                    sent += data
            except (ssl.SSLError, OSError):
                pass
            record({"alpn": alpn, "handshake": True, "sent": sent.decode("latin-1")})
            try:
                tls.close()
            except OSError:
                pass

        def handle(client):
            if passes():
                upstream = socket.create_connection(("127.0.0.1", UPSTREAM))
                threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
                threading.Thread(target=pipe, args=(upstream, client), daemon=True).start()
            else:
                intercept(client)

        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        print("listening %d" % listener.getsockname()[1], flush=True)
        while True:
            connection, _ = listener.accept()
            threading.Thread(target=handle, args=(connection,), daemon=True).start()
        """#
}
