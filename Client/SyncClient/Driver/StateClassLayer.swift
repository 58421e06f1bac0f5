import Foundation
import KeychainModel
import KeychainStore
import SyncCore

/// The sync state's copies of keychain items under the item's own protection class (decision
/// 0237): the content of a version whose item a lock takes away ("when unlocked", "when passcode
/// set") is sealed under that class's key before the whole version is sealed under the account
/// key (``VersionSealer/sealForState(_:item:classKeys:)``). The account key is an "after first
/// unlock" secret, so without this layer any process of the user would open, while the keychain
/// is locked, the state file's copy of every such item.
///
/// Layout of a layered content: `tag (1) = 0xC5 ‖ class (1, its code) ‖ len(wrapped key) (2) ‖
/// wrapped key ‖ sealed bytes`, bound to the zone and the item. An item's own encoding starts with
/// its format version 1, so a layered content is never taken for an item.
package struct StateClassLayer: Sendable {
    package let keychain: Keychain

    /// The first byte of a content sealed under its class.
    static let tag: UInt8 = 0xC5

    /// The keys of the classes a lock takes away, as readable at one moment; a class locked away
    /// is missing.
    package typealias Keys = [ProtectionClass: Keychain.ClassKey]

    package init(keychain: Keychain) {
        self.keychain = keychain
    }

    /// The keys readable now, in one read of the key state.
    package func keys() throws(SyncClientError) -> Keys {
        do {
            return try keychain.unlockedClassKeys()
        } catch {
            throw SyncClientError.mapped(error)
        }
    }

    /// Whether `content` is still sealed under its class (it was loaded while that class was
    /// locked away).
    package static func isSealedAway(_ content: [UInt8]) -> Bool { content.first == tag }

    /// The class whose key must seal `content`'s copy: nil for an item no lock takes away, and
    /// for bytes that are not an item (they are sealed under the account key only).
    static func lockedClass(of content: [UInt8]) -> ProtectionClass? {
        guard content.first == 1, let accessibility = ItemContent.accessibility(of: content) else { return nil }
        let protectionClass = accessibility.protectionClass
        return protectionClass.isLockedWithKeychain ? protectionClass : nil
    }

    /// `content` as the state keeps it: sealed under its class's key when a lock takes its item
    /// away, else as it is; a content still sealed stays so.
    /// - Throws: `keychainLocked` when that class is locked away now.
    func seal(_ content: [UInt8], zone: ZoneID, item: ItemID, keys: Keys) throws(SyncClientError) -> [UInt8] {
        guard !Self.isSealedAway(content), let protectionClass = Self.lockedClass(of: content) else { return content }
        return try Self.seal(content, under: protectionClass, context: Self.context(zone: zone, item: item), keys: keys)
    }

    /// The content of a state copy, opened when its class's key is in `keys`, else still sealed.
    /// - Throws: `localStorage` when the copy is damaged or was sealed for another item.
    func open(_ content: [UInt8], zone: ZoneID, item: ItemID, keys: Keys) throws(SyncClientError) -> [UInt8] {
        guard Self.isSealedAway(content) else { return content }
        return try Self.open(content, context: Self.context(zone: zone, item: item), keys: keys) ?? content
    }

    /// The seed of the held arrivals' key pair (decision 0238) sealed under the "when unlocked"
    /// class.
    /// - Throws: `keychainLocked` while that class is locked away.
    func sealHeldArrivalSeed(_ seed: [UInt8], keys: Keys) throws(SyncClientError) -> [UInt8] {
        try Self.seal(seed, under: .whenUnlocked, context: Self.heldArrivalSeedContext, keys: keys)
    }

    /// The seed ``sealHeldArrivalSeed(_:)`` sealed; nil while the "when unlocked" class is locked.
    func openHeldArrivalSeed(_ sealed: [UInt8]) throws(SyncClientError) -> [UInt8]? {
        try Self.open(sealed, context: Self.heldArrivalSeedContext, keys: keys())
    }

    private static let heldArrivalSeedContext = Array("sync-state-held-arrival-key".utf8)

    private static func seal(
        _ bytes: [UInt8], under protectionClass: ProtectionClass, context: [UInt8], keys: Keys
    ) throws(SyncClientError) -> [UInt8] {
        guard let key = keys[protectionClass] else {
            throw SyncClientError(.keychainLocked, "the keychain is locked: a \"when unlocked\" item's sync state cannot be written")
        }
        let sealed: Keychain.ClassSealed
        do {
            sealed = try key.seal(bytes, context: context)
        } catch {
            throw SyncClientError.mapped(error)
        }
        var layered: [UInt8] = [tag, protectionClass.code]
        layered.reserveCapacity(4 + sealed.wrappedKey.count + sealed.sealedData.count)
        withUnsafeBytes(of: UInt16(sealed.wrappedKey.count).bigEndian) { layered += $0 }
        layered += sealed.wrappedKey
        layered += sealed.sealedData
        return layered
    }

    /// Opens bytes ``seal(_:under:context:keys:)`` sealed; nil when their class's key is not in `keys`.
    private static func open(_ layered: [UInt8], context: [UInt8], keys: Keys) throws(SyncClientError) -> [UInt8]? {
        guard layered.count >= 4, layered[0] == tag, let protectionClass = ProtectionClass(code: layered[1]) else { throw damaged }
        guard let key = keys[protectionClass] else { return nil }
        let keyLength = Int(layered[2]) << 8 | Int(layered[3])
        guard layered.count >= 4 + keyLength else { throw damaged }
        let sealed = Keychain.ClassSealed(
            wrappedKey: Data(layered[4..<(4 + keyLength)]), sealedData: Data(layered[(4 + keyLength)...]))
        do {
            return try key.open(sealed, context: context)
        } catch {
            throw damaged
        }
    }

    private static let damaged = SyncClientError(.localStorage, "the sync state's copy of an item is damaged")

    private static func context(zone: ZoneID, item: ItemID) -> [UInt8] {
        Array("sync-state-copy:".utf8) + Array(zone.rawValue.utf8) + [0] + Array(item.rawValue.utf8)
    }
}

extension ProtectionClass {
    /// The class's one-byte code (its raw value is one ASCII letter).
    var code: UInt8 { rawValue.utf8.first ?? 0 }

    init?(code: UInt8) {
        self.init(rawValue: String(decoding: [code], as: UTF8.self))
    }
}
