import Crypto
import Synchronization

/// The Ed25519 signatures this process has already found valid, so that checking one again costs a
/// SHA-256 instead of a verification (about 50 µs). A device re-verifies the same signatures over
/// and over: its recorded device log on every new session, a statement or a version each time it
/// is served again. Verification is a pure function of the key, the signature and the message, so
/// a valid triple stays valid; only valid ones are kept, each as the SHA-256 of all three
/// (length-prefixed), and a refused signature is checked again every time.
enum VerifiedSignatures {
    /// Enough for an account's log and a few rounds' statements and versions; when full it starts
    /// again (a miss only costs a verification).
    private static let capacity = 16_384
    private static let seen = Mutex<Set<SHA256.Digest>>([])

    /// Whether `signature` by `publicKey` over `message` is valid, from the memo or by `verify`.
    static func check(publicKey: [UInt8], signature: [UInt8], message: [UInt8], verify: () -> Bool) -> Bool {
        let digest = digest(publicKey, signature, message)
        if seen.withLock({ $0.contains(digest) }) { return true }
        guard verify() else { return false }
        seen.withLock { seen in
            if seen.count >= capacity { seen.removeAll(keepingCapacity: true) }
            seen.insert(digest)
        }
        return true
    }

    private static func digest(_ publicKey: [UInt8], _ signature: [UInt8], _ message: [UInt8]) -> SHA256.Digest {
        var header: [UInt8] = []
        header.appendLengthPrefixed(publicKey)
        header.appendLengthPrefixed(signature)
        var hasher = SHA256()
        hasher.update(data: header)
        hasher.update(data: message)
        return hasher.finalize()
    }
}
