import Synchronization

/// What a one-shot command leaves for the process's end to free. Freeing a zone's state record by
/// record takes longer than a quiet `sync` of a large keychain takes to run (19 of its 290 ms at
/// 10,000 items); the process's end returns the memory at once. Nothing kept here holds anything
/// unwritten: a driver's state and the keychain are committed before the command returns.
enum KeptUntilExit {
    private static let kept = Mutex<[any Sendable]>([])

    static func keep(_ value: any Sendable) {
        kept.withLock { $0.append(value) }
    }
}
