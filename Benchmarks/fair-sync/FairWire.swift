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
struct Attributes: Codable {
    var `class`: String
    var svce: String
    var acct: String
    var labl: String
    var pdmn: String
    var sync: Int
    var cdat: Double
    var mdat: Double
    var agrp: String

    static func of(_ index: Int) -> Attributes {
        Attributes(
            class: "genp", svce: "com.example.bench", acct: "p-\(index)", labl: "label \(index)", pdmn: "ak", sync: 1,
            cdat: 1_764_000_000.123, mdat: 1_764_000_000.123, agrp: "synckeychain.default")
    }
}
