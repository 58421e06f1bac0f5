import Foundation
import SyncCore
import SyncProtocol
import Testing

/// The upload a device writes by hand (``WireJSONWritable``), and the server's answer to it, are the
/// documents the shared encoder makes, byte for byte, so each end reads them as any other body.
@Suite("An upload's JSON written by hand")
struct UploadJSONTests {
    static let uploads: [UploadRequest] = [
        UploadRequest(cursor: 0, items: []),
        UploadRequest(cursor: 42, items: [
            UploadItem(id: "a/b+c=", vector: Self.vector(["laptop": 3, "Desk-2": 1, "phone": .max]), deleted: false, blob: [1, 2, 3, 250]),
            UploadItem(id: "x", vector: VersionVector(), deleted: true, blob: []),
        ]),
        UploadRequest(cursor: .max, items: [
            UploadItem(id: ItemID("quote\" back\\slash \n\t\u{1} é ☃"), vector: Self.vector(["d": 1]), deleted: false,
                       blob: Base64Bytes(Array(0...255))),
        ]),
    ]

    static func vector(_ counters: [String: UInt64]) -> VersionVector {
        VersionVector(Dictionary(uniqueKeysWithValues: counters.map { (DeviceID($0.key)!, $0.value) }))
    }

    @Test(arguments: uploads)
    func isWhatTheEncoderWrites(_ upload: UploadRequest) throws {
        let encoded = try WireCoding.makeEncoder().encode(upload)
        #expect(String(decoding: upload.wireJSON, as: UTF8.self) == String(decoding: encoded, as: UTF8.self))
        #expect(try WireCoding.makeDecoder().decode(UploadRequest.self, from: Data(upload.wireJSON)) == upload)
    }

    static let answers: [UploadResponse] = [
        UploadResponse(results: [], latestSequence: 0),
        UploadResponse(results: [
            .init(id: "a/b+c=", outcome: .applied, sequence: 12), .init(id: "x", outcome: .stale, sequence: nil),
            .init(id: ItemID("quote\" \\ \u{7f} é"), outcome: .conflictKept, sequence: .max),
        ], latestSequence: .max),
    ]

    @Test(arguments: answers)
    func answerIsWhatTheEncoderWrites(_ answer: UploadResponse) throws {
        let encoded = try WireCoding.makeEncoder().encode(answer)
        #expect(String(decoding: answer.wireJSON, as: UTF8.self) == String(decoding: encoded, as: UTF8.self))
        #expect(try WireCoding.makeDecoder().decode(UploadResponse.self, from: Data(answer.wireJSON)) == answer)
    }
}
