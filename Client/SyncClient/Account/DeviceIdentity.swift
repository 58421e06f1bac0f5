import KeychainCrypto

/// This device's identity keys (decision 0122): an Ed25519 key that signs its device-log entries
/// and statements, and an X-Wing key other devices wrap the account key to. Made at enrolment;
/// the private halves live only in this device's keychain (`DeviceSecrets`, `ThisDeviceOnly`).
package struct DeviceIdentity: Sendable {
    package var signingKey: DeviceSigningKey
    package var agreementKey: DeviceAgreementKey

    package init(signingKey: DeviceSigningKey, agreementKey: DeviceAgreementKey) {
        self.signingKey = signingKey
        self.agreementKey = agreementKey
    }

    /// A new pair of keys.
    package static func generate() throws(SyncClientError) -> DeviceIdentity {
        do {
            return DeviceIdentity(signingKey: .generate(), agreementKey: try .generate())
        } catch {
            throw SyncClientError(.localStorage, "cannot make the device's identity keys", underlying: error)
        }
    }
}
