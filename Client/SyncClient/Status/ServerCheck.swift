import Logging
import SyncProtocol

/// Whether the server takes this device's requests now: what `sync-client status` finds with one
/// authenticated request (`GET /v1/devices`) after checking the server's key against the pin.
/// Design §7: `status` exits non-zero, and says why, when the server is unreachable, the device
/// revoked or the account disabled (decision 0261).
package struct ServerCheck: Sendable, Codable, Equatable {
    /// What the check found.
    package enum State: String, Sendable, Codable {
        /// The server answered this device's request.
        case ok
        /// No connection, no TLS handshake, or no readable answer.
        case unreachable
        /// The server no longer takes this device's token: revoked, or enrolled again.
        case revoked
        /// The server's operator disabled the account (`sync-server admin disable`).
        case disabled
        /// The server's key is not the pinned one.
        case pinMismatch = "pin-mismatch"
        /// Any other refusal.
        case refused
    }

    /// What the check found.
    package var state: State
    /// One line for people; no secret.
    package var message: String

    package init(state: State, message: String) {
        self.state = state
        self.message = message
    }

    /// Checks the server of the keychain at `keychainPath`, giving up after `timeout`.
    package static func run(keychainPath: String, logger: Logger, timeout: Duration = .seconds(20)) async -> ServerCheck {
        await withTaskGroup(of: ServerCheck.self) { group in
            group.addTask {
                do {
                    _ = try await ClientSession.with(keychainPath: keychainPath, logger: logger) { session in
                        try await AccountAdministration(session: session).devices().count
                    }
                    return ServerCheck(state: .ok, message: "the server takes this device's requests")
                } catch {
                    return classified(error)
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return ServerCheck(state: .unreachable, message: "the server did not answer within \(timeout.components.seconds) s")
            }
            let first = await group.next() ?? ServerCheck(state: .unreachable, message: "the server was not checked")
            group.cancelAll()
            return first
        }
    }

    /// What a failed request says about the server and this device.
    package static func classified(_ error: any Error) -> ServerCheck {
        let error = SyncClientError.mapped(error)
        switch error.code {
        case .unreachable:
            return ServerCheck(state: .unreachable, message: "the server is unreachable: \(error.message)")
        case .unauthorized:
            return ServerCheck(
                state: .revoked,
                message: "the server no longer accepts this device: it was revoked (or its keychain enrolled again); \(SyncClientError.enrolAgain)")
        case .pinMismatch:
            return ServerCheck(state: .pinMismatch, message: error.message)
        default:
            switch ServerFailure.code(of: error) {
            case ErrorCode.accountDisabled?:
                return ServerCheck(state: .disabled, message: "the account is disabled by the server's operator; nothing was deleted")
            case ErrorCode.deviceRevoked?:
                return ServerCheck(state: .revoked, message: "the server no longer accepts this device: it was revoked; \(SyncClientError.enrolAgain)")
            default:
                return ServerCheck(state: .refused, message: error.message)
            }
        }
    }

    /// The error `status` exits with when the check did not find the server taking requests.
    package var error: SyncClientError? {
        switch state {
        case .ok: nil
        case .unreachable: SyncClientError(.unreachable, message)
        case .revoked: SyncClientError(.unauthorized, message)
        case .disabled, .refused: SyncClientError(.serverError, message)
        case .pinMismatch: SyncClientError(.pinMismatch, message)
        }
    }
}
