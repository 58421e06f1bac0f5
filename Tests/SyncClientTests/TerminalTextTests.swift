import Foundation
import Logging
import ProcessTesting
import SyncClient
import Testing

/// Server-provided text reaches a terminal or a log only without control characters.
@Suite(.serialized)
struct TerminalTextTests {
    static let hostile = "bad\u{1B}]0;owned\u{07}\u{1B}[2J\u{9B}31m\u{202E}gnp.exe\r\nfake line"

    @Test func controlAndFormatCharactersAreReplacedAndLongTextIsCut() {
        let clean = TerminalText.sanitized(Self.hostile)
        #expect(!clean.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0 == "\u{202E}" })
        #expect(clean.hasPrefix("bad\u{FFFD}]0;owned"))
        #expect(TerminalText.sanitized("plain name é ✓") == "plain name é ✓")
        #expect(TerminalText.sanitized(String(repeating: "x", count: 600)).count == TerminalText.defaultLimit + 1)
    }

    @Test func aServersErrorMessageReachesStderrWithoutEscapeSequences() async throws {
        let body = try String(decoding: JSONSerialization.data(withJSONObject: [
            "error": ["code": "weird\u{1B}[1m", "message": Self.hostile],
        ]), as: UTF8.self)
        let server = try await HostileServer(status: "400 Bad Request", body: body)
        try await withTemporaryDirectory { directory in
            let device = TestDevice(name: "a", in: directory)
            let result = try await device.syncClient([
                "enroll", "--server", "http://127.0.0.1:\(server.port)", "--insecure-http", "--account", "eve", "--create",
                "--kdf-log-n", "15",
            ])
            #expect(result.status != 0)
            #expect(result.stderr.contains("owned"), "\(result.stderr)")
            #expect(!result.stderr.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" || $0 == "\u{9B}" || $0 == "\u{202E}" })
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        }
        await server.stop()
    }
}
