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

    /// A body decoded: read by the body itself when it comes exactly in the form it writes
    /// (``WireJSONReadable``), else by the decoder, which decides what any other form means.
    public static func decode<Value: Decodable>(_ type: Value.Type, from bytes: some Collection<UInt8>) throws -> Value {
        if let readable = type as? any WireJSONReadable.Type,
            case let read?? = bytes.withContiguousStorageIfAvailable({ readable.init(wireJSON: $0) }), let value = read as? Value
        {
            return value
        }
        return try makeDecoder().decode(type, from: Data(bytes))
    }
}
