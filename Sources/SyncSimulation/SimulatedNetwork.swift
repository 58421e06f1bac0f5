import SyncCore

/// The simulated network between the devices and the server: it loses, duplicates, delays and so
/// reorders messages, and cuts off devices that are offline or partitioned. Delivery order is
/// (delivery time, send order): deterministic for a seed.
struct SimulatedNetwork {
    enum Endpoint: Hashable {
        case server
        case device(Int)
    }

    enum Message {
        case push(PushBatch<SealedVersion>)
        case pull(PullRequest)
        case pushAnswer(PushResponse, zone: ZoneID)
        case pullAnswer(PullResponse<SealedVersion>, zone: ZoneID)
    }

    struct Envelope {
        var deliverAt: Int64
        var order: UInt64
        var to: Endpoint
        var message: Message
    }

    var inFlight: [Envelope] = []
    var nextOrder: UInt64 = 0
    /// When false (after healing) nothing is lost or duplicated.
    var isFaulty = true

    mutating func send(
        _ message: Message, to destination: Endpoint, now: Int64,
        configuration: SimulationConfiguration, random: inout SplitMix64
    ) {
        if isFaulty, random.chance(percent: configuration.dropPercent) { return }
        let copies = isFaulty && random.chance(percent: configuration.duplicatePercent) ? 2 : 1
        for _ in 0..<copies {
            let delay = Int64(random.number(in: 1...configuration.maximumDelay))
            inFlight.append(Envelope(deliverAt: now + delay, order: nextOrder, to: destination, message: message))
            nextOrder += 1
        }
    }

    /// Removes and returns the next message due at `now`, if any.
    mutating func nextDue(now: Int64) -> Envelope? {
        var best: Int?
        for (index, envelope) in inFlight.enumerated() where envelope.deliverAt <= now {
            if let current = best, (inFlight[current].deliverAt, inFlight[current].order) < (envelope.deliverAt, envelope.order) {
                continue
            }
            best = index
        }
        guard let best else { return nil }
        return inFlight.remove(at: best)
    }

    /// The earliest delivery time in flight.
    var nextDeliveryTime: Int64? { inFlight.map(\.deliverAt).min() }
}
