import Crypto
import Foundation
import SyncCore
import SyncServer
import Testing

/// The behaviours shared by every storage backend (SQLite here, PostgreSQL in its own suite).
enum StorageContract {
    static let cases: [StorageContractCase] = accountCases + deviceCases + uploadCases + feedCases + collectionCases + ruleCases
        + administrationCases + accountStateCases + approvalCases + groupCases

    static let accountCases: [StorageContractCase] = [
        StorageContractCase(name: "createdAccountIsFoundByNameAndID") { storage in
            let account = Fixture.account("alice")
            try await storage.createAccount(account, now: Fixture.epoch)
            let byName = try #require(try await storage.account(named: "alice"))
            #expect(byName.id == account.id)
            #expect(byName.credentials == account.credentials)
            #expect(byName.createdAt == Fixture.epoch)
            #expect(try await storage.account(id: account.id) == byName)
            #expect(try await storage.account(named: "bob") == nil)
            #expect(try await storage.account(id: AccountID()) == nil)
        },
        StorageContractCase(name: "duplicateAccountNameIsRefused") { storage in
            try await storage.createAccount(Fixture.account("alice"), now: Fixture.epoch)
            try await Fixture.expectCode(.accountExists) {
                try await storage.createAccount(Fixture.account("alice"), now: Fixture.epoch)
            }
        },
        StorageContractCase(name: "replacedCredentialsAreReturned") { storage in
            let account = Fixture.account("alice")
            try await storage.createAccount(account, now: Fixture.epoch)
            let replacement = AccountCredentials(
                verifier: [9, 9], kdfParameters: Array(#"{"n":2}"#.utf8), salt: [8],
                wrappedAccountKey: [7, 7, 7], wrappedRecoveryKey: nil)
            try await storage.replaceCredentials(of: account.id, with: replacement)
            #expect(try await storage.account(id: account.id)?.credentials == replacement)
            try await Fixture.expectCode(.notFound) {
                try await storage.replaceCredentials(of: AccountID(), with: replacement)
            }
        },
    ]

    static let deviceCases: [StorageContractCase] = [
        StorageContractCase(name: "registeredDeviceIsFoundByTokenHashOnly") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            let device = try await Fixture.register("laptop", token: 1, account: account, in: storage)
            #expect(device.isActive)
            #expect(try await storage.device(tokenHash: Fixture.tokenHash(1)) == device)
            #expect(try await storage.device(tokenHash: Fixture.tokenHash(2)) == nil)
        },
        StorageContractCase(name: "signingInAgainReplacesTheToken") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            _ = try await Fixture.register("laptop", token: 1, account: account, in: storage)
            _ = try await Fixture.register("laptop", token: 2, account: account, in: storage)
            #expect(try await storage.device(tokenHash: Fixture.tokenHash(1)) == nil)
            #expect(try await storage.device(tokenHash: Fixture.tokenHash(2))?.id == Fixture.device("laptop"))
            #expect(try await storage.devices(of: account).count == 1)
        },
        StorageContractCase(name: "revokedDeviceIsListedButItsTokenNoLongerWorks") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            let other = try await Fixture.createAccount("bob", in: storage)
            _ = try await Fixture.register("b-phone", token: 1, account: account, in: storage)
            _ = try await Fixture.register("a-laptop", token: 2, account: account, in: storage)
            _ = try await Fixture.register("c-bob", token: 3, account: other, in: storage)
            #expect(try await storage.devices(of: account).map(\.id.rawValue) == ["a-laptop", "b-phone"])
            #expect(try await storage.revokeDevice(Fixture.device("b-phone"), of: account, now: Fixture.later(5)))
            #expect(try await storage.device(tokenHash: Fixture.tokenHash(1)) == nil)
            let listed = try await storage.devices(of: account)
            #expect(listed.first { $0.id.rawValue == "b-phone" }?.revokedAt == Fixture.later(5))
            // Another account's device and an unknown one cannot be revoked through this account.
            #expect(try await storage.revokeDevice(Fixture.device("c-bob"), of: account, now: Fixture.epoch) == false)
            #expect(try await storage.revokeDevice(Fixture.device("nobody"), of: account, now: Fixture.epoch) == false)
            #expect(try await storage.device(tokenHash: Fixture.tokenHash(3)) != nil)
        },
        StorageContractCase(name: "deviceQuotaRefusesNewDevicesButNotSignInAgain") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            _ = try await Fixture.register("one", token: 1, account: account, maximumDevices: 2, in: storage)
            _ = try await Fixture.register("two", token: 2, account: account, maximumDevices: 2, in: storage)
            try await Fixture.expectCode(.quotaExceeded) {
                _ = try await Fixture.register("three", token: 3, account: account, maximumDevices: 2, in: storage)
            }
            _ = try await Fixture.register("two", token: 4, account: account, maximumDevices: 2, in: storage)
            #expect(try await storage.device(tokenHash: Fixture.tokenHash(3)) == nil)
        },
    ]

    static let uploadCases: [StorageContractCase] = [
        StorageContractCase(name: "acceptedWritesGetConsecutiveSequenceNumbersPerAccount") { storage in
            let alice = try await Fixture.createAccount("alice", in: storage)
            let bob = try await Fixture.createAccount("bob", in: storage)
            let receipt = try await Fixture.upload(["i1": ["d": 1], "i2": ["d": 1], "i3": ["d": 1]], account: alice, in: storage)
            #expect(receipt.results.map(\.outcome) == [.applied, .applied, .applied])
            #expect(receipt.results.map(\.sequence) == [1, 2, 3])
            #expect(receipt.latestSequence == 3)
            let bobs = try await Fixture.upload(["i1": ["d": 1]], account: bob, in: storage)
            #expect(bobs.results.map(\.sequence) == [1])
        },
        StorageContractCase(name: "retriedUploadIsStaleAndGetsNoSequence") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            _ = try await Fixture.upload(["i1": ["d": 2]], account: account, in: storage)
            let retry = try await Fixture.upload(["i1": ["d": 2]], account: account, in: storage)
            let older = try await Fixture.upload(["i1": ["d": 1]], account: account, in: storage)
            #expect(retry.results == [.init(id: "i1", outcome: .stale, sequence: nil)])
            #expect(older.results.map(\.outcome) == [.stale])
            #expect(older.latestSequence == 1)
        },
        StorageContractCase(name: "concurrentVersionsAreKeptUntilOneDominatesBoth") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            _ = try await Fixture.upload(["i1": ["a": 1]], account: account, in: storage)
            let concurrent = try await Fixture.upload(["i1": ["b": 1]], account: account, in: storage)
            #expect(concurrent.results.map(\.outcome) == [.conflictKept])
            var page = try await Fixture.page(account: account, in: storage)
            #expect(Set(page.items.first?.versions.map(\.vector) ?? []) == [Fixture.vector(["a": 1]), Fixture.vector(["b": 1])])
            let resolved = try await Fixture.upload(["i1": ["a": 1, "b": 2]], account: account, in: storage)
            #expect(resolved.results.map(\.outcome) == [.applied])
            page = try await Fixture.page(account: account, in: storage)
            #expect(page.items.map(\.versions) == [[Fixture.version(["a": 1, "b": 2])]])
        },
        StorageContractCase(name: "batchWithTooManySiblingsWritesNothing") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            _ = try await Fixture.upload(["i1": ["a": 1]], account: account, in: storage)
            _ = try await Fixture.upload(["i1": ["b": 1]], account: account, limits: .init(maximumItemsPerAccount: 10, maximumSiblings: 2), in: storage)
            let batch = UploadBatch(account: account, device: Fixture.device("d"), zone: "keychain", cursor: 0, items: [
                .init(key: "fresh", version: Fixture.version(["d": 1])),
                .init(key: "i1", version: Fixture.version(["c": 1])),
            ])
            try await Fixture.expectCode(.tooManySiblings) {
                _ = try await storage.upload(batch, limits: .init(maximumItemsPerAccount: 10, maximumSiblings: 2), now: Fixture.epoch)
            }
            let page = try await Fixture.page(account: account, in: storage)
            #expect(page.items.map(\.item) == ["i1"])
            #expect(page.cursor == 2)
        },
        StorageContractCase(name: "batchOverTheItemQuotaWritesNothing") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            let limits = UploadLimits(maximumItemsPerAccount: 2)
            _ = try await Fixture.upload(["i1": ["d": 1]], account: account, limits: limits, in: storage)
            try await Fixture.expectCode(.quotaExceeded) {
                _ = try await Fixture.upload(["i2": ["d": 1], "i3": ["d": 1]], account: account, limits: limits, in: storage)
            }
            // Updating existing items never counts against the quota.
            let update = try await Fixture.upload(["i1": ["d": 2], "i2": ["d": 1]], account: account, limits: limits, in: storage)
            #expect(update.results.map(\.outcome) == [.applied, .applied])
            #expect(update.results.map(\.sequence) == [2, 3])
        },
        StorageContractCase(name: "sameItemTwiceInOneBatchMergesInOrder") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            let batch = UploadBatch(account: account, device: Fixture.device("d"), zone: "keychain", cursor: 0, items: [
                .init(key: "i1", version: Fixture.version(["d": 1])),
                .init(key: "i1", version: Fixture.version(["d": 2])),
                .init(key: "i1", version: Fixture.version(["d": 1])),
            ])
            let receipt = try await storage.upload(batch, limits: Fixture.limits, now: Fixture.epoch)
            #expect(receipt.results.map(\.outcome) == [.applied, .applied, .stale])
            let page = try await Fixture.page(account: account, in: storage)
            #expect(page.items == [ChangedItem(item: "i1", sequence: 2, versions: [Fixture.version(["d": 2])])])
        },
    ]

    static let feedCases: [StorageContractCase] = [
        StorageContractCase(name: "changesArePagedInSequenceOrder") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            for id in ["a", "b", "c", "d", "e"] {
                _ = try await Fixture.upload([id: ["d": 1]], account: account, in: storage)
            }
            let first = try await Fixture.page(account: account, after: 0, limit: 2, in: storage)
            #expect(first.items.map(\.item) == ["a", "b"])
            #expect(first.cursor == 2 && first.hasMore)
            let second = try await Fixture.page(account: account, after: first.cursor, limit: 2, in: storage)
            #expect(second.items.map(\.item) == ["c", "d"])
            let last = try await Fixture.page(account: account, after: second.cursor, limit: 2, in: storage)
            #expect(last.items.map(\.item) == ["e"])
            #expect(last.cursor == 5 && !last.hasMore)
            let empty = try await Fixture.page(account: account, after: 5, limit: 2, in: storage)
            #expect(empty.items.isEmpty && empty.cursor == 5 && !empty.hasMore)
        },
        StorageContractCase(name: "changedItemAppearsOnceAtItsLatestSequence") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            _ = try await Fixture.upload(["a": ["d": 1], "b": ["d": 1]], account: account, in: storage)
            _ = try await Fixture.upload(["a": ["d": 2]], account: account, in: storage)
            let page = try await Fixture.page(account: account, in: storage)
            #expect(page.items.map(\.item) == ["b", "a"])
            #expect(page.items.map(\.sequence) == [2, 3])
            #expect(try await Fixture.page(account: account, after: 2, in: storage).items.map(\.item) == ["a"])
        },
        StorageContractCase(name: "zonesAndAccountsDoNotSeeEachOthersChanges") { storage in
            let alice = try await Fixture.createAccount("alice", in: storage)
            let bob = try await Fixture.createAccount("bob", in: storage)
            _ = try await Fixture.upload(["k": ["d": 1]], account: alice, zone: "keychain", in: storage)
            _ = try await Fixture.upload(["v": ["d": 1]], account: alice, zone: "kv.settings", in: storage)
            _ = try await Fixture.upload(["b": ["d": 1]], account: bob, zone: "keychain", in: storage)
            #expect(try await Fixture.page(account: alice, zone: "keychain", in: storage).items.map(\.item) == ["k"])
            #expect(try await Fixture.page(account: alice, zone: "kv.settings", in: storage).items.map(\.item) == ["v"])
            #expect(try await Fixture.page(account: bob, zone: "keychain", in: storage).items.map(\.item) == ["b"])
            #expect(try await Fixture.page(account: bob, zone: "kv.settings", in: storage).items.isEmpty)
        },
        StorageContractCase(name: "blobsAndDeletedFlagsRoundTrip") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            let blob = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let version = SealedVersion(vector: Fixture.vector(["d": 1]), isDeleted: true, payload: blob)
            let batch = UploadBatch(account: account, device: Fixture.device("d"), zone: "keychain", cursor: 0, items: [.init(key: "x", version: version)])
            _ = try await storage.upload(batch, limits: Fixture.limits, now: Fixture.epoch)
            #expect(try await Fixture.page(account: account, in: storage).items.first?.versions == [version])
        },
        StorageContractCase(name: "uploadsAreAnnouncedToListeners") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            let heard = AsyncStream<AccountChange>.makeStream()
            let listener = Task { try await storage.listenForChanges { heard.continuation.yield($0) } }
            defer { listener.cancel() }
            // The listener may start after the first upload: upload until one is heard.
            let uploader = Task {
                var counter: UInt64 = 1
                while !Task.isCancelled {
                    _ = try await Fixture.upload(["i": ["d": counter]], account: account, zone: "kv.z", in: storage)
                    counter += 1
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            defer { uploader.cancel() }
            let received = try await withTimeLimit { await heard.stream.first { _ in true } }
            #expect(received?.account == account)
            #expect(received?.zone == "kv.z")
            #expect((received?.sequence ?? 0) >= 1)
        },
    ]

    static let collectionCases: [StorageContractCase] = [
        StorageContractCase(name: "serverSecretIsCreatedOnceAndKept") { storage in
            let first = try await storage.serverSecret()
            let again = try await storage.serverSecret()
            #expect(first.bitCount == 256)
            #expect(first == again)
        },
        StorageContractCase(name: "lastPageCursorIsTheAccountsLatestSequence") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            _ = try await Fixture.upload(["k": ["d": 1]], account: account, zone: "keychain", in: storage)
            _ = try await Fixture.upload(["v": ["d": 1], "w": ["d": 1]], account: account, zone: "kv.other", in: storage)
            let page = try await Fixture.page(account: account, zone: "keychain", in: storage)
            #expect(page.items.map(\.item) == ["k"])
            #expect(page.cursor == 3 && !page.hasMore)
            let partial = try await Fixture.page(account: account, zone: "kv.other", limit: 1, in: storage)
            #expect(partial.cursor == 2 && partial.hasMore)
        },
        StorageContractCase(name: "batchMadeBelowTheHorizonIsRefusedWhole") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            _ = try await Fixture.register("one", token: 1, account: account, in: storage)
            _ = try await Fixture.upload(["gone": ["one": 1]], account: account, in: storage)
            _ = try await Fixture.upload(["gone": ["one": 2]], deleted: true, account: account, cursor: 1, in: storage)
            try await storage.acknowledge(device: Fixture.device("one"), of: account, zone: "keychain", through: 2, now: Fixture.epoch)
            #expect(try await storage.collectGarbage(activeSince: nil, now: Date()) == 1)
            // A device that last saw cursor 1 still holds the old copy: it must not come back.
            try await Fixture.expectCode(.cursorExpired) {
                _ = try await Fixture.upload(["gone": ["one": 1, "two": 1], "new": ["two": 1]], account: account, cursor: 1, in: storage)
            }
            #expect(try await Fixture.page(account: account, after: 0, fullResync: true, in: storage).items.isEmpty)
            let fresh = try await Fixture.upload(["new": ["two": 1]], account: account, cursor: 2, in: storage)
            #expect(fresh.results.map(\.outcome) == [.applied])
        },
        StorageContractCase(name: "accountWithoutActiveDevicesKeepsItsTombstones") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            _ = try await Fixture.upload(["gone": ["one": 1]], deleted: true, account: account, in: storage)
            #expect(try await storage.collectGarbage(activeSince: nil, now: Date()) == 0)
            _ = try await Fixture.register("one", token: 1, account: account, in: storage)
            _ = try await storage.revokeDevice(Fixture.device("one"), of: account, now: Fixture.epoch)
            #expect(try await storage.collectGarbage(activeSince: nil, now: Date()) == 0)
        },
        StorageContractCase(name: "tombstoneIsCollectedOnlyAfterEveryActiveDeviceAcknowledged") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            _ = try await Fixture.register("one", token: 1, account: account, in: storage)
            _ = try await Fixture.register("two", token: 2, account: account, in: storage)
            _ = try await Fixture.upload(["live": ["one": 1], "gone": ["one": 1]], account: account, in: storage)
            _ = try await Fixture.upload(["gone": ["one": 2]], deleted: true, account: account, in: storage)
            try await storage.acknowledge(device: Fixture.device("one"), of: account, zone: "keychain", through: 3, now: Fixture.epoch)
            #expect(try await storage.collectGarbage(activeSince: nil, now: Date()) == 0)
            try await storage.acknowledge(device: Fixture.device("two"), of: account, zone: "keychain", through: 2, now: Fixture.epoch)
            #expect(try await storage.collectGarbage(activeSince: nil, now: Date()) == 0)
            try await storage.acknowledge(device: Fixture.device("two"), of: account, zone: "keychain", through: 99, now: Fixture.epoch)
            #expect(try await storage.collectGarbage(activeSince: nil, now: Date()) == 1)
            #expect(try await Fixture.page(account: account, after: 0, fullResync: true, in: storage).items.map(\.item) == ["live"])
        },
        StorageContractCase(name: "collectedItemLeavesNoVersionBehind") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            _ = try await Fixture.register("one", token: 1, account: account, in: storage)
            _ = try await Fixture.upload(["gone": ["one": 1]], account: account, in: storage)
            _ = try await Fixture.upload(["gone": ["one": 2]], deleted: true, account: account, in: storage)
            try await storage.acknowledge(device: Fixture.device("one"), of: account, zone: "keychain", through: 2, now: Fixture.epoch)
            #expect(try await storage.collectGarbage(activeSince: nil, now: Date()) == 1)
            // A new, unrelated write of the same ID starts afresh: no stale tombstone sibling.
            let again = try await Fixture.upload(["gone": ["two": 1]], account: account, cursor: 2, in: storage)
            #expect(again.results.map(\.outcome) == [.applied])
            let page = try await Fixture.page(account: account, after: 2, in: storage)
            #expect(page.items.map(\.versions.count) == [1])
        },
        StorageContractCase(name: "acknowledgementNeverMovesBackwards") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            _ = try await Fixture.register("one", token: 1, account: account, in: storage)
            _ = try await Fixture.upload(["gone": ["one": 1]], deleted: true, account: account, in: storage)
            try await storage.acknowledge(device: Fixture.device("one"), of: account, zone: "keychain", through: 1, now: Fixture.epoch)
            try await storage.acknowledge(device: Fixture.device("one"), of: account, zone: "keychain", through: 0, now: Fixture.epoch)
            #expect(try await storage.collectGarbage(activeSince: nil, now: Date()) == 1)
        },
        StorageContractCase(name: "acknowledgementIsClampedToTheLatestSequence") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            _ = try await Fixture.register("one", token: 1, account: account, in: storage)
            try await storage.acknowledge(device: Fixture.device("one"), of: account, zone: "keychain", through: 1_000, now: Fixture.epoch)
            _ = try await Fixture.upload(["gone": ["one": 1]], deleted: true, account: account, in: storage)
            #expect(try await storage.collectGarbage(activeSince: nil, now: Date()) == 0)
        },
        StorageContractCase(name: "revokedAndInactiveDevicesDoNotHoldTombstonesBack") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            _ = try await Fixture.register("one", token: 1, account: account, in: storage)
            _ = try await Fixture.register("two", token: 2, account: account, in: storage)
            _ = try await Fixture.register("three", token: 3, account: account, in: storage)
            _ = try await Fixture.upload(["gone": ["one": 1]], deleted: true, account: account, in: storage)
            try await storage.acknowledge(device: Fixture.device("one"), of: account, zone: "keychain", through: 1, now: Fixture.later(100))
            _ = try await storage.revokeDevice(Fixture.device("two"), of: account, now: Fixture.epoch)
            #expect(try await storage.collectGarbage(activeSince: nil, now: Date()) == 0)
            #expect(try await storage.collectGarbage(activeSince: Fixture.later(50), now: Date()) == 1)
        },
        StorageContractCase(name: "cursorOlderThanCollectedTombstoneExpiresButFullResyncServes") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            _ = try await Fixture.register("one", token: 1, account: account, in: storage)
            _ = try await Fixture.upload(["a": ["one": 1], "b": ["one": 1], "gone": ["one": 1]], account: account, in: storage)
            _ = try await Fixture.upload(["gone": ["one": 2]], deleted: true, account: account, in: storage)
            _ = try await Fixture.upload(["c": ["one": 1]], account: account, in: storage)
            try await storage.acknowledge(device: Fixture.device("one"), of: account, zone: "keychain", through: 5, now: Fixture.epoch)
            #expect(try await storage.collectGarbage(activeSince: nil, now: Date()) == 1)
            let stale = try await storage.changes(ChangeQuery(account: account, zone: "keychain", after: 3, limit: 10))
            #expect(stale == .cursorExpired(horizon: 4))
            let fresh = try await Fixture.page(account: account, after: 4, in: storage)
            #expect(fresh.items.map(\.item) == ["c"])
            let full = try await storage.changes(ChangeQuery(account: account, zone: "keychain", after: 1, limit: 10, fullResync: true))
            guard case .page(let page) = full else { Issue.record("full resync expired"); return }
            #expect(page.items.map(\.item) == ["b", "c"])
            // Other zones keep their own horizon.
            #expect(try await Fixture.page(account: account, zone: "kv.other", after: 1, in: storage).items.isEmpty)
        },
        // Rule R10a: a collected tombstone stays as the item's collected deletion, listed only to a
        // full resync that asks, only while the zone holds nothing else of the item, the latest one.
        StorageContractCase(name: "collectedDeletionsAreListedToAFullResyncThatAsks") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            _ = try await Fixture.register("one", token: 1, account: account, in: storage)
            _ = try await Fixture.upload(["a": ["one": 1], "gone": ["one": 1]], account: account, in: storage)
            _ = try await Fixture.upload(["gone": ["one": 2]], deleted: true, account: account, in: storage)
            _ = try await Fixture.upload(["c": ["one": 1]], account: account, in: storage)
            try await storage.acknowledge(device: Fixture.device("one"), of: account, zone: "keychain", through: 4, now: Fixture.epoch)
            #expect(try await storage.collectGarbage(activeSince: nil, now: Date()) == 1)
            func resync(limit: Int = 10, asking: Bool = true) async throws -> [ChangedItem<SealedVersion>] {
                var items: [ChangedItem<SealedVersion>] = []
                var after: UInt64 = 0
                while true {
                    let feed = try await storage.changes(ChangeQuery(
                        account: account, zone: "keychain", after: after, limit: limit, fullResync: true, includesCollectedDeletions: asking))
                    guard case .page(let page) = feed else {
                        Issue.record("full resync expired")
                        return items
                    }
                    items += page.items
                    guard page.hasMore else { return items }
                    after = page.cursor
                }
            }
            #expect(try await resync(asking: false).map(\.item) == ["a", "c"])
            // A page that lists the collected deletions carries when the zone last forgot one
            // without evidence (never, here); any other carries the last collection.
            func collectionTime(asking: Bool) async throws -> Date? {
                let feed = try await storage.changes(ChangeQuery(
                    account: account, zone: "keychain", after: 0, limit: 10, fullResync: true, includesCollectedDeletions: asking))
                guard case .page(let page) = feed else { return nil }
                return page.deletionsCollectedAt
            }
            #expect(try await collectionTime(asking: true) == nil)
            #expect(try await collectionTime(asking: false) != nil)
            let listed = try await resync()
            #expect(listed.map(\.item) == ["a", "gone", "c"])
            #expect(listed.first { $0.item == "gone" }?.versions.map(\.vector) == [Fixture.vector(["one": 2])])
            #expect(listed.first { $0.item == "gone" }?.versions.allSatisfy(\.isDeleted) == true)
            #expect(try await resync(limit: 1).map(\.item) == ["a", "gone", "c"])
            // A pull from the cursor never lists it.
            #expect(try await Fixture.page(account: account, after: 3, in: storage).items.map(\.item) == ["c"])
            // Written anew, the item is listed as it is now; deleted and collected again, its later
            // deletion replaces the earlier one.
            _ = try await Fixture.upload(["gone": ["two": 1]], account: account, cursor: 4, in: storage)
            #expect(try await resync().first { $0.item == "gone" }?.versions.map(\.isDeleted) == [false])
            _ = try await Fixture.upload(["gone": ["two": 2]], deleted: true, account: account, cursor: 4, in: storage)
            try await storage.acknowledge(device: Fixture.device("one"), of: account, zone: "keychain", through: 6, now: Fixture.epoch)
            #expect(try await storage.collectGarbage(activeSince: nil, now: Date()) == 1)
            #expect(try await resync().first { $0.item == "gone" }?.versions.map(\.vector) == [Fixture.vector(["two": 2])])
        },
        StorageContractCase(name: "itemWithALiveSiblingBesideATombstoneIsKept") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            _ = try await Fixture.register("one", token: 1, account: account, in: storage)
            _ = try await Fixture.upload(["x": ["one": 1]], deleted: true, account: account, in: storage)
            _ = try await Fixture.upload(["x": ["two": 1]], account: account, in: storage)
            try await storage.acknowledge(device: Fixture.device("one"), of: account, zone: "keychain", through: 2, now: Fixture.epoch)
            #expect(try await storage.collectGarbage(activeSince: nil, now: Date()) == 0)
            #expect(try await Fixture.page(account: account, in: storage).items.first?.versions.count == 2)
        },
    ]
}
