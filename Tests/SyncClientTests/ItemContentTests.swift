import Foundation
import KeychainModel
import SyncClient
import Testing

struct ItemContentTests {
    @Test func roundTripsEveryAttributeKindAndTheSecret() throws {
        var item = Item.genericPassword(service: "svc", account: "acc", data: [0, 1, 2, 255]) { attributes in
            attributes.synchronizable = true
            attributes.label = "a label"
            attributes.generic = [9, 8]
            attributes.modificationDate = Date(timeIntervalSince1970: 1_700_000_000.125)
        }
        item.attributes[.port] = .integer(-5)
        let decoded = try #require(ItemContent.decode(ItemContent.encode(item)))
        #expect(decoded == item)
    }

    @Test func encodesTheSameItemToTheSameBytes() {
        let first = Item.genericPassword(service: "s", account: "a", data: [1]) { $0.label = "l"; $0.comment = "c" }
        let second = Item.genericPassword(service: "s", account: "a", data: [1]) { $0.comment = "c"; $0.label = "l" }
        #expect(ItemContent.encode(first) == ItemContent.encode(second))
    }

    @Test(arguments: [[UInt8](), [2], [1, 4, 0x67, 0x65, 0x6e, 0x70], [1, 4, 0x67, 0x65, 0x6e, 0x70, 0, 0, 0, 7]])
    func rejectsMalformedBytes(_ bytes: [UInt8]) {
        #expect(ItemContent.decode(bytes) == nil)
    }

    /// A version from another device whose date no clock conversion holds is refused as
    /// undecodable, never taken into the keychain (where it once made every sync trap).
    @Test(arguments: [1e16, 1e308, -1e16, .infinity, .nan])
    func refusesADateOutsideTheRange(_ seconds: Double) {
        var item = Item.genericPassword(service: "svc", account: "acc", data: [1])
        item.attributes[.modificationDate] = .date(seconds)
        #expect(ItemContent.decode(ItemContent.encode(item)) == nil)
    }

    @Test(arguments: [[UInt8](), [2], [1, 4, 0x67, 0x65, 0x6e, 0x70], [1, 4, 0x67, 0x65, 0x6e, 0x70, 0, 1, 4, 0x70, 0x64]])
    func readsNoAccessibilityFromBytesCutShort(_ bytes: [UInt8]) {
        #expect(ItemContent.accessibility(of: bytes) == nil)
    }

    /// The class layer reads the accessibility alone; it must be what decoding the whole item says.
    @Test(arguments: [nil] + Accessibility.allCases.map(Optional.some))
    func readsTheAccessibilityAsDecodingDoes(_ accessibility: Accessibility?) throws {
        let item = Item.genericPassword(service: "svc", account: "acc", data: [7, 7]) { attributes in
            attributes.label = "z is after pdmn"
            attributes.accessible = accessibility
        }
        let bytes = ItemContent.encode(item)
        #expect(ItemContent.accessibility(of: bytes) == ItemContent.decode(bytes)?.accessibility)
        #expect(ItemContent.accessibility(of: bytes) == accessibility ?? .default)
    }
}

struct ServerPinTests {
    @Test func parsesAndPrintsThePinForm() throws {
        let text = "sha256/" + Data(repeating: 1, count: 32).base64EncodedString()
        let pin = try #require(ServerPin(text))
        #expect(pin.description == text)
        #expect(pin.matches(try #require(ServerPin(text))))
        #expect(!pin.matches(try #require(ServerPin("sha256/" + Data(repeating: 2, count: 32).base64EncodedString()))))
    }

    @Test(arguments: ["", "sha1/AAAA", "sha256/not base64!", "sha256/" + Data(repeating: 1, count: 16).base64EncodedString()])
    func refusesMalformedPins(_ text: String) {
        #expect(ServerPin(text) == nil)
    }
}

struct BackoffTests {
    @Test func delaysGrowWithJitterUpToTheMaximum() {
        var backoff = Backoff(base: .milliseconds(100), maximum: .seconds(2))
        let delays = (0..<12).map { _ in backoff.next() }
        #expect(delays.allSatisfy { $0 <= .seconds(2) && $0 > .zero })
        #expect(delays[0] <= .milliseconds(100))
        backoff.reset()
        #expect(backoff.next() <= .milliseconds(100))
    }
}
