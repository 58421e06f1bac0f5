import Foundation
import Logging
import SyncClient
import SyncCore
import SyncProtocol
import Testing

@Suite(.serialized)
struct RejectionTests {
    @Test func aBlobThatFailsToOpenIsRejectedReportedAndNeverApplied() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "good", account: "max", password: "fine")
            try await a.sync()
            // A device token holder (or the server) uploads bytes that are no blob of this account.
            try await ClientSession.with(keychainPath: a.keychainPath, logger: Logger(label: "test")) { session in
                let forged = UploadItem(
                    id: ItemID(String(repeating: "ab", count: 32)), vector: VersionVector().incremented(for: session.enrolment.device),
                    deleted: false, blob: Base64Bytes([1] + [UInt8](repeating: 0x5a, count: 60)))
                try await session.connection.send(.POST, "/v1/zones/keychain/items", body: UploadRequest(cursor: 0, items: [forged]))
            }
            let result = try await b.syncClient(["sync"])
            #expect(result.status != 0)
            #expect(result.stderr.contains("rejected"))
            #expect(try await b.password(service: "good", account: "max") == "fine")
            let status = try await b.syncClient(["status", "--json"])
            let problems = (try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["problems"] as? [Any]
            #expect(problems?.count == 1)
        }
    }
}
