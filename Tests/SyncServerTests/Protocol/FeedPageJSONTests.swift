import Foundation
import SyncCore
import SyncProtocol
import Testing

/// A page of the feed the server writes by hand (``WireJSONWritable``) is the document the shared
/// encoder makes, byte for byte; a device reads it by hand (``WireJSONReadable``) only when that
/// reading is the decoder's.
@Suite("A feed page's JSON written by hand")
struct FeedPageJSONTests {
    static let pages: [ChangesResponse] = [
        ChangesResponse(after: 0, items: [], cursor: 0, hasMore: false),
        ChangesResponse(after: 6, resync: true, collected: true, items: [
            FeedItem(id: "a/b+c=", sequence: 7, versions: [
                WireVersion(vector: UploadJSONTests.vector(["laptop": 3, "Desk-2": 1]), deleted: false, blob: [1, 2, 3, 250]),
                WireVersion(vector: UploadJSONTests.vector(["phone": .max]), deleted: false, blob: [9]),
            ]),
            FeedItem(id: "x", sequence: 8, versions: [WireVersion(vector: UploadJSONTests.vector(["d": 2]), deleted: true, blob: [])]),
            FeedItem(id: "unheld", sequence: 9, versions: []),
        ], cursor: 9, hasMore: true, deletionsCollectedAt: 1_764_000_000_000),
        ChangesResponse(after: .max, resync: true, items: [], cursor: .max, hasMore: false, deletionsCollectedAt: -5),
        ChangesResponse(after: 1, collected: true, items: [], cursor: 1, hasMore: false, deletionsCollectedAt: .min),
        ChangesResponse(after: 0, items: [], cursor: 1, hasMore: false, deletionsCollectedAt: 0),
        ChangesResponse(after: 0, items: [
            FeedItem(id: ItemID("quote\" back\\slash \n\t\u{1} é ☃"), sequence: 1, versions: [
                WireVersion(vector: UploadJSONTests.vector(["d": 1]), deleted: false, blob: Base64Bytes(Array(0...255))),
            ]),
        ], cursor: 1, hasMore: false),
    ]

    @Test(arguments: pages)
    func isWhatTheEncoderWrites(_ page: ChangesResponse) throws {
        let encoded = try WireCoding.makeEncoder().encode(page)
        #expect(String(decoding: page.wireJSON, as: UTF8.self) == String(decoding: encoded, as: UTF8.self))
        #expect(try WireCoding.makeDecoder().decode(ChangesResponse.self, from: Data(page.wireJSON)) == page)
    }

    /// Read back by hand, unless an ID holds a character its JSON escapes: that one is the
    /// decoder's to read.
    @Test(arguments: pages)
    func isReadBackByHand(_ page: ChangesResponse) {
        let escapes = page.items.contains { UploadJSONTests.escapes($0.id) }
        #expect(page.wireJSON.withUnsafeBufferPointer(ChangesResponse.init(wireJSON:)) == (escapes ? nil : page))
    }

    /// Every text one byte away from a page's: read by hand only as the decoder reads it, else
    /// left to it (a number with a sign, a fraction or an exponent, a key the page does not have).
    @Test(arguments: pages.prefix(5))
    func aTextReadByHandIsReadAsTheDecoderReadsIt(_ page: ChangesResponse) throws {
        var readByHand = 0
        for variant in UploadJSONTests.oneByteAway(page.wireJSON) {
            guard let read = variant.withUnsafeBufferPointer(ChangesResponse.init(wireJSON:)) else { continue }
            readByHand += 1
            #expect(try WireCoding.makeDecoder().decode(ChangesResponse.self, from: Data(variant)) == read, "\(String(decoding: variant, as: UTF8.self))")
        }
        #expect(readByHand > 0)
    }
}
