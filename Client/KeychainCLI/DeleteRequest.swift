import ArgumentParser
import KeychainModel
import KeychainStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a delete verb does: one matching item is deleted; several, or a search without any
/// filter, are refused unless `--all` asks for every match, which on a terminal is confirmed
/// first (design §7, decision 0260).
struct DeleteRequest {
    /// The search (its limit and return types are replaced).
    var query: Query
    /// Whether a filter narrows the search (an attribute, a label, a group); `--sync` alone does not.
    var narrowed: Bool
    /// `--all`: delete every match.
    var all: Bool
    /// The filters to suggest, e.g. `-a, -s, -l`.
    var filterNames: String

    func run(_ keychain: Keychain) throws {
        var search = query
        search.limit = .all
        search.returns = .persistentReference
        let references = try NotFoundHint.explaining(query, in: keychain) { try keychain.find(search).compactMap(\.persistentReference) }
        let count = references.count
        let matching = count == 1 ? "1 item matches" : "\(count) items match"
        if !all {
            guard narrowed else {
                throw ValidationError("no filter given and \(matching); add filters (\(filterNames)) or --all to delete every match")
            }
            guard count == 1 else {
                throw ValidationError("\(matching); add filters (\(filterNames)) to delete one, or --all to delete all \(count)")
            }
        } else if isatty(STDIN_FILENO) == 1 {
            try Confirmation.require("delete \(count == 1 ? "1 item" : "\(count) items")?", cancelled: "delete cancelled; nothing was deleted")
        }
        try keychain.delete(query, references: references)
    }
}
