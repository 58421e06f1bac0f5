import Synchronization

/// The connections open now, by ``AddressKey`` and in all, held to
/// ``ServerConfiguration/Connections``'s caps (decision 0266). A connection over a cap is closed
/// as soon as it is accepted, before a TLS handshake or a byte is read.
final class ConnectionLimiter: Sendable {
    private struct Counts {
        var total = 0
        var byAddress: [AddressKey: Int] = [:]
    }

    private let maximumPerAddress: Int
    private let maximumTotal: Int
    private let counts = Mutex(Counts())

    init(_ configuration: ServerConfiguration.Connections) {
        maximumPerAddress = configuration.maximumPerAddress
        maximumTotal = configuration.maximumTotal
    }

    /// Counts a new connection from `address`; false, and not counted, when it would pass either
    /// cap.
    func open(_ address: AddressKey) -> Bool {
        counts.withLock { counts in
            let fromAddress = counts.byAddress[address, default: 0]
            guard counts.total < maximumTotal, fromAddress < maximumPerAddress else { return false }
            counts.total += 1
            counts.byAddress[address] = fromAddress + 1
            return true
        }
    }

    /// Forgets a connection ``open(_:)`` counted.
    func close(_ address: AddressKey) {
        counts.withLock { counts in
            counts.total -= 1
            let left = counts.byAddress[address, default: 1] - 1
            counts.byAddress[address] = left > 0 ? left : nil
        }
    }

    /// The connections open now.
    var total: Int { counts.withLock { $0.total } }
}
