import Foundation
import KeyValueStore
import Synchronization
import SyncCore

/// A clock the test moves by hand, in milliseconds since 1970.
final class ManualClock: Sendable {
    private let milliseconds: Mutex<Int64>

    init(_ start: Int64 = 1_700_000_000_000) { milliseconds = Mutex(start) }

    func advance(by delta: Int64 = 1) { milliseconds.withLock { $0 += delta } }

    var now: @Sendable () -> Date {
        { [self] in Date(timeIntervalSince1970: Double(milliseconds.withLock { $0 }) / 1000) }
    }
}

/// Key-value databases of simulated devices in one temporary directory, removed by ``remove()``.
struct TemporaryStores {
    let directory: URL
    let clock = ManualClock()

    init() {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("kv-tests-\(UUID().uuidString)")
    }

    /// The keychain path of a device; its key-value database is beside it.
    func keychainPath(_ device: String) -> String {
        directory.appendingPathComponent(device).appendingPathComponent("keychain.db").path
    }

    /// Opens (again) the database of `device`, whose writes carry that device ID.
    func database(_ device: String = "device-a", clock: ManualClock? = nil) throws -> KeyValueDatabase {
        try KeyValueDatabase.open(
            besideKeychainAt: keychainPath(device),
            configuration: .init(now: (clock ?? self.clock).now, device: DeviceID(device)!))
    }

    /// The store `name` of `device`.
    func store(_ name: String = "com.example.app", device: String = "device-a", clock: ManualClock? = nil) throws -> KeyValueStore {
        try database(device, clock: clock).store(named: name)
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Collects a store's change events from now on, in order.
final class ChangeRecorder: Sendable {
    private final class Received: Sendable {
        let changes = Mutex<[KeyValueChange]>([])
    }

    private let received = Received()
    private let task: Task<Void, Never>

    init(_ store: KeyValueStore) {
        let stream = store.changes()
        let received = received
        task = Task { for await change in stream { received.changes.withLock { $0.append(change) } } }
    }

    var changes: [KeyValueChange] { received.changes.withLock { $0 } }

    /// Waits (polling, with a deadline) until `count` events arrived; returns them.
    func waitFor(_ count: Int, timeout: Duration = .seconds(60)) async -> [KeyValueChange] {
        let deadline = ContinuousClock.now + timeout
        while changes.count < count && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        return changes
    }

    deinit { task.cancel() }
}
