import SyncCore

/// The item-blob plaintext and its padding.
///
/// Plaintext: `modificationTime (8, big-endian two's complement) ‖ len(device) (1) ‖ device ID
/// (ASCII) ‖ len(payload) (4) ‖ payload ‖ zero padding`. The padded length is the unpadded length
/// rounded up to a multiple of `max(128, nextPowerOfTwo(unpadded) / 16)`: 128-byte steps up to
/// 2 KiB, then steps of 1/16 of the power of two (at most 6.25 % overhead). Opening accepts exactly
/// that length with all-zero padding and nothing else.
package enum ItemBlobFormat {
    package static let version: UInt8 = 1
    private static let minimumGranule = 128
    private static let headerByteCount = 8 + 1 + 4

    /// The padded size of an unpadded plaintext of `length` bytes.
    package static func paddedLength(_ length: Int) -> Int {
        let power = length <= 1 ? 1 : 1 << (Int.bitWidth - (length - 1).leadingZeroBitCount)
        let granule = max(minimumGranule, power / 16)
        return (length + granule - 1) / granule * granule
    }

    static func plaintext(of envelope: ItemEnvelope) throws(CryptoError) -> [UInt8] {
        guard envelope.payload.count <= ItemEnvelope.maximumPayloadSize else { throw .invalidInput("payload too large") }
        let device = envelope.device.rawValue.utf8
        let length = headerByteCount + device.count + envelope.payload.count
        let padded = paddedLength(length)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(padded)
        bytes.appendBigEndian(envelope.modificationTime)
        bytes.append(UInt8(device.count))
        bytes.append(contentsOf: device)
        bytes.appendLengthPrefixed(envelope.payload)
        bytes.append(contentsOf: repeatElement(0, count: padded - length))
        return bytes
    }

    static func envelope(from plaintext: [UInt8]) -> ItemEnvelope? {
        var reader = ByteReader(plaintext[...])
        guard let time = reader.readBigEndian(Int64.self),
            let deviceLength = reader.readBigEndian(UInt8.self),
            let deviceBytes = reader.read(count: Int(deviceLength)),
            let device = DeviceID(String(decoding: deviceBytes, as: UTF8.self)),
            device.rawValue.utf8.elementsEqual(deviceBytes),
            let payload = reader.readLengthPrefixed()
        else { return nil }
        let length = plaintext.count - reader.rest.count
        guard plaintext.count == paddedLength(length), reader.rest.allSatisfy({ $0 == 0 }) else { return nil }
        return ItemEnvelope(payload: Array(payload), modificationTime: time, device: device)
    }
}
