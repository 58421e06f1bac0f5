#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore

/// The client a per-address limit counts against (decision 0266): an IPv4 address whole, an IPv6
/// address by its /64 prefix, an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, what a dual-stack
/// listener on `::` sees of an IPv4 client) as the IPv4 address.
///
/// A /64 is the smallest block an IPv6 site is given and one host may take any address in it;
/// keyed by the full address, one host could walk around every per-address limit by changing its
/// interface identifier. Every per-address limit (sign-in and token-failure budgets, account
/// creations, connections) takes its key from here, where the client's address enters.
package struct AddressKey: Hashable, Sendable, CustomStringConvertible {
    /// `a.b.c.d`, `x:x:x:x::/64`, or `unknown` when the channel has no IP address.
    package let description: String

    /// The key of `address`; `unknown` for nil or a Unix domain socket.
    package init(_ address: SocketAddress?) {
        switch address {
        case .v4(let v4):
            description = Self.format(v4.address.sin_addr)
        case .v6(let v6):
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
                var v4 = in_addr()
                withUnsafeMutableBytes(of: &v4) { $0.copyBytes(from: bytes[12..<16]) }
                description = Self.format(v4)
            } else {
                var prefix = in6_addr()
                withUnsafeMutableBytes(of: &prefix) { $0.copyBytes(from: bytes[0..<8] + Array(repeating: 0, count: 8)) }
                description = Self.format(prefix) + "/64"
            }
        case .unixDomainSocket, nil:
            description = "unknown"
        }
    }

    /// The key of a textual IP address (`127.0.0.1`, `2001:db8::1`); `unknown` when it is not one.
    package init(_ text: String) {
        self.init(try? SocketAddress(ipAddress: text, port: 0))
    }

    private static func format(_ address: in_addr) -> String {
        var address = address
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        guard inet_ntop(AF_INET, &address, &text, socklen_t(text.count)) != nil else { return "unknown" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func format(_ address: in6_addr) -> String {
        var address = address
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &text, socklen_t(text.count)) != nil else { return "unknown" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
