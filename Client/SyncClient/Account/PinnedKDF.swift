import KeychainCrypto

/// The account's KDF cost as this device verified it (decision 0131): the parameters that opened
/// the account key at enrolment, or that this device set at a password change. The KDF
/// parameters are bound into the wrapped key, so opening it proves they are the account's.
///
/// Later derivations (a password change, a recovery on this device) never use a lower cost: a
/// server that serves less is refused before anything derived from the password is sent.
package struct PinnedKDF: Sendable, Equatable, Codable {
    /// log2 of scrypt's N.
    package var logN: UInt8
    /// scrypt's r.
    package var r: UInt32
    /// scrypt's p.
    package var p: UInt32

    package init(_ parameters: KDFParameters) {
        logN = parameters.logN
        r = parameters.r
        p = parameters.p
    }

    /// Refuses `parameters` when any cost is below the pinned one.
    package func check(_ parameters: KDFParameters) throws(SyncClientError) {
        guard parameters.logN >= logN, parameters.r >= r, parameters.p >= p else {
            throw SyncClientError(
                .unsafeParameters,
                "the server asks for a cheaper password derivation (N=2^\(parameters.logN), r=\(parameters.r), p=\(parameters.p)) "
                    + "than this account's verified one (N=2^\(logN), r=\(r), p=\(p)); refusing before sending anything")
        }
    }

    /// New parameters with a fresh salt and, for each cost, the higher of the pinned one and
    /// `parameters`'.
    package func strengthened(_ parameters: KDFParameters) throws -> KDFParameters {
        try KDFParameters(
            logN: max(logN, parameters.logN), r: max(r, parameters.r), p: max(p, parameters.p), salt: KDFParameters.generate().salt)
    }
}
