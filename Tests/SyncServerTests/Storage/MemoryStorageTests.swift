import SyncServer
import Testing

/// The reference model behind the storage contract: the same cases as SQLite and PostgreSQL.
@Suite("In-memory storage")
struct MemoryStorageTests {
    @Test(arguments: StorageContract.cases)
    func contract(_ behaviour: StorageContractCase) async throws {
        try await behaviour.run(MemoryStorage())
    }
}
