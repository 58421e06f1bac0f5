import Dispatch
import Foundation
import SyncClient

#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM during a command that must clean up after itself (an enrolment waiting for
/// its approval takes its registration back, decision 0269): the signal cancels the work instead
/// of ending the process, and the command then ends with the usual status of an interruption.
enum Interruption {
    static func cancelling<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let work = Task { try await body() }
        let sources = [SIGINT, SIGTERM].map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { work.cancel() }
            source.resume()
            return source
        }
        defer {
            for source in sources { source.cancel() }
        }
        do {
            return try await work.value
        } catch where work.isCancelled {
            // Whatever the cancelled work threw (a cancelled sleep, a request cut short).
            throw SyncClientError(.invalidInput, "interrupted; the enrolment was taken back")
        }
    }
}
