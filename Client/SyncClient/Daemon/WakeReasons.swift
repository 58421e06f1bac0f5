import Synchronization
import SyncCore

/// Why the daemon's next pass runs, and so what it must cover (decision 0190). The journal
/// watchers, the push channel and the timer note a reason and ring; the sync loop takes every
/// reason noted since the last pass at once.
package final class WakeReasons: Sendable {
    /// The reasons noted since the last pass.
    package struct Noted: Sendable, Equatable {
        /// Every zone is due: the start, a (re)connection of the push channel, the periodic
        /// check, a retry, or a push message not understood.
        package var everything = false
        /// The keychain changed here.
        package var keychain = false
        /// A key-value store changed here.
        package var keyValue = false
        /// The highest account sequence each push message announced, by zone.
        package var announced: [ZoneID: UInt64] = [:]
        /// A shared group's zone changed (a push message).
        package var groups = false

        package init(everything: Bool = false) { self.everything = everything }
    }

    private let noted = Mutex(Noted(everything: true))
    private let doorbell = Doorbell()

    /// Starts with every zone due.
    package init() { doorbell.ring() }

    package func everything() { note { $0.everything = true } }
    package func keychainChanged() { note { $0.keychain = true } }
    package func keyValueChanged() { note { $0.keyValue = true } }
    package func groupChanged() { note { $0.groups = true } }

    /// A push message: `zone` changed, and the account's sequence after the change is `sequence`.
    package func announced(_ zone: ZoneID, sequence: UInt64) {
        note { $0.announced[zone] = max($0.announced[zone] ?? 0, sequence) }
    }

    /// Waits for a reason and takes every reason noted so far; nil once cancelled.
    package func next() async -> Noted? {
        guard await doorbell.wait() else { return nil }
        return noted.withLock { noted in
            defer { noted = Noted() }
            return noted
        }
    }

    private func note(_ change: (inout Noted) -> Void) {
        noted.withLock { change(&$0) }
        doorbell.ring()
    }
}

extension WakeReasons.Noted {
    /// Whether a zone is due whose cursor is `cursor`: a change of it announced at a sequence the
    /// device has not pulled up to. The device's own pushes announce sequences its pull has
    /// already passed by the time the pass would run.
    package func announcesNews(for zone: ZoneID, cursor: UInt64) -> Bool {
        (announced[zone] ?? 0) > cursor
    }
}
