/// How secrets travel between a client and the service in one session (Secret Service API,
/// "Transfer of Secrets"): `plain` as they are.
/// (`dh-ietf1024-sha256-aes128-cbc-pkcs7` is answered NotSupported: libsecret then uses plain.)
enum TransportSession {
    case plain

    static let plainAlgorithm = "plain"

    static func open(algorithm: String, input: BusValue) throws(BusError) -> TransportSession {
        switch algorithm {
        case plainAlgorithm:
            return .plain
        default:
            throw .notSupported("the \(algorithm) session algorithm is not supported; use plain")
        }
    }

    /// The OpenSession output.
    var output: BusValue {
        switch self {
        case .plain: .string("")
        }
    }

    func encode(_ secret: [UInt8], contentType: String, session: String) throws(BusError) -> TransportSecret {
        switch self {
        case .plain: TransportSecret(session: session, parameters: [], value: secret, contentType: contentType)
        }
    }

    func decode(_ secret: TransportSecret) throws(BusError) -> [UInt8] {
        switch self {
        case .plain: secret.value
        }
    }
}
