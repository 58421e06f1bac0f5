import Foundation

/// A test's own failure to reach the state it waits for (not the product's error).
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Polls `condition` until it holds; throws ``TestFailure`` once `timeout` has passed.
public func eventually(timeout: Duration = .seconds(60), _ what: String, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        if ContinuousClock.now > deadline { throw TestFailure("timed out waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(10))
    }
}
