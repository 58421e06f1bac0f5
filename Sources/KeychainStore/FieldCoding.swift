import Foundation
import KeychainModel

/// The stored form of primary keys and attributes: per field, a 2-byte name length, the name, a
/// 4-byte value length and the value's canonical bytes (all big-endian). Injective, so equal bytes
/// mean equal values.
enum FieldCoding {
    static func encode(_ fields: [(name: String, bytes: [UInt8])]) -> [UInt8] {
        var bytes: [UInt8] = []
        for field in fields {
            append(UInt16(field.name.utf8.count), to: &bytes)
            bytes += field.name.utf8
            append(UInt32(field.bytes.count), to: &bytes)
            bytes += field.bytes
        }
        return bytes
    }

    /// The fields of ``encode(_:)``'s bytes; nil when they are not such an encoding.
    static func decode(_ data: [UInt8]) -> [(name: String, bytes: [UInt8])]? {
        var fields: [(name: String, bytes: [UInt8])] = []
        var rest = data[...]
        while !rest.isEmpty {
            guard let nameLength = read(2, from: &rest), let name = take(Int(nameLength), from: &rest),
                let valueLength = read(4, from: &rest), let value = take(Int(valueLength), from: &rest)
            else { return nil }
            fields.append((String(decoding: name, as: UTF8.self), value))
        }
        return fields
    }

    /// The attribute value of `attribute` whose canonical bytes are `bytes`; nil when they cannot be.
    static func value(of attribute: Attribute, _ bytes: [UInt8]) -> AttributeValue? {
        switch attribute.kind {
        case .string: return .string(String(decoding: bytes, as: UTF8.self))
        case .data: return .data(bytes)
        case .bool: return bytes.count == 1 ? .bool(bytes[0] != 0) : nil
        case .integer, .date:
            guard bytes.count == 8 else { return nil }
            let raw = bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return attribute.kind == .integer ? .integer(Int64(bitPattern: raw)) : .date(Double(bitPattern: raw))
        }
    }

    /// Attributes from `(code, canonical bytes)` fields; nil for an unknown code or a bad value.
    static func attributes(_ fields: some Sequence<(name: String, bytes: [UInt8])>) -> ItemAttributes? {
        var attributes = ItemAttributes()
        for (name, bytes) in fields {
            guard let attribute = Attribute(rawValue: name), let value = value(of: attribute, bytes) else { return nil }
            attributes[attribute] = value
        }
        return attributes
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { bytes += $0 }
    }

    private static func read(_ count: Int, from rest: inout ArraySlice<UInt8>) -> UInt64? {
        take(count, from: &rest).map { $0.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
    }

    private static func take(_ count: Int, from rest: inout ArraySlice<UInt8>) -> [UInt8]? {
        guard rest.count >= count else { return nil }
        defer { rest = rest.dropFirst(count) }
        return Array(rest.prefix(count))
    }
}

extension PrimaryKey {
    /// The key's stored form (``FieldCoding``): its ``fields``, class first.
    var storageBytes: Data {
        Data(FieldCoding.encode(fields.map { ($0.name, $0.bytes) }))
    }

    /// Decodes ``storageBytes``; nil when they are not a primary key of a known class.
    init?(storageBytes data: Data) {
        guard let fields = FieldCoding.decode(Array(data)), let first = fields.first, first.name == "class",
            let itemClass = ItemClass(rawValue: String(decoding: first.bytes, as: UTF8.self)),
            let attributes = FieldCoding.attributes(fields.dropFirst())
        else { return nil }
        self.init(itemClass: itemClass, attributes: attributes)
    }
}

extension ItemAttributes {
    /// The attributes' stored form (``FieldCoding``), in a stable order.
    var storageBytes: [UInt8] {
        FieldCoding.encode(present.map { ($0.rawValue, self[$0]!.canonicalBytes) })
    }

    /// Decodes ``storageBytes``; nil when they are not attributes.
    init?(storageBytes bytes: [UInt8]) {
        guard let fields = FieldCoding.decode(bytes), let attributes = FieldCoding.attributes(fields) else { return nil }
        self = attributes
    }
}
