import Foundation
import Testing

/// A Secret Service session belongs to the client that opened it (its unique bus name): another
/// client can neither read secrets through it nor close it, and it is freed when its client
/// leaves the bus.
@Suite(.serialized)
struct SessionOwnershipTests {
    static let script = PythonClientTests.script.deletingLastPathComponent().appendingPathComponent("session_owner.py")

    @Test func anotherClientCannotUseOrCloseASessionAndItGoesWithItsClient() async throws {
        let python = try await PythonClientTests.virtualEnvironment()
        try await PrivateDesktop.with { desktop in
            #expect(try await desktop.secretTool(["store", "--label=ok", "k", "v"], input: "fine").status == 0)
            let release = desktop.directory.appendingPathComponent("release-\(UUID().uuidString)")
            let owner = try desktop.start(python, [Self.script.path, release.path])
            try await owner.waitForOutput(containing: "/org/freedesktop/secrets/session/")
            let words = owner.stdout.split(separator: "\n").first?.split(separator: " ").map(String.init) ?? []
            try #require(words.count == 2, "\(owner.stdout)")
            let (session, item) = (words[0], words[1])

            // Each gdbus call is another client.
            let read = try await desktop.call(item, "org.freedesktop.Secret.Item.GetSecret", ["objectpath '\(session)'"])
            #expect(read.status != 0 && read.stderr.contains("NoSession"), "\(read.stdout)\(read.stderr)")
            let close = try await desktop.call(session, "org.freedesktop.Secret.Session.Close", [])
            #expect(close.status != 0 && close.stderr.contains("NoSession"), "\(close.stdout)\(close.stderr)")
            #expect(try await Self.isSession(session, desktop))

            _ = FileManager.default.createFile(atPath: release.path, contents: nil)
            let ended = try await owner.waitForExit(timeout: .seconds(60))
            #expect(ended.status == 0 && ended.stdout.contains("ok"), "\(ended.stdout)\(ended.stderr)")
            let deadline = ContinuousClock.now + .seconds(30)
            while try await Self.isSession(session, desktop), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(try await !Self.isSession(session, desktop), "the session outlived its client")
        }
    }

    /// Whether the service still has a session at `path` (its introspection names the interface).
    private static func isSession(_ path: String, _ desktop: PrivateDesktop) async throws -> Bool {
        try await desktop.call(path, "org.freedesktop.DBus.Introspectable.Introspect", []).stdout.contains("org.freedesktop.Secret.Session")
    }
}
