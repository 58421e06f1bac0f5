import Foundation
import KeychainModel

extension PrimaryKey {
    /// The key as stored in the unique column: per field, a 2-byte name length, the name, a
    /// 4-byte value length and the value (all big-endian). Injective, so equal bytes mean equal keys.
    var storageBytes: Data {
        var bytes: [UInt8] = []
        for field in fields {
            append(UInt16(field.name.utf8.count), to: &bytes)
            bytes += field.name.utf8
            append(UInt32(field.bytes.count), to: &bytes)
            bytes += field.bytes
        }
        return Data(bytes)
    }

    /// Decodes ``storageBytes``; nil when they are not a primary key of a known class.
    init?(storageBytes data: Data) {
        var fields: [(String, [UInt8])] = []
        var rest = [UInt8](data)[...]
        while !rest.isEmpty {
            guard let nameLength = Self.read(2, from: &rest), let name = Self.take(Int(nameLength), from: &rest),
                let valueLength = Self.read(4, from: &rest), let value = Self.take(Int(valueLength), from: &rest)
            else { return nil }
            fields.append((String(decoding: name, as: UTF8.self), value))
        }
        guard let first = fields.first, first.0 == "class",
            let itemClass = ItemClass(rawValue: String(decoding: first.1, as: UTF8.self))
        else { return nil }
        var attributes = ItemAttributes()
        for (name, bytes) in fields.dropFirst() {
            guard let attribute = Attribute(rawValue: name), let value = Self.value(of: attribute, bytes) else { return nil }
            attributes[attribute] = value
        }
        self.init(itemClass: itemClass, attributes: attributes)
    }

    private static func value(of attribute: Attribute, _ bytes: [UInt8]) -> AttributeValue? {
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

    private func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
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
