/// A property the checker holds a run to.
package enum ShippedProperty: String, Sendable {
    /// The devices agree (less what each set aside or kept and reported).
    case agreement
    /// Every acknowledged write is live, in a history, or was replaced by a user who saw it.
    case acknowledgedWrites = "acknowledged-writes"
    /// A value that left a device never comes back to it; a value a user deleted is not live.
    case nothingComesBack = "nothing-comes-back"
    /// No device shows a value no user wrote.
    case noInventedValue = "no-invented-value"
    /// Nothing local-only reaches the server or another device.
    case localOnlyStaysLocal = "local-only-stays-local"
    /// Every version the server received opens with the account's key.
    case versionsOpen = "versions-open"
    /// Once the faults heal, the devices sync without failing until a pass changes nothing.
    case settles
    /// No device sends a version sealed under an older key epoch than one a current member's
    /// statement it was served names (decision 0250): a server that keeps a revocation from it
    /// gets nothing the revoked device could open once another device has shown the epoch.
    case newestShownEpoch = "newest-shown-epoch"
    /// No member's device holds a value written by a member's device while its account was
    /// removed from the group (a shared group's run, decision 0293), unless it was added back.
    case removedMemberWritesNothing = "removed-member-writes-nothing"
    /// No device of a removed member holds a value written after its removal (a shared group's run).
    case removedMemberReadsNothingLater = "removed-member-reads-nothing-later"
    /// A device of an account out of the group, once it synced, holds none of the group's items
    /// (a shared group's run, decision 0299).
    case departedDeviceHoldsNothing = "departed-device-holds-nothing"
}

/// One thing the checker found wrong.
package struct ShippedViolation: Sendable, CustomStringConvertible {
    package var property: ShippedProperty
    package var message: String

    package var description: String { "[\(property.rawValue)] \(message)" }
}
