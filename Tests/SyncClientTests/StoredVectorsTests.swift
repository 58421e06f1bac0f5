import Foundation
import GRDB
import SyncClient
import SyncCore
import Testing

@Suite struct StoredVectorsTests {
    let vectors = [
        VersionVector(),
        VersionVector([DeviceID("device-a")!: 3, DeviceID("device-b")!: 12]),
        VersionVector([DeviceID("device-c")!: 1 << 40]),
    ]

    @Test func vectorsRoundTripThroughTheirBlobs() throws {
        for vector in vectors {
            #expect(try StoredVectors.vector(StoredVectors.encode(vector).databaseValue) == vector)
        }
        #expect(try StoredVectors.vectors(StoredVectors.encode(vectors).databaseValue) == vectors)
        #expect(try StoredVectors.vectors(StoredVectors.encode([VersionVector]()).databaseValue) == [])
    }

    @Test func jsonTextFromEarlierStateFilesIsStillRead() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let text = String(decoding: try encoder.encode(vectors), as: UTF8.self)
        #expect(try StoredVectors.vectors(text.databaseValue) == vectors)
        let one = String(decoding: try encoder.encode(vectors[1]), as: UTF8.self)
        #expect(try StoredVectors.vector(one.databaseValue) == vectors[1])
    }

    @Test func damagedBlobsAreRefused() {
        var truncated = StoredVectors.encode(vectors)
        truncated.removeLast()
        #expect(throws: (any Error).self) { try StoredVectors.vectors(truncated.databaseValue) }
        #expect(throws: (any Error).self) { try StoredVectors.vectors((StoredVectors.encode(vectors) + [0]).databaseValue) }
        #expect(throws: (any Error).self) { try StoredVectors.vector(DatabaseValue.null) }
    }
}
