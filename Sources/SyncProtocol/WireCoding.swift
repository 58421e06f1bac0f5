import Foundation

/// The JSON coders both ends use: ISO 8601 dates, sorted keys (stable output).
public enum WireCoding {
    /// A JSON encoder for request and response bodies.
    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// A body's JSON: the document the body writes itself (``WireJSONWritable``), or the encoder's.
    public static func encode(_ body: any Encodable, with encoder: JSONEncoder = makeEncoder()) throws -> [UInt8] {
        if let written = body as? any WireJSONWritable { return written.wireJSON }
        return Array(try encoder.encode(body))
    }

    /// A JSON decoder for request and response bodies.
    public static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
