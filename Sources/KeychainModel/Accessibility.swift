/// When an item's secret can be read, with Apple's `kSecAttrAccessible…` codes as raw values.
public enum Accessibility: String, CaseIterable, Sendable, Codable, Hashable {
    /// Only while the keychain is unlocked (the default).
    case whenUnlocked = "ak"
    /// After the keychain was first unlocked.
    case afterFirstUnlock = "ck"
    /// Always, even while locked.
    case always = "dk"
    /// Like `whenUnlocked`, and never leaves this device.
    case whenUnlockedThisDeviceOnly = "aku"
    /// Like `afterFirstUnlock`, and never leaves this device.
    case afterFirstUnlockThisDeviceOnly = "cku"
    /// Like `always`, and never leaves this device.
    case alwaysThisDeviceOnly = "dku"
    /// Only while unlocked and only while a passcode is set; never leaves this device.
    case whenPasscodeSetThisDeviceOnly = "akpu"

    /// The default accessibility of a new item.
    public static let `default` = Accessibility.whenUnlocked

    /// True for the variants that must never be synchronized.
    public var isThisDeviceOnly: Bool {
        switch self {
        case .whenUnlocked, .afterFirstUnlock, .always: false
        default: true
        }
    }

    /// The protection class whose key protects items of this accessibility.
    public var protectionClass: ProtectionClass {
        switch self {
        case .whenUnlocked, .whenUnlockedThisDeviceOnly: .whenUnlocked
        case .afterFirstUnlock, .afterFirstUnlockThisDeviceOnly: .afterFirstUnlock
        case .always, .alwaysThisDeviceOnly: .always
        case .whenPasscodeSetThisDeviceOnly: .whenPasscodeSet
        }
    }
}

/// A group of accessibility values sharing one class key.
public enum ProtectionClass: String, CaseIterable, Sendable, Codable, Hashable {
    /// Readable only while unlocked.
    case whenUnlocked = "A"
    /// Readable once unlocked: with a passcode set, after the first unlock since the machine
    /// started (decision 0136); without one, always.
    case afterFirstUnlock = "C"
    /// Always readable.
    case always = "D"
    /// Readable only while unlocked with a passcode set.
    case whenPasscodeSet = "P"

    /// True when locking the keychain makes this class unavailable.
    public var isLockedWithKeychain: Bool {
        self == .whenUnlocked || self == .whenPasscodeSet
    }

    /// True when a passcode, once set, wraps this class's key: every class but "always"
    /// (decision 0136). "After first unlock" stays readable while locked, once unlocked.
    public var isProtectedByPasscode: Bool {
        self != .always
    }
}
