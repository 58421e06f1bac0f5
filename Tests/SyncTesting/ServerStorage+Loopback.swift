import Foundation
import SyncCore
import SyncServer

extension ServerStorage {
    /// Creates an account for devices that reach it over ``LoopbackZoneServer`` only: its sign-in
    /// material is a placeholder no device signs in with.
    package func createLoopbackAccount(named name: String, now: Date) async throws -> AccountID {
        let account = NewAccount(name: name, credentials: AccountCredentials(
            verifier: [1], kdfParameters: Array(#"{"algorithm":"scrypt"}"#.utf8), salt: [UInt8](repeating: 1, count: 16),
            wrappedAccountKey: [2], wrappedRecoveryKey: [3]))
        try await createAccount(account, now: now)
        return account.id
    }

    /// Registers `device` with `account` as a loopback device: named by its ID, with a token no
    /// one presents.
    package func registerLoopbackDevice(_ device: DeviceID, of account: AccountID, now: Date) async throws {
        _ = try await registerDevice(
            NewDevice(account: account, id: device, name: device.rawValue, tokenHash: Array(device.rawValue.utf8)), maximumDevices: 1_000,
            now: now)
    }
}
