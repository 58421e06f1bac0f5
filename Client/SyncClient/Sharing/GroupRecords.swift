import Foundation
import KeyValueStore
import KeychainCrypto

/// The groups this account belongs to (decision 0283): the account's key-value store
/// `synckeychain.groups` (``NamedRecords``), so a group created or accepted on one device is the
/// account's on all of them. One record per group, by the account's own name for it: the group's
/// ID, the owner's card the log was first verified from (the root every later read starts from,
/// whatever the owner's pin says since) and how far the log was verified (its length and the hash
/// of its last entry), so a log the server later serves shorter or different is a rollback or a
/// fork, not a fresh start.
struct GroupRecords {
    static let storeName = SharedGroupDirectory.storeName
    let records: NamedRecords

    /// A group as recorded.
    struct Record: Equatable {
        var name: String
        var group: [UInt8]
        var owner: AccountIdentityCard
        var verifiedLength: Int
        var head: [UInt8]
        /// What the account may do in the group by that log (decision 0299), for the keychain
        /// tool and the Secret Service, which do not read the log.
        var standing: SharedGroupDirectory.Standing
    }

    init(session: ClientSession) throws(SyncClientError) {
        records = try NamedRecords(session: session, storeName: Self.storeName, nameField: SharedGroupDirectory.nameField)
    }

    func save(_ record: Record) throws(SyncClientError) {
        try records.set(
            [
                SharedGroupDirectory.nameField: .string(record.name), SharedGroupDirectory.groupField: .data(Data(record.group)), "owner": .string(record.owner.account),
                "ownerCard": .data(Data(record.owner.encoded)), "verifiedLength": .integer(Int64(record.verifiedLength)),
                "head": .data(Data(record.head)), SharedGroupDirectory.standingField: .string(record.standing.rawValue),
            ],
            named: record.name)
    }

    func record(named name: String) throws(SyncClientError) -> Record? {
        try records.fields(named: name).map { fields throws(SyncClientError) in try record(fields) }
    }

    func all() throws(SyncClientError) -> [Record] {
        var all: [Record] = []
        for fields in try records.all() { all.append(try record(fields)) }
        return all.sorted { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }
    }

    func forget(_ name: String) throws(SyncClientError) {
        try records.remove(named: name)
    }

    /// A record's fields read as a group; one that does not read fails the read.
    private func record(_ fields: [String: KeyValue]) throws(SyncClientError) -> Record {
        guard let name = fields[SharedGroupDirectory.nameField]?.stringValue, let group = fields[SharedGroupDirectory.groupField]?.dataValue, group.count == GroupLogEntry.groupIDLength,
            let owner = fields["owner"]?.stringValue, let ownerCard = fields["ownerCard"]?.dataValue,
            let card = try? AccountIdentityCard(decoding: Array(ownerCard), of: owner),
            let length = fields["verifiedLength"]?.integerValue, length >= 1, let head = fields["head"]?.dataValue, head.count == 32,
            let standing = SharedGroupDirectory.standing(in: fields)
        else { throw records.unreadable }
        return Record(name: name, group: Array(group), owner: card, verifiedLength: Int(length), head: Array(head), standing: standing)
    }
}
