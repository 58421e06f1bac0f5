import Foundation
import Logging
import SyncClient
import SyncCore
import Testing

/// What wakes the daemon, and which zones a pass then covers (decision 0190), on real devices of
/// a real server: a push message of the device's own write, already pulled, makes no pass; a
/// change announced past a zone's cursor makes a pass of that zone only.
@Suite(.serialized)
struct WakeReasonsTests {
    @Test func reasonsNotedBeforeAWaitAreTakenTogetherOnce() async {
        let reasons = WakeReasons()
        #expect(await reasons.next()?.everything == true)
        reasons.keychainChanged()
        reasons.announced(.keychain, sequence: 7)
        reasons.announced(.keychain, sequence: 5)
        reasons.announced(ZoneID("kv"), sequence: 6)
        var expected = WakeReasons.Noted()
        expected.keychain = true
        expected.announced = [.keychain: 7, ZoneID("kv"): 6]
        #expect(await reasons.next() == expected)
        reasons.keyValueChanged()
        #expect(await reasons.next()?.keyValue == true)
    }

    @Test func aPassCoversOnlyTheZonesWithSomethingNew() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "s", account: "u", password: "p")
            try await a.setValue("v", forKey: "k", store: "prefs")
            try await a.sync()
            try await b.sync()
            try await ClientSession.with(keychainPath: b.keychainPath, logger: Logger(label: "test")) { session in
                let sync = try AccountSync(session: session)
                _ = try await sync.syncUntilInStep()
                let keychainCursor = await sync.keychain.cursor
                let directoryCursor = try #require(await sync.keyValue.cursor(of: ZoneID("kv")))
                #expect(keychainCursor > 0 && directoryCursor > 0)

                func due(_ note: (inout WakeReasons.Noted) -> Void) async -> AccountSync.Zones {
                    var noted = WakeReasons.Noted()
                    note(&noted)
                    return await sync.zonesDue(for: noted)
                }
                // Announced at or below the cursors: pulled already (a device's own push).
                #expect(await due { $0.announced = [.keychain: keychainCursor, ZoneID("kv"): directoryCursor] } == [])
                #expect(await due { $0.announced = [.keychain: keychainCursor + 1] } == .keychain)
                #expect(await due { $0.announced = [ZoneID("kv"): directoryCursor + 1] } == .keyValue)
                // A store zone this device does not sync yet.
                #expect(await due { $0.announced = [ZoneID("kv.unknown"): 1] } == .keyValue)
                #expect(await due { $0.keychain = true } == .keychain)
                #expect(await due { $0.keyValue = true } == .keyValue)
                #expect(await due { $0.everything = true } == .all)
            }
        }
    }
}
