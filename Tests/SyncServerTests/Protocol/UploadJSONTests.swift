import Foundation
import SyncCore
import SyncProtocol
import Testing

/// The upload a device writes by hand (``WireJSONWritable``), and the server's answer to it, are the
/// documents the shared encoder makes, byte for byte, so each end reads them as any other body; the
/// server reads the upload by hand (``WireJSONReadable``) only when that reading is the decoder's.
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

    /// Read back by hand, unless an ID holds a character its JSON escapes: that one is the
    /// decoder's to read.
    @Test(arguments: uploads)
    func isReadBackByHand(_ upload: UploadRequest) throws {
        #expect(upload.wireJSON.withUnsafeBufferPointer(UploadRequest.init(wireJSON:)) == (Self.escapes(upload) ? nil : upload))
    }

    static func escapes(_ upload: UploadRequest) -> Bool {
        upload.items.contains { escapes($0.id) }
    }

    /// Whether an ID holds a character its JSON escapes (a quote, a backslash, a control
    /// character): a body with one is the decoder's to read.
    static func escapes(_ id: ItemID) -> Bool {
        id.rawValue.utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
    }

    /// Every text one byte away from an upload's (a byte changed to each character JSON gives a
    /// meaning, left out, or doubled): read by hand only as the decoder reads it, else left to it.
    @Test(arguments: uploads)
    func aTextReadByHandIsReadAsTheDecoderReadsIt(_ upload: UploadRequest) throws {
        var readByHand = 0
        for variant in Self.oneByteAway(upload.wireJSON) {
            guard let read = variant.withUnsafeBufferPointer(UploadRequest.init(wireJSON:)) else { continue }
            readByHand += 1
            #expect(try WireCoding.makeDecoder().decode(UploadRequest.self, from: Data(variant)) == read, "\(String(decoding: variant, as: UTF8.self))")
        }
        #expect(readByHand > 0 || Self.escapes(upload))
    }

    /// Every text one byte away from `json`: a byte changed to each character JSON gives a
    /// meaning, left out, or doubled.
    static func oneByteAway(_ json: [UInt8]) -> [[UInt8]] {
        var variants: [[UInt8]] = []
        for index in json.indices {
            for replacement in Array(" \"{}[],:0159-.eE+/=Aatfn\\\u{1}é".utf8) where replacement != json[index] {
                var changed = json
                changed[index] = replacement
                variants.append(changed)
            }
            var without = json
            without.remove(at: index)
            variants.append(without)
            var doubled = json
            doubled.insert(json[index], at: index)
            variants.append(doubled)
        }
        return variants
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

    @Test func answerIsReadBackByHandUnlessAnIDEscapes() {
        #expect(Self.answers[0].wireJSON.withUnsafeBufferPointer(UploadResponse.init(wireJSON:)) == Self.answers[0])
        let plain = UploadResponse(results: Array(Self.answers[1].results.prefix(2)), latestSequence: 7)
        #expect(plain.wireJSON.withUnsafeBufferPointer(UploadResponse.init(wireJSON:)) == plain)
        #expect(Self.answers[1].wireJSON.withUnsafeBufferPointer(UploadResponse.init(wireJSON:)) == nil)
    }
}
