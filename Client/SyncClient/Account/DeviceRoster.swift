import KeychainCrypto
import SyncCore
import SyncProtocol

/// The account's devices as this device can vouch for them (decision 0122): the server's list
/// beside the device log this device verified. A device the server lists that the log does not
/// back is marked: no device of the account added it.
package struct DeviceRoster: Sendable, Equatable {
    /// What the verified device log says of a device.
    package enum LogStanding: Sendable, Equatable {
        /// Added by an entry the log verified, and not revoked.
        case member
        /// Added, then revoked, in the verified log.
        case revoked
        /// Not in the verified log: only the server says this device exists.
        case absent
    }

    /// One device.
    package struct Row: Sendable, Equatable {
        package var device: DeviceID
        /// Its name, as the server says; nil when the server does not list it.
        package var name: String?
        /// Whether the server says it is revoked.
        package var isRevokedOnServer: Bool
        package var standing: LogStanding
        package var isCurrent: Bool
    }

    package var rows: [Row]
    /// How many entries the verified log holds.
    package var logEntries: Int

    /// The server's `listed` devices beside `log`, then the log's members the server does not list.
    /// A device the server revoked that never was in the log is left out: an enrolment that
    /// failed and took itself back, or a stranger revoked — nothing anyone can use (decision 0269).
    package init(listed: [DeviceInfo], log: DeviceLog, current: DeviceID) {
        func standing(_ device: DeviceID) -> LogStanding {
            guard let member = log.members[device] else { return .absent }
            return member.isRevoked ? .revoked : .member
        }
        let listed = listed.filter { $0.revokedAt == nil || log.members[$0.id] != nil || $0.id == current }
        rows = listed.map {
            Row(device: $0.id, name: $0.name, isRevokedOnServer: $0.revokedAt != nil, standing: standing($0.id), isCurrent: $0.id == current)
        }
        let unlisted = Set(log.members.keys).subtracting(listed.map(\.id))
        rows += unlisted.sorted { $0.rawValue < $1.rawValue }.map {
            Row(device: $0, name: nil, isRevokedOnServer: false, standing: standing($0), isCurrent: $0 == current)
        }
        logEntries = log.entries.count
    }

    /// Devices the server lists as active that the verified log does not back.
    package var unbacked: [Row] { rows.filter { $0.standing == .absent && !$0.isRevokedOnServer && $0.name != nil } }

    /// One line per device: ID, name, the server's state, the log's word, and "(this device)".
    package var text: String {
        rows.map { row in
            let server = row.name == nil ? "not listed by the server" : row.isRevokedOnServer ? "revoked" : "active"
            let log: String
            switch row.standing {
            case .member: log = "verified"
            case .revoked: log = "revoked in the device log"
            case .absent: log = "NOT IN THE DEVICE LOG: no device of the account added it"
            }
            let name = TerminalText.sanitized(row.name ?? "-")
            return "\(row.device)\t\(name)\t\(server)\t\(log)\(row.isCurrent ? "\t(this device)" : "")"
        }.joined(separator: "\n")
    }
}
