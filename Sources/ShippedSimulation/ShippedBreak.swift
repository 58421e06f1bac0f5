/// A deliberately broken variant of the run, for each property: the server or a device breaks
/// the property's rule on purpose, and the checker must catch it (a checker that cannot fail
/// checks nothing). Product code is left as it is; the breaking is done by the loopback's
/// tampering hooks or by the simulated device.
package enum ShippedBreak: String, CaseIterable, Sendable {
    /// The server answers some batches as stored, drops them, and hides the loss: it serves a
    /// stored value of such an item again, above the dropped version.
    case loseAcknowledged = "lose-acknowledged"
    /// The server serves a deleted item as its last live value again, under a vector above the
    /// deletion (an undone deletion, as a server restored without telling would).
    case undoDeletion = "undo-deletion"
    /// The server serves some item with a value no user wrote, under a vector above its own.
    case inventValue = "invent-value"
    /// The server never serves some items to some devices (the devices skip those applies).
    case skipApply = "skip-apply"
    /// The devices store their local-only items as synchronizable (the flag is ignored).
    case leakLocalOnly = "leak-local-only"
    /// The server corrupts some blobs of uploads before it stores them.
    case corruptUpload = "corrupt-upload"
    /// The faults never heal: every request is lost after the faulty phase.
    case neverHeal = "never-heal"
    /// The devices seal under the account's first key whatever epochs they learned since (the key
    /// a revoked device holds).
    case sealUnderTheFirstEpoch = "seal-under-the-first-epoch"

    /// The property the broken variant violates.
    package var property: ShippedProperty {
        switch self {
        case .loseAcknowledged: .acknowledgedWrites
        case .undoDeletion: .nothingComesBack
        case .inventValue: .noInventedValue
        case .skipApply: .agreement
        case .leakLocalOnly: .localOnlyStaysLocal
        case .corruptUpload: .versionsOpen
        case .neverHeal: .settles
        case .sealUnderTheFirstEpoch: .newestShownEpoch
        }
    }
}
