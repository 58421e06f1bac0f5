import SyncServer
import Testing

/// One behaviour every ``ServerStorage`` backend must have, run against a fresh, empty storage.
///
/// A backend's suite plugs its factory in:
/// `@Test(arguments: StorageContract.cases) func contract(_ c: StorageContractCase) async throws {
///     let storage = try await makeStorage(); try await c.run(storage) }`
struct StorageContractCase: Sendable, CustomTestStringConvertible {
    let name: String
    let run: @Sendable (any ServerStorage) async throws -> Void

    var testDescription: String { name }
}
