import KeychainCrypto
import SyncCore
import SyncProtocol

/// Reads and appends the account's device log through the server, trusting nothing it serves
/// (decisions 0120, 0122): every entry is verified from the first, and the log served must extend
/// the one this device verified before, entry for entry.
package struct DeviceLogExchange: Sendable {
    private let connection: ServerConnection
    private let account: String
    private let logKeys: [UInt32: DeviceLogKey]

    /// How many times an append is rebuilt after another device appended first.
    private static let appendAttempts = 5

    package init(connection: ServerConnection, account: String, accountKey: AccountKey) {
        self.connection = connection
        self.account = account
        logKeys = [VersionSealer.keyEpoch: DeviceLogKey(accountKey: accountKey)]
    }

    /// The log the server serves now, verified, and checked to extend `verified`.
    ///
    /// - Throws: ``SyncClientError`` `untrustedAccountState` when the served log is shorter than
    ///   `verified` or differs from it (the server rolled it back or forked it), or holds an entry
    ///   that does not verify.
    package func fetch(extending verified: [[UInt8]]) async throws -> DeviceLog {
        let served = try await servedEntries()
        var log = DeviceLog(account: account)
        guard served.count >= verified.count, zip(verified, served).allSatisfy({ $0 == $1 }) else {
            throw SyncClientError(
                .untrustedAccountState,
                "the server's device log (\(served.count) entries) does not extend the \(verified.count) this device verified: "
                    + "it was rolled back or forked")
        }
        for (index, entry) in served.enumerated() {
            do {
                try log.append(entry, logKeys: logKeys)
            } catch {
                throw SyncClientError(
                    .untrustedAccountState, "entry \(index) of the server's device log does not verify", underlying: error)
            }
        }
        return log
    }

    /// Appends the entry `make` builds for the log as the server now serves it (verified against
    /// `verified`), and returns the log with it; `make` returns nil when the log needs no entry
    /// any more. When another device appended first, reads the log again and rebuilds the entry.
    package func append(
        extending verified: [[UInt8]], _ make: (DeviceLog) throws -> [UInt8]?
    ) async throws -> DeviceLog {
        for _ in 0..<Self.appendAttempts {
            var log = try await fetch(extending: verified)
            guard let entry = try make(log) else { return log }
            do {
                try await connection.send(.POST, "/v1/device-log", body: DeviceLogAppendRequest(index: log.entries.count, entry: Base64Bytes(entry)))
            } catch where ServerFailure.code(of: error) == ErrorCode.logConflict {
                continue
            }
            do {
                try log.append(entry, logKeys: logKeys)
            } catch {
                throw SyncClientError(.localStorage, "this device built a device-log entry it cannot verify", underlying: error)
            }
            return log
        }
        throw SyncClientError(.busy, "other devices kept changing the device log; try again")
    }

    /// Every entry the server serves, page by page, held to the server's bounds.
    private func servedEntries() async throws -> [[UInt8]] {
        var entries: [[UInt8]] = []
        var hasMore = true
        while hasMore {
            let page = try await connection.send(
                .GET, "/v1/device-log?from=\(entries.count)", body: nil, as: DeviceLogResponse.self)
            let inOrder = page.entries.enumerated().allSatisfy { $0.element.index == entries.count + $0.offset }
            guard inOrder, page.entries.count <= DeviceLogBounds.maximumPage, !(page.hasMore && page.entries.isEmpty),
                entries.count + page.entries.count <= DeviceLogBounds.maximumEntries
            else {
                throw SyncClientError(.untrustedAccountState, "the server served a malformed page of the device log")
            }
            entries += page.entries.map(\.entry.bytes)
            hasMore = page.hasMore
        }
        return entries
    }
}

extension DeviceLog {
    /// The entry that adds `device` with `identity`, signed by it and sealed with the current
    /// epoch's log key: how a device holding the account key joins (the first device, a password
    /// enrolment, or a device enrolled before the log existed).
    package func joining(
        _ device: DeviceID, identity: DeviceIdentity, accountKey: AccountKey
    ) throws(SyncClientError) -> [UInt8] {
        let entry = DeviceLogEntry(
            account: account, index: UInt64(entries.count), previous: head, kind: .add, subject: device,
            signingKey: identity.signingKey.publicKey.rawRepresentation, agreementKey: identity.agreementKey.publicKey,
            epoch: epoch ?? VersionSealer.keyEpoch, signer: device)
        return try Self.sign(entry, with: identity, sealedWith: DeviceLogKey(accountKey: accountKey))
    }

    /// The entry by which `signer` (a current member) adds `device` with its public keys: an
    /// approval (decision 0133).
    package func approving(
        _ device: DeviceID, signingKey: [UInt8], agreementKey: [UInt8], by signer: DeviceID, identity: DeviceIdentity
    ) throws(SyncClientError) -> [UInt8] {
        let entry = DeviceLogEntry(
            account: account, index: UInt64(entries.count), previous: head, kind: .add, subject: device,
            signingKey: signingKey, agreementKey: agreementKey, epoch: epoch ?? VersionSealer.keyEpoch, signer: signer)
        return try Self.sign(entry, with: identity, sealedWith: nil)
    }

    /// The entry by which `signer` (a current member) revokes `device`.
    package func revoking(_ device: DeviceID, by signer: DeviceID, identity: DeviceIdentity) throws(SyncClientError) -> [UInt8] {
        let entry = DeviceLogEntry(
            account: account, index: UInt64(entries.count), previous: head, kind: .revoke, subject: device,
            epoch: epoch ?? VersionSealer.keyEpoch, signer: signer)
        return try Self.sign(entry, with: identity, sealedWith: nil)
    }

    private static func sign(
        _ entry: DeviceLogEntry, with identity: DeviceIdentity, sealedWith logKey: DeviceLogKey?
    ) throws(SyncClientError) -> [UInt8] {
        do {
            return try entry.signed(with: identity.signingKey, sealedWith: logKey)
        } catch {
            throw SyncClientError(.localStorage, "cannot sign a device-log entry", underlying: error)
        }
    }
}
