import Foundation
import Testing

/// B7 (issue 11): a device whose clock runs a year ahead does not win every concurrent conflict
/// for a year. Its processes run under `faketime`; its stamps are bounded by the server's clock
/// (decision 0108), so a later write of a device with a right clock wins.
@Suite(.serialized)
struct ClockSkewTests {
    @Test func aClockAYearAheadLosesToALaterConcurrentWrite() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (ahead, right) = (devices[0].withClock(offset: "+365d"), devices[1])
            try await right.add(service: "x", account: "una", password: "first")
            try await right.sync()
            try await ahead.sync()
            #expect(try await ahead.password(service: "x", account: "una") == "first")

            // Concurrent writes: the device ahead writes and syncs first, the right one later.
            try await ahead.add(service: "x", account: "una", password: "from a year ahead", update: true)
            try await ahead.sync()
            try await right.add(service: "x", account: "una", password: "later, right clock", update: true)
            try await right.sync()
            try await ahead.sync()
            try await right.sync()
            #expect(try await right.password(service: "x", account: "una") == "later, right clock")
            #expect(try await ahead.password(service: "x", account: "una") == "later, right clock")
        }
    }

    @Test func aKeyValueSetFromAYearAheadLosesToALaterConcurrentSet() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (ahead, right) = (devices[0].withClock(offset: "+365d"), devices[1])
            try await right.setValue("first", forKey: "mode", store: "app")
            try await right.sync()
            try await ahead.sync()

            try await ahead.setValue("from a year ahead", forKey: "mode", store: "app")
            try await ahead.sync()
            try await right.setValue("later, right clock", forKey: "mode", store: "app")
            try await right.sync()
            try await ahead.sync()
            try await right.sync()
            #expect(try await right.value(forKey: "mode", store: "app") == "later, right clock")
            #expect(try await ahead.value(forKey: "mode", store: "app") == "later, right clock")
        }
    }
}
