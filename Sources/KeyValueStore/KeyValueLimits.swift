/// Apple's limits for a key-value store, and how a store's size is counted (docs/decisions/0061).
///
/// A key's size is its UTF-8 byte count; a value's size is the byte count of its
/// ``KeyValue/canonicalEncoding``. A store's total is the sum, over its keys that have a value
/// (removed keys do not count), of key size + value size.
public enum KeyValueLimits {
    /// The most keys a store holds.
    public static let maximumKeys = 1024
    /// The most bytes a store holds in total (1 MB).
    public static let maximumStoreBytes = 1 << 20
    /// The most bytes one value's encoding takes (1 MB).
    public static let maximumValueBytes = 1 << 20
    /// The most bytes of UTF-8 in a key.
    public static let maximumKeyBytes = 64
    /// The most bytes of UTF-8 in a store name.
    public static let maximumStoreNameBytes = 128

    /// The size a key and its value count for in the store's total.
    public static func size(key: String, value: KeyValue) -> Int {
        key.utf8.count + value.encodedSize
    }

    /// Refuses an empty key, one longer than ``maximumKeyBytes``, or one holding NUL.
    static func validate(key: String) throws(KeyValueStoreError) {
        let bytes = key.utf8.count
        guard bytes > 0, !key.utf8.contains(0) else {
            throw KeyValueStoreError(.invalidKey, "a key must not be empty or contain NUL")
        }
        guard bytes <= maximumKeyBytes else {
            throw KeyValueStoreError(.keyTooLong, "the key is \(bytes) bytes of UTF-8; at most \(maximumKeyBytes) are allowed")
        }
    }

    /// Refuses a value larger than ``maximumValueBytes``, nested too deeply, or holding a double
    /// that is not finite.
    static func validate(value: KeyValue) throws(KeyValueStoreError) {
        let bytes = value.encodedSize
        guard bytes <= maximumValueBytes else {
            throw KeyValueStoreError(.valueTooLarge, "the value is \(bytes) bytes encoded; at most \(maximumValueBytes) are allowed")
        }
        guard value.nestingDepth <= KeyValue.maximumNestingDepth else {
            throw KeyValueStoreError(.nestedTooDeeply, "the value nests deeper than \(KeyValue.maximumNestingDepth) levels")
        }
        guard value.isFinite else {
            throw KeyValueStoreError(.nonFiniteNumber, "the value holds a double that is NaN or infinite")
        }
    }

    /// Refuses an empty store name, one longer than ``maximumStoreNameBytes``, or one with control
    /// characters.
    /// - Throws: ``KeyValueStoreError/Code/invalidStoreName``.
    public static func validate(storeName: String) throws(KeyValueStoreError) {
        guard !storeName.isEmpty, storeName.utf8.count <= maximumStoreNameBytes,
            !storeName.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw KeyValueStoreError(
                .invalidStoreName, "a store name must be 1 to \(maximumStoreNameBytes) bytes of UTF-8 without control characters")
        }
    }
}
