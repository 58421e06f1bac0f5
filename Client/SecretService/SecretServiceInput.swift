/// The Secret Service's decoders of bytes a D-Bus client sends, reachable without a bus: a secret
/// sent in an encrypted session, and the attributes stored with an item. The fuzzing targets drive
/// them (decision 0267); the service goes through the same functions. (The D-Bus messages
/// themselves are parsed by sd-bus, and read by ``BusReader`` through its type-checked calls.)
package enum SecretServiceInput {
    /// A `dh-ietf1024-sha256-aes128-cbc-pkcs7` session opened by a client, as the service holds it.
    package struct Session: Sendable {
        let session: TransportSession
        /// The client's side of the same key, to make secrets the session opens.
        let client: TransportSession
    }

    /// A session between the service and a client whose private key is `clientPrivateKey`.
    package static func session(clientPrivateKey: [UInt8]) throws -> Session {
        let group = ModularGroup.ietf1024
        let clientPublic = group.power([UInt8(group.generator)], clientPrivateKey)
        let session = try TransportSession.open(algorithm: TransportSession.dhAlgorithm, input: .bytes(clientPublic))
        guard case .bytes(let servicePublic) = session.output else { throw BusError.failed("no public key") }
        let shared = group.power(servicePublic, clientPrivateKey)
        return Session(session: session, client: TransportSession(kind: .encrypted(TransportSession.key(fromShared: shared)), output: .string("")))
    }

    /// The secret a client sent in `session` as `parameters` (the IV) and `value`.
    ///
    /// - Throws: The service's `BusError` (`InvalidArgs`) when it does not decrypt.
    package static func secret(parameters: [UInt8], value: [UInt8], in session: Session) throws -> [UInt8] {
        try session.session.decode(TransportSecret(session: "/s", parameters: parameters, value: value, contentType: "text/plain"))
    }

    /// `secret` as the client sends it in `session`: `(parameters, value)`.
    package static func sent(_ secret: [UInt8], in session: Session) throws -> (parameters: [UInt8], value: [UInt8]) {
        let sent = try session.client.encode(secret, contentType: "text/plain", session: "/s")
        return (sent.parameters, sent.value)
    }

    /// Whether an error is one the service answers a client with.
    package static func isServiceError(_ error: any Error) -> Bool { error is BusError }

    /// The attributes stored with an item (`[:]` for bytes that are not such a map).
    package static func storedAttributes(_ bytes: [UInt8]) -> [String: String] { SecretStore.decode(bytes) }

    /// The bytes stored for `attributes`.
    package static func storedBytes(_ attributes: [String: String]) -> [UInt8] { SecretStore.encode(attributes) }
}
