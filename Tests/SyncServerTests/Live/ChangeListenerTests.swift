import Foundation
import SyncProtocol
import SyncServer
import Testing

@Suite("Change listener service")
struct ChangeListenerTests {
    @Test(arguments: Backend.all)
    func failingListenerIsRestartedWhileTheServerKeepsServing(_ backend: Backend) async throws {
        try await backend.withStorage(runningServices: false) { real in
            let storage = FailingListenerStorage(real, failures: 2)
            let api = TestAPI(storage: storage)
            try await api.live { client, port in
                let token = try await client.enroll("alice")
                _ = try await client.upload([APIClient.item("a", ["laptop": 1])], token: token)
                #expect(try await client.changes(token: token).decode(ChangesResponse.self).items.map(\.id) == ["a"])
                let message = try await PushTests.firstMessage(port: port, token: token) {
                    try await PushTests.uploadRepeatedly(client, token: token, zone: "keychain")
                }
                #expect(message?.zone == "keychain")
                #expect(storage.listenCalls == 3)
            }
        }
    }
}
