import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Collections clients create (decision 0141) through Python's secretstorage: created, labelled,
/// named by aliases, persisted across a restart of the service, deleted; their signals; bad
/// requests answered with D-Bus errors.
@Suite(.serialized)
struct CollectionTests {
    static let script = PythonClientTests.script.deletingLastPathComponent().appendingPathComponent("collections_client.py")

    @Test func createdCollectionsPersistAcrossARestartAndAreDeleted() async throws {
        let python = try await PythonClientTests.virtualEnvironment()
        try await PrivateDesktop.with { desktop in
            let monitor = try await desktop.monitor()
            let created = try await desktop.run(python, [Self.script.path, "create"])
            #expect(created.status == 0, "\(created.stdout)\n\(created.stderr)")
            try await monitor.waitForOutput(containing: "org.freedesktop.Secret.Service.CollectionCreated (objectpath '/org/freedesktop/secrets/collection/work_secrets'")
            try await monitor.waitForOutput(containing: "org.freedesktop.Secret.Service.CollectionChanged (objectpath '/org/freedesktop/secrets/collection/work_secrets'")
            try await monitor.waitForOutput(containing: "org.freedesktop.Secret.Collection.ItemCreated (objectpath '/org/freedesktop/secrets/collection/work_secrets/")

            try await desktop.restartService()
            let after = try await desktop.monitor()
            let checked = try await desktop.run(python, [Self.script.path, "after-restart"])
            #expect(checked.status == 0, "\(checked.stdout)\n\(checked.stderr)")
            try await after.waitForOutput(containing: "org.freedesktop.Secret.Service.CollectionDeleted (objectpath '/org/freedesktop/secrets/collection/work_secrets'")
        }
    }

    @Test func badCollectionRequestsGetDBusErrors() async throws {
        try await PrivateDesktop.with { desktop in
            let wrongLabel = try await desktop.call(
                "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.CreateCollection", ["{'org.freedesktop.Secret.Collection.Label': <true>}", "''"])
            #expect(wrongLabel.stderr.contains("InvalidArgs"), "\(wrongLabel.stderr)")
            let badAlias = try await desktop.call(
                "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.SetAlias", ["'no/slashes'", "objectpath '/org/freedesktop/secrets/collection/login'"])
            #expect(badAlias.stderr.contains("InvalidArgs"), "\(badAlias.stderr)")
            let sessionAlias = try await desktop.call(
                "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.SetAlias", ["'mine'", "objectpath '/org/freedesktop/secrets/collection/session'"])
            #expect(sessionAlias.stderr.contains("NotSupported"), "\(sessionAlias.stderr)")
            let missing = try await desktop.call(
                "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.SetAlias", ["'mine'", "objectpath '/org/freedesktop/secrets/collection/nope'"])
            #expect(missing.stderr.contains("NoSuchObject"), "\(missing.stderr)")
            let login = try await desktop.call("/org/freedesktop/secrets/collection/login", "org.freedesktop.Secret.Collection.Delete", [])
            #expect(login.stderr.contains("NotSupported"), "\(login.stderr)")
            let wrongProperty = try await desktop.call(
                "/org/freedesktop/secrets/collection/login", "org.freedesktop.DBus.Properties.Set",
                ["org.freedesktop.Secret.Collection", "Label", "<@ay []>"])
            #expect(wrongProperty.stderr.contains("InvalidArgs"), "\(wrongProperty.stderr)")

            // An alias set with SetAlias, read back, and the collection's new label.
            let created = try await desktop.call(
                "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.CreateCollection",
                ["{'org.freedesktop.Secret.Collection.Label': <'Ünïcode & Co'>}", "''"])
            #expect(created.stdout.contains("/org/freedesktop/secrets/collection/_n_code___co"), "\(created.stdout) \(created.stderr)")
            let aliased = try await desktop.call(
                "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.SetAlias", ["'default'", "objectpath '/org/freedesktop/secrets/collection/_n_code___co'"])
            #expect(aliased.status == 0, "\(aliased.stderr)")
            let read = try await desktop.call("/org/freedesktop/secrets", "org.freedesktop.Secret.Service.ReadAlias", ["'default'"])
            #expect(read.stdout.contains("/org/freedesktop/secrets/collection/_n_code___co"), "\(read.stdout)")
            let label = try await desktop.call(
                "/org/freedesktop/secrets/aliases/default", "org.freedesktop.DBus.Properties.Get", ["org.freedesktop.Secret.Collection", "Label"])
            #expect(label.stdout.contains("Ünïcode & Co"), "\(label.stdout) \(label.stderr)")
            // Still serving.
            #expect(try await desktop.secretTool(["store", "--label=ok", "k", "v"], input: "fine").status == 0)
            #expect(try await desktop.secretTool(["lookup", "k", "v"]).stdout == "fine")
        }
    }
}

extension PrivateDesktop {
    /// `gdbus monitor` of the service, line-buffered, once it watches the service's name;
    /// stopped with the desktop.
    func monitor() async throws -> RunningProcess {
        let monitor = try start(
            "/usr/bin/stdbuf", ["-oL", "/usr/bin/gdbus", "monitor", "--session", "--dest", "org.freedesktop.secrets"], stopWith: SIGKILL)
        try await monitor.waitForOutput(containing: "is owned by")
        return monitor
    }

    /// One `gdbus call` to the service.
    func call(_ path: String, _ method: String, _ arguments: [String]) async throws -> RunningProcess.Result {
        try await run("/usr/bin/gdbus", ["call", "--session", "--dest", "org.freedesktop.secrets", "--object-path", path, "--method", method] + arguments)
    }
}
