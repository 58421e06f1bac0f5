/// A version vector: for each device that wrote a version of an item, how many writes of it that
/// device has made. `{A: 2, B: 1}` has seen A's first two writes and B's first.
///
/// A device that writes an item increments its own entry over the join of every version it has
/// seen, so the new version dominates everything it replaces; versions neither of which dominates
/// the other were written concurrently and are kept as siblings.
///
/// Entries whose counter is zero are not stored, so equal histories give equal values and equal
/// canonical encodings.
public struct VersionVector: Hashable, Sendable {
    /// The most entries a vector may have. Each entry is a device that wrote the item, so this also
    /// bounds the devices of an account that can write one item.
    public static let maximumEntries = 64

    /// How two vectors relate.
    public enum Ordering: Sendable, Equatable {
        /// Both vectors describe the same history.
        case equal
        /// The receiver has seen everything the other has, and more.
        case dominates
        /// The other has seen everything the receiver has, and more.
        case dominated
        /// Each has seen a write the other has not.
        case concurrent
    }

    /// The non-zero counters, by device.
    public private(set) var counters: [DeviceID: UInt64]

    /// The empty vector, which every other vector dominates.
    public init() {
        counters = [:]
    }

    /// A vector with the given counters; zero counters are dropped.
    public init(_ counters: [DeviceID: UInt64]) {
        self.counters = counters.filter { $0.value > 0 }
    }

    /// The counter of `device`, zero when it never wrote.
    public subscript(device: DeviceID) -> UInt64 {
        counters[device] ?? 0
    }

    /// Whether no device has written.
    public var isEmpty: Bool { counters.isEmpty }

    /// How the receiver relates to `other`.
    public func compare(to other: VersionVector) -> Ordering {
        var receiverAhead = false
        var otherAhead = false
        for (device, count) in counters {
            let theirs = other[device]
            if count > theirs { receiverAhead = true } else if count < theirs { otherAhead = true }
        }
        for (device, count) in other.counters where counters[device] == nil && count > 0 {
            otherAhead = true
        }
        switch (receiverAhead, otherAhead) {
        case (false, false): return .equal
        case (true, false): return .dominates
        case (false, true): return .dominated
        case (true, true): return .concurrent
        }
    }

    /// Whether the receiver has seen everything `other` has (it dominates or equals it).
    public func descends(from other: VersionVector) -> Bool {
        let ordering = compare(to: other)
        return ordering == .equal || ordering == .dominates
    }

    /// The entry-wise maximum: a vector that has seen everything either has.
    public func joined(with other: VersionVector) -> VersionVector {
        var result = self
        result.join(other)
        return result
    }

    /// Merges `other` in, entry by entry.
    public mutating func join(_ other: VersionVector) {
        counters.merge(other.counters, uniquingKeysWith: max)
    }

    /// The receiver with `device`'s counter one higher: the vector of a new write by `device`.
    public func incremented(for device: DeviceID) -> VersionVector {
        var result = self
        result.counters[device, default: 0] += 1
        return result
    }

    /// The entries in canonical order (by device ID bytes).
    public var sortedEntries: [(device: DeviceID, counter: UInt64)] {
        counters.sorted { $0.key < $1.key }.map { (device: $0.key, counter: $0.value) }
    }
}

extension VersionVector: Codable {
    /// JSON form: an object from device ID to counter, e.g. `{"a1b2": 3}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode([String: UInt64].self)
        guard raw.count <= Self.maximumEntries else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "version vector has too many entries")
        }
        var counters: [DeviceID: UInt64] = [:]
        for (key, value) in raw {
            guard let device = DeviceID(key) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "invalid device ID in version vector")
            }
            counters[device] = value
        }
        self.init(counters)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Dictionary(uniqueKeysWithValues: counters.map { ($0.key.rawValue, $0.value) }))
    }
}

extension VersionVector: CustomStringConvertible {
    public var description: String {
        "{" + sortedEntries.map { "\($0.device): \($0.counter)" }.joined(separator: ", ") + "}"
    }
}
