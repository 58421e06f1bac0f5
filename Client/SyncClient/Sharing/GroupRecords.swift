import Crypto
import Foundation
import KeyValueStore
import KeychainCrypto

/// The groups this account belongs to (decision 0283), as its devices record them: a key-value
/// store of the account, `synckeychain.groups`, so a group created or accepted on one device is
/// the account's on all of them. One key per group, by the account's own name for it (the first
/// 16 bytes of SHA-256 of the name, in hex); the value holds the name, the group's ID, the owner's
/// card the log was first verified from (the root every later read starts from, whatever the
/// owner's pin says since) and how far the log was verified (its length and the hash of its last
/// entry), so a log the server later serves shorter or different is a rollback or a fork, not a
/// fresh start.
struct GroupRecords {
    static let storeName = "synckeychain.groups"
    let store: KeyValueStore

    /// A group as recorded.
    struct Record: Equatable {
        var name: String
        var group: [UInt8]
        var owner: AccountIdentityCard
        var verifiedLength: Int
        var head: [UInt8]
    }

    init(session: ClientSession) throws(SyncClientError) {
        do {
            store = try KeyValueSync.open(session: session).store(named: Self.storeName)
        } catch {
            throw SyncClientError.mapped(error)
        }
    }

    func save(_ record: Record) throws(SyncClientError) {
        let value: [String: KeyValue] = [
            "name": .string(record.name), "group": .data(Data(record.group)), "owner": .string(record.owner.account), "ownerCard": .data(Data(record.owner.encoded)),
            "verifiedLength": .integer(Int64(record.verifiedLength)), "head": .data(Data(record.head)),
        ]
        do {
            try store.set(value, forKey: Self.key(of: record.name))
        } catch {
            throw SyncClientError.mapped(error)
        }
    }

    func forget(_ name: String) throws(SyncClientError) {
        do {
            _ = try store.removeValue(forKey: Self.key(of: name))
        } catch {
            throw SyncClientError.mapped(error)
        }
    }

    func record(named name: String) throws(SyncClientError) -> Record? {
        let key = Self.key(of: name)
        let value: KeyValue?
        do {
            value = try store.value(forKey: key)
        } catch {
            throw SyncClientError.mapped(error)
        }
        return try value.map { value throws(SyncClientError) in try Self.record(value, key: key) }
    }

    func all() throws(SyncClientError) -> [Record] {
        let values: [String: KeyValue]
        do {
            values = try store.dictionaryRepresentation()
        } catch {
            throw SyncClientError.mapped(error)
        }
        var records: [Record] = []
        for (key, value) in values { records.append(try Self.record(value, key: key)) }
        return records.sorted { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }
    }

    /// A stored value read as the record its key names; one that does not read fails the read.
    private static func record(_ value: KeyValue, key: String) throws(SyncClientError) -> Record {
        guard let fields = value.dictionaryValue, let name = fields["name"]?.stringValue, key == Self.key(of: name),
            let group = fields["group"]?.dataValue, group.count == GroupLogEntry.groupIDLength, let owner = fields["owner"]?.stringValue,
            let ownerCard = fields["ownerCard"]?.dataValue, let card = try? AccountIdentityCard(decoding: Array(ownerCard), of: owner),
            let length = fields["verifiedLength"]?.integerValue, length >= 1, let head = fields["head"]?.dataValue, head.count == 32
        else { throw SyncClientError(.localStorage, "a group in the store \(storeName) cannot be read") }
        return Record(name: name, group: Array(group), owner: card, verifiedLength: Int(length), head: Array(head))
    }

    private static func key(of name: String) -> String {
        Array(SHA256.hash(data: Array(name.utf8)).prefix(16)).hexString
    }
}
