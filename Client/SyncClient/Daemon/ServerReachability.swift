import Logging
import Synchronization
import SyncProtocol

/// What the daemon last found of its server, so that it says so once when the server goes away
/// (or refuses the account) and once when it answers again, not at every retry (decision 0261).
package final class ServerReachability: Sendable {
    /// Why requests fail, when they do.
    private enum Trouble: Equatable {
        case unreachable
        case accountDisabled
    }

    /// nil: answering (or not tried yet).
    private let trouble = Mutex<Trouble?>(nil)

    package init() {}

    /// Notes a failed request: logs one line when the server has just become unreachable or
    /// started refusing the account, a debug line at every retry after that. Returns false for
    /// an error that says nothing about reaching the server (the caller reports it).
    @discardableResult
    package func failed(_ error: any Error, logger: Logger) -> Bool {
        let error = SyncClientError.mapped(error)
        let found: Trouble
        if error.code == .unreachable {
            found = .unreachable
        } else if ServerFailure.code(of: error) == ErrorCode.accountDisabled {
            found = .accountDisabled
        } else {
            return false
        }
        let previous = trouble.withLock { trouble in
            defer { trouble = found }
            return trouble
        }
        guard previous != found else {
            logger.debug("server still not answering; retrying", metadata: ["error": "\(error.message)"])
            return true
        }
        switch found {
        case .unreachable:
            logger.warning("server unreachable; retrying until it answers", metadata: ["error": "\(error.message)"])
        case .accountDisabled:
            logger.warning("the server's operator disabled this account; retrying until it is enabled")
        }
        return true
    }

    /// Notes an answer: logs one line when the server was not answering until now.
    package func answered(logger: Logger) {
        let previous = trouble.withLock { trouble in
            defer { trouble = nil }
            return trouble
        }
        if previous != nil { logger.notice("server reachable again") }
    }
}
