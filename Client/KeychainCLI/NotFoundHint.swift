import KeychainModel
import KeychainStore

/// A search without `--sync` matches only items that are not synchronizable, as Apple's queries
/// do (design §3); an item added with `--sync` is then "not found". When that is why, the message
/// says so: the status stays 44, and the search is only widened after it found nothing.
enum NotFoundHint {
    static let message = "item not found; a synchronizable item matches (add --sync yes, or --sync any)"

    /// Runs `body`, a search of `query` in `keychain` (or a verb built on one); when it finds
    /// nothing only because `query` leaves synchronizable items out, rethrows with ``message``.
    static func explaining<T>(_ query: Query, in keychain: Keychain, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as KeychainError where error.code == .itemNotFound && query.synchronizable == .no {
            var wider = query
            wider.synchronizable = .yes
            wider.limit = .one
            wider.returns = []
            guard (try? keychain.find(wider)) != nil else { throw error }
            throw KeychainError(.itemNotFound, message)
        }
    }
}
