import Foundation
import NIOSSL

/// Where the server is and how its identity is checked: an `https` URL with a pinned key, or (for
/// tests only) a plain `http` URL.
package struct ServerEndpoint: Sendable {
    /// The base URL, without a trailing slash.
    package let url: URL
    package let host: String
    package let port: Int
    /// Whether the URL is plain HTTP (no TLS, no pin).
    package var isInsecure: Bool { url.scheme == "http" }

    /// Parses and checks `text`; `http` only when `allowInsecure`.
    package init(_ text: String, allowInsecure: Bool) throws(SyncClientError) {
        let trimmed = text.hasSuffix("/") ? String(text.dropLast()) : text
        guard let url = URL(string: trimmed), let scheme = url.scheme, let host = url.host, !host.isEmpty else {
            throw SyncClientError(.invalidInput, "the server URL must look like https://host:port")
        }
        switch scheme {
        case "https": port = url.port ?? 443
        case "http":
            guard allowInsecure else {
                throw SyncClientError(.invalidInput, "plain http:// servers are refused; pass --insecure-http to allow one (tests only)")
            }
            port = url.port ?? 80
        default:
            throw SyncClientError(.invalidInput, "the server URL must use https://")
        }
        self.url = url
        self.host = host
    }

    /// Checks the server's key against `pin` (trust on first use when nil) and returns the pin
    /// seen and the TLS of every connection of this run, which checks that pin again at each
    /// handshake; `(nil, nil)` for http.
    package func verify(pin: ServerPin?) async throws -> (ServerPin?, PinnedTLS?) {
        if isInsecure { return (nil, nil) }
        let chain = try await CertificateProbe.chain(host: host, port: port, expected: pin)
        let seen = try ServerPin.check(chain.first, against: pin)
        return (seen, PinnedTLS(configuration: try PinnedTrust.configuration(chain: chain, host: host), pin: seen))
    }
}
