extension VersionVector {
    /// The vector of a new write by `device` over the receiver (the join of what it has seen),
    /// whose own entry becomes `counter`, the device's next write number for the zone.
    ///
    /// A device numbers all its writes of a zone with one counter, not one per item, so a new
    /// write is never dominated by any earlier version, even of an item whose history the device
    /// has forgotten (a deleted item it dropped, or one the server purged): nothing but the
    /// device itself ever puts its entry that high. `counter` must exceed the receiver's entry.
    public func written(by device: DeviceID, counter: UInt64) -> VersionVector {
        precondition(counter > self[device], "a device's write counter never goes backwards")
        var counters = counters
        counters[device] = counter
        return VersionVector(counters)
    }

    /// The join of many vectors: the empty vector for none.
    public static func join(_ vectors: some Sequence<VersionVector>) -> VersionVector {
        vectors.reduce(into: VersionVector()) { $0.join($1) }
    }
}
