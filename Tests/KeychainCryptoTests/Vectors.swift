import Foundation
import KeychainCrypto

/// Loads the known-answer vector files (Vectors/*.json, written by Vectors/generate.py).
enum Vectors {
    static func load<Value: Decodable>(_ name: String, as type: Value.Type = Value.self) throws -> Value {
        guard let url = Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Vectors") else {
            throw VectorFileMissing(name: name)
        }
        return try JSONDecoder().decode(Value.self, from: Data(contentsOf: url))
    }

    struct VectorFileMissing: Error {
        let name: String
    }
}

/// Hex text in a vector file.
struct Hex: Decodable, Equatable, CustomStringConvertible {
    let bytes: [UInt8]

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard let bytes = [UInt8](hexString: try container.decode(String.self)) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not hex")
        }
        self.bytes = bytes
    }

    var description: String { bytes.hexString }
}
