import Foundation
import KeychainModel

/// The bytes an item travels as inside a sealed blob: its class, every attribute and its secret,
/// in one deterministic encoding, so the same item encodes to the same bytes on every device.
///
/// `version (1) = 1 ‖ len(class) (1) ‖ class ‖ count (2) ‖ (len(name) (1) ‖ name ‖ kind (1) ‖
/// len(value) (4) ‖ value)… ‖ hasData (1) ‖ [len(data) (4) ‖ data]`, attributes sorted by code,
/// integers big-endian; kinds: 1 string (UTF-8), 2 data, 3 integer (8), 4 bool (1), 5 date (8,
/// the Double's bits).
package enum ItemContent {
    private static let version: UInt8 = 1

    /// Encodes `item`.
    package static func encode(_ item: Item) -> [UInt8] {
        var bytes: [UInt8] = [version]
        let classCode = Array(item.itemClass.rawValue.utf8)
        bytes.append(UInt8(classCode.count))
        bytes += classCode
        let attributes = item.attributes.present
        append(UInt16(attributes.count), to: &bytes)
        for attribute in attributes {
            guard let value = item.attributes[attribute] else { continue }
            let name = Array(attribute.rawValue.utf8)
            bytes.append(UInt8(name.count))
            bytes += name
            let (kind, valueBytes) = encode(value)
            bytes.append(kind)
            append(UInt32(valueBytes.count), to: &bytes)
            bytes += valueBytes
        }
        if let data = item.data {
            bytes.append(1)
            append(UInt32(data.count), to: &bytes)
            bytes += data
        } else {
            bytes.append(0)
        }
        return bytes
    }

    /// Decodes bytes made by ``encode(_:)``; nil when they are not such bytes.
    package static func decode(_ bytes: [UInt8]) -> Item? {
        var reader = Reader(rest: bytes[...])
        guard let (classCode, count) = reader.header(), let itemClass = ItemClass(rawValue: String(decoding: classCode, as: UTF8.self))
        else { return nil }
        var attributes = ItemAttributes()
        for _ in 0..<count {
            guard let (name, kind, valueBytes) = reader.attribute(),
                let attribute = Attribute(rawValue: String(decoding: name, as: UTF8.self)), let value = decode(kind: kind, valueBytes)
            else { return nil }
            attributes[attribute] = value
        }
        var data: [UInt8]?
        switch reader.byte() {
        case 0: data = nil
        case 1:
            guard let length = reader.integer(4), let bytes = reader.take(Int(length)) else { return nil }
            data = Array(bytes)
        default: return nil
        }
        guard reader.rest.isEmpty else { return nil }
        return Item(itemClass: itemClass, attributes: attributes, data: data)
    }

    /// The accessibility of the item `bytes` encode, read without decoding the rest (the state's
    /// class layer asks it of every copy it seals, decision 0237); nil when they are cut short
    /// before it. An item without the attribute has the default. What follows it is not checked.
    package static func accessibility(of bytes: [UInt8]) -> Accessibility? {
        var reader = Reader(rest: bytes[...])
        guard let (_, count) = reader.header() else { return nil }
        let wanted = Attribute.accessible.rawValue.utf8
        for _ in 0..<count {
            guard let (name, kind, value) = reader.attribute() else { return nil }
            guard name.elementsEqual(wanted) else { continue }
            // As `ItemAttributes.accessible` reads it: anything but a known name is the default.
            guard kind == 1 else { return .default }
            return Accessibility(rawValue: String(decoding: value, as: UTF8.self)) ?? .default
        }
        return .default
    }

    private static func encode(_ value: AttributeValue) -> (UInt8, [UInt8]) {
        var bytes: [UInt8] = []
        switch value {
        case .string(let text): return (1, Array(text.utf8))
        case .data(let data): return (2, data)
        case .integer(let number):
            append(UInt64(bitPattern: number), to: &bytes)
            return (3, bytes)
        case .bool(let flag): return (4, [flag ? 1 : 0])
        case .date(let seconds):
            append(seconds.bitPattern, to: &bytes)
            return (5, bytes)
        }
    }

    private static func decode(kind: UInt8, _ bytes: ArraySlice<UInt8>) -> AttributeValue? {
        switch kind {
        case 1: return .string(String(decoding: bytes, as: UTF8.self))
        case 2: return .data(Array(bytes))
        case 3: return bytes.count == 8 ? .integer(Int64(bitPattern: bigEndian(bytes))) : nil
        case 4:
            guard bytes.count == 1, let flag = bytes.first, flag <= 1 else { return nil }
            return .bool(flag == 1)
        case 5:
            guard bytes.count == 8 else { return nil }
            let date = AttributeValue.date(Double(bitPattern: bigEndian(bytes)))
            return date.isInRange ? date : nil
        default: return nil
        }
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { bytes += $0 }
    }

    private static func bigEndian(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Reads the encoding front to back; slices share the bytes (nothing is copied until a value
    /// is made).
    private struct Reader {
        var rest: ArraySlice<UInt8>

        mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
            guard count >= 0, rest.count >= count else { return nil }
            defer { rest = rest.dropFirst(count) }
            return rest.prefix(count)
        }

        mutating func byte() -> UInt8? { rest.popFirst() }

        mutating func integer(_ count: Int) -> UInt64? { take(count).map(ItemContent.bigEndian) }

        /// The header: the class code and how many attributes follow; nil when it is not one.
        mutating func header() -> (classCode: ArraySlice<UInt8>, count: UInt64)? {
            guard byte() == ItemContent.version, let classLength = byte(), let classCode = take(Int(classLength)), let count = integer(2)
            else { return nil }
            return (classCode, count)
        }

        /// The next attribute: its name, the kind of its value and the value's bytes.
        mutating func attribute() -> (name: ArraySlice<UInt8>, kind: UInt8, value: ArraySlice<UInt8>)? {
            guard let nameLength = byte(), let name = take(Int(nameLength)), let kind = byte(), let length = integer(4),
                let value = take(Int(length))
            else { return nil }
            return (name, kind, value)
        }
    }
}
