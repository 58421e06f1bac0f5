/// The checks every backend makes on an append to the device log, in one place.
enum AccountStateRules {
    /// Throws `logConflict` unless `index` is the log's `length`, and `quotaExceeded` when the log
    /// is full.
    static func checkAppend(at index: Int, length: Int) throws {
        guard index == length else {
            throw SyncServerError(.logConflict, "the device log has \(length) entries; read it and append again")
        }
        guard length < AccountStateLimits.maximumLogEntries else {
            throw SyncServerError(.quotaExceeded, "the device log is full")
        }
    }
}
