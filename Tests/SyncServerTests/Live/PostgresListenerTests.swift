import Foundation
import PostgresNIO
import SyncProtocol
import SyncServer
import Testing

/// The connection pool is the application's service, apart from the change listener.
@Suite("PostgreSQL listener and pool", .postgresCluster)
struct PostgresListenerTests {
    @Test func serverKeepsServingAndPushingWhenTheListenerLosesItsConnection() async throws {
        try await PostgresTestCluster.withFreshDatabase { location in
            try await PostgresTestCluster.withStorage(location) { _ in }
            // Not running: the live application runs the pool as one of its services.
            let api = TestAPI(storage: PostgresTestCluster.makeStorage(location))
            try await api.live { client, port in
                let token = try await client.enroll("alice")
                try await PostgresStorageTests.waitForListener(location)
                let terminated = try await PostgresTestCluster.withClient(location) { admin in
                    try await admin.query(
                        """
                        SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                        WHERE datname = \(location.database) AND query LIKE 'LISTEN%'
                        """
                    ).decode(Int.self).elements().first ?? 0
                }
                #expect(terminated == 1)
                // The pool's other connections serve on; the listener reconnects and push resumes.
                _ = try await client.upload([APIClient.item("a", ["laptop": 1])], token: token)
                #expect(try await client.changes(token: token).decode(ChangesResponse.self).items.map(\.id) == ["a"])
                let message = try await PushTests.firstMessage(port: port, token: token) {
                    try await PushTests.uploadRepeatedly(client, token: token, zone: "kv-prefs")
                }
                #expect(message?.zone == "kv-prefs")
            }
        }
    }
}
