import KeychainCrypto
import SyncCore
import SyncProtocol

/// Checks of request fields against the configured limits; each failure is a `400 invalid_field`
/// or `413 too_large` naming the field, never echoing its value.
struct Validation {
    let limits: ServerConfiguration.Limits

    static func accountName(_ name: String) throws {
        try humanText(name, field: "account")
    }

    static func deviceName(_ name: String) throws {
        try humanText(name, field: "deviceName")
    }

    /// Zone names: 1...64 bytes of `[A-Za-z0-9_.-]`.
    static func zone(_ zone: String) throws {
        let bytes = Array(zone.utf8)
        guard (1...64).contains(bytes.count), bytes.allSatisfy({ IDCharacters.contains($0) || $0 == UInt8(ascii: ".") }) else {
            throw APIError.invalid("zone must be 1...64 characters of [A-Za-z0-9_.-]")
        }
    }

    func itemID(_ id: ItemID) throws {
        let bytes = Array(id.rawValue.utf8)
        guard !bytes.isEmpty, bytes.allSatisfy({ IDCharacters.contains($0) || "=+/.".utf8.contains($0) }) else {
            throw APIError.invalid("item id must be characters of [A-Za-z0-9_=+/.-]")
        }
        guard bytes.count <= limits.maximumItemIDBytes else {
            throw APIError.tooLarge("item id is longer than \(limits.maximumItemIDBytes) bytes")
        }
    }

    func vector(_ vector: VersionVector) throws {
        guard !vector.isEmpty else { throw APIError.invalid("vector must have at least one entry") }
        guard vector.counters.count <= limits.maximumVectorEntries else {
            throw APIError.tooLarge("vector has more than \(limits.maximumVectorEntries) entries")
        }
        guard vector.counters.values.allSatisfy({ $0 <= UInt64(Int64.max) }) else {
            throw APIError.invalid("vector counters must be below 2^63")
        }
    }

    func blob(_ blob: Base64Bytes) throws {
        guard !blob.bytes.isEmpty else { throw APIError.invalid("blob must not be empty") }
    }

    /// Every item of an upload whose blob is over the size limit: the batch is refused whole with
    /// `413 too_large`, naming them, so a client can set them aside and push the rest.
    func blobSizes(_ items: [UploadItem]) throws {
        let oversized = items.filter { $0.blob.bytes.count > limits.maximumBlobBytes }.map(\.id)
        guard oversized.isEmpty else {
            throw APIError(
                .contentTooLarge, ErrorCode.tooLarge, "blobs are larger than \(limits.maximumBlobBytes) bytes",
                items: oversized)
        }
    }

    func authKey(_ key: Base64Bytes) throws {
        guard (16...64).contains(key.bytes.count) else { throw APIError.invalid("authKey must be 16...64 bytes") }
    }

    func keys(_ keys: AccountKeyBundle) throws {
        guard (16...64).contains(keys.salt.bytes.count) else { throw APIError.invalid("salt must be 16...64 bytes") }
        try Self.kdf(keys.kdf, salt: keys.salt)
        for wrapped in [keys.wrappedAccountKey, keys.wrappedRecoveryKey].compactMap({ $0 }) {
            guard (1...limits.maximumKeyMaterialBytes).contains(wrapped.bytes.count) else {
                throw APIError.invalid("wrapped keys must be 1...\(limits.maximumKeyMaterialBytes) bytes")
            }
        }
    }

    /// KDF parameters every client accepts: KeychainCrypto's `KDFParameters`, the one definition
    /// of the floors and limits, which clients apply to what the server hands back. Anything else
    /// would make an account no device can sign in to, or one whose derivation costs every device
    /// that tries more memory and time than a client allows.
    ///
    /// - Throws: `400 unsupported_kdf`.
    static func kdf(_ kdf: PasswordKDF, salt: Base64Bytes) throws {
        do {
            _ = try KDFParameters(algorithm: kdf.algorithm, logN: kdf.logN, r: kdf.r, p: kdf.p, salt: salt.bytes)
        } catch {
            throw APIError(.badRequest, ErrorCode.unsupportedKDF, Self.kdfRule)
        }
    }

    static let kdfRule = "kdf must be \(KDFParameters.scryptAlgorithm) with logN \(KDFParameters.minimumLogN)...\(KDFParameters.maximumLogN), "
        + "r \(KDFParameters.blockSizeRange.lowerBound)...\(KDFParameters.blockSizeRange.upperBound), "
        + "p \(KDFParameters.parallelismRange.lowerBound)...\(KDFParameters.parallelismRange.upperBound), "
        + "128·N·r at most \(KDFParameters.maximumMemoryBytes >> 20) MiB and N·r·p at most 2^\(KDFParameters.maximumWork.trailingZeroBitCount)"

    /// 1...128 bytes of UTF-8 without control characters.
    private static func humanText(_ text: String, field: String) throws {
        guard (1...128).contains(text.utf8.count),
            !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw APIError.invalid("\(field) must be 1...128 bytes without control characters") }
    }
}
