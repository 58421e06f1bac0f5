import Foundation

// The baseline's messages: JSON, binary fields as base64 (Foundation's `Data` coding), as the
// product's wire protocol does.

struct SignIn: Codable {
    var account: String
    var authKey: Data
    var device: String
    var bundle: Data?
}

struct SignedIn: Codable {
    var token: String
    var bundle: Data
}

struct Upload: Codable {
    struct Item: Codable {
        var id: String
        var vector: Data
        var deleted: Bool
        var blob: Data
    }
    var cursor: Int64
    var items: [Item]
}

struct UploadAnswer: Codable {
    struct Result: Codable {
        var id: String
        var outcome: String
        var sequence: Int64?
    }
    var results: [Result]
    var latestSequence: Int64
}

struct Page: Codable {
    struct Version: Codable {
        var vector: Data
        var deleted: Bool
        var blob: Data
    }
    struct Item: Codable {
        var id: String
        var sequence: Int64
        var versions: [Version]
    }
    var items: [Item]
    var cursor: Int64
    var hasMore: Bool
}

struct StatementBody: Codable {
    var statement: Data
}

struct StoredStatement: Codable {
    var device: String
    var statement: Data
}

struct Acknowledgement: Codable {
    var cursor: Int64
}

/// A generic password's attributes as the keychain encodes them (about 200 bytes).
struct Attributes {
    var `class`: String
    var svce: String
    var acct: String
    var labl: String
    var pdmn: String
    var sync: Int
    var cdat: Double
    var mdat: Double
    var agrp: String

    /// The attributes as the keychain's item content holds them: each field length-prefixed
    /// (a compiled client decodes these without a JSON parser).
    var encoded: Data {
        var data = Data()
        for field in [self.class, svce, acct, labl, pdmn, agrp] {
            let bytes = Array(field.utf8)
            data.append(UInt8(bytes.count >> 8))
            data.append(UInt8(bytes.count & 0xff))
            data.append(contentsOf: bytes)
        }
        withUnsafeBytes(of: UInt64(sync).bigEndian) { data.append(contentsOf: $0) }
        withUnsafeBytes(of: cdat.bitPattern.bigEndian) { data.append(contentsOf: $0) }
        withUnsafeBytes(of: mdat.bitPattern.bigEndian) { data.append(contentsOf: $0) }
        return data
    }

    static func of(_ index: Int) -> Attributes {
        Attributes(
            class: "genp", svce: "com.example.bench", acct: "p-\(index)", labl: "label \(index)", pdmn: "ak", sync: 1,
            cdat: 1_764_000_000.123, mdat: 1_764_000_000.123, agrp: "synckeychain.default")
    }
}

extension Attributes {
    /// Reads ``encoded``; nil when the bytes are not one.
    init?(encoded data: Data) {
        let bytes = [UInt8](data)
        var offset = 0
        func field() -> String? {
            guard offset + 2 <= bytes.count else { return nil }
            let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            offset += 2
            guard offset + length <= bytes.count else { return nil }
            defer { offset += length }
            return String(decoding: bytes[offset..<offset + length], as: UTF8.self)
        }
        func number() -> UInt64? {
            guard offset + 8 <= bytes.count else { return nil }
            defer { offset += 8 }
            return bytes[offset..<offset + 8].reduce(0) { $0 << 8 | UInt64($1) }
        }
        guard let itemClass = field(), let svce = field(), let acct = field(), let labl = field(), let pdmn = field(), let agrp = field(),
            let sync = number(), let cdat = number(), let mdat = number(), offset == bytes.count
        else { return nil }
        self.init(
            class: itemClass, svce: svce, acct: acct, labl: labl, pdmn: pdmn, sync: Int(sync), cdat: Double(bitPattern: cdat),
            mdat: Double(bitPattern: mdat), agrp: agrp)
    }
}
