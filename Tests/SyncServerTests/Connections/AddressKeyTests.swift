import NIOCore
import SyncServer
import Testing

/// The key every per-address limit counts by (decision 0266): an IPv4 address whole, an IPv6
/// address by its /64, an IPv4-mapped IPv6 address as the IPv4 address.
@Suite struct AddressKeyTests {
    @Test(arguments: [
        ("127.0.0.1", "127.0.0.1"),
        ("203.0.113.9", "203.0.113.9"),
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
        ("2001:db8:1:2::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:3::1", "2001:db8:1:3::/64"),
        ("::1", "::/64"),
        ("fe80::1", "fe80::/64"),
        ("::ffff:203.0.113.9", "203.0.113.9"),
        ("::ffff:127.0.0.2", "127.0.0.2"),
        ("not an address", "unknown"),
    ])
    func keys(_ address: String, _ key: String) {
        #expect(AddressKey(address).description == key)
    }

    @Test func aHostWalkingItsSlash64KeepsOneKey() {
        let keys = Set((1...100).map { AddressKey("2001:db8:aa:bb:\(String($0, radix: 16)):\(String($0 * 7, radix: 16))::1") })
        #expect(keys.count == 1)
        #expect(AddressKey("2001:db8:aa:bb::1") != AddressKey("2001:db8:aa:bc::1"))
    }

    @Test func anIPv4ClientOfADualStackListenerIsItsIPv4Address() throws {
        let mapped = try SocketAddress(ipAddress: "::ffff:198.51.100.7", port: 443)
        let direct = try SocketAddress(ipAddress: "198.51.100.7", port: 80)
        #expect(AddressKey(mapped) == AddressKey(direct))
        #expect(AddressKey(try SocketAddress(ipAddress: "::ffff:198.51.100.8", port: 443)) != AddressKey(mapped))
    }

    @Test func noAddressIsUnknown() throws {
        #expect(AddressKey(nil as SocketAddress?).description == "unknown")
        #expect(AddressKey(try SocketAddress(unixDomainSocketPath: "/tmp/sync.sock")).description == "unknown")
    }
}
