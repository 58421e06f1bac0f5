import SyncCore

/// The item-blob plaintext and its padding.
///
/// Plaintext: `modificationTime (8, big-endian two's complement) ‖ len(device) (1) ‖ device ID
/// (ASCII) ‖ len(payload) (4) ‖ payload ‖ [len(signer) (1) ‖ signer (ASCII) ‖ signature (64), in a
/// signed blob] ‖ zero padding`. The padded length is the unpadded length
/// rounded up to a multiple of `max(128, nextPowerOfTwo(unpadded) / 16)`: 128-byte steps up to
/// 2 KiB, then steps of 1/16 of the power of two (at most 6.25 % overhead). Opening accepts exactly
/// that length with all-zero padding and nothing else.
package enum ItemBlobFormat {
    package static let version: UInt8 = 1
    /// The version of a blob sealed under a later epoch's key: its epoch follows (decision 0177).
    package static let epochVersion: UInt8 = 2
    /// The version of a blob whose plaintext carries its signer's signature (decision 0275): its
    /// epoch follows, whatever the epoch.
    package static let signedVersion: UInt8 = 3
    /// The length of a signer's Ed25519 signature.
    package static let signatureLength = 64
    private static let minimumGranule = 128
    private static let headerByteCount = 8 + 1 + 4

    /// The padded size of an unpadded plaintext of `length` bytes.
    package static func paddedLength(_ length: Int) -> Int {
        let power = length <= 1 ? 1 : 1 << (Int.bitWidth - (length - 1).leadingZeroBitCount)
        let granule = max(minimumGranule, power / 16)
        return (length + granule - 1) / granule * granule
    }

    /// The plaintext's length before padding; `signer` for a signed blob.
    static func unpaddedLength(payloadLength: Int, device: DeviceID, signer: DeviceID? = nil) -> Int {
        headerByteCount + device.rawValue.utf8.count + payloadLength + (signer.map { 1 + $0.rawValue.utf8.count + signatureLength } ?? 0)
    }

    package static func plaintext(of envelope: ItemEnvelope) throws(CryptoError) -> [UInt8] {
        guard envelope.payload.count <= ItemEnvelope.maximumPayloadSize else { throw .invalidInput("payload too large") }
        var signature: [UInt8] = []
        if let signed = envelope.signature {
            guard signed.bytes.count == signatureLength else { throw .invalidInput("a signature has 64 bytes") }
            signature.append(UInt8(signed.signer.rawValue.utf8.count))
            signature += signed.signer.rawValue.utf8
            signature += signed.bytes
        }
        var device = envelope.device.rawValue
        let deviceLength = device.utf8.count
        let unsigned = headerByteCount + deviceLength + envelope.payload.count
        let length = unsigned + signature.count
        let padded = paddedLength(length)
        // Written in place, without intermediate arrays: this is the hot path of every seal.
        return [UInt8](unsafeUninitializedCapacity: padded) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            raw.storeBytes(of: envelope.modificationTime.bigEndian, toByteOffset: 0, as: Int64.self)
            raw[8] = UInt8(deviceLength)
            device.withUTF8 { raw.baseAddress!.advanced(by: 9).copyMemory(from: $0.baseAddress!, byteCount: deviceLength) }
            raw.storeBytes(of: UInt32(envelope.payload.count).bigEndian, toByteOffset: 9 + deviceLength, as: UInt32.self)
            let payloadOffset = headerByteCount + deviceLength
            envelope.payload.withUnsafeBytes { payload in
                if let source = payload.baseAddress {
                    raw.baseAddress!.advanced(by: payloadOffset).copyMemory(from: source, byteCount: payload.count)
                }
            }
            signature.withUnsafeBytes { raw.baseAddress!.advanced(by: unsigned).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            raw.baseAddress!.advanced(by: length).initializeMemory(as: UInt8.self, repeating: 0, count: padded - length)
            initialized = padded
        }
    }

    /// The envelope of a plaintext; `signed` for a blob of ``signedVersion``, whose payload a
    /// signature follows.
    package static func envelope(from plaintext: [UInt8], signed: Bool = false) -> ItemEnvelope? {
        var reader = ByteReader(plaintext[...])
        guard let time = reader.readBigEndian(Int64.self),
            let deviceLength = reader.readBigEndian(UInt8.self),
            let deviceBytes = reader.read(count: Int(deviceLength)),
            let device = DeviceID(String(decoding: deviceBytes, as: UTF8.self)),
            device.rawValue.utf8.elementsEqual(deviceBytes),
            let payload = reader.readLengthPrefixed()
        else { return nil }
        var signature: ItemEnvelope.WriterSignature?
        if signed {
            guard let signerLength = reader.readBigEndian(UInt8.self),
                let signerBytes = reader.read(count: Int(signerLength)),
                let signer = DeviceID(String(decoding: signerBytes, as: UTF8.self)),
                signer.rawValue.utf8.elementsEqual(signerBytes),
                let bytes = reader.read(count: signatureLength)
            else { return nil }
            signature = ItemEnvelope.WriterSignature(signer: signer, bytes: Array(bytes))
        }
        let length = plaintext.count - reader.rest.count
        guard plaintext.count == paddedLength(length), reader.rest.allSatisfy({ $0 == 0 }) else { return nil }
        return ItemEnvelope(payload: Array(payload), modificationTime: time, device: device, signature: signature)
    }
}
