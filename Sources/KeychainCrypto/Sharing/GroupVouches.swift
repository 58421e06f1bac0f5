/// The payload of a `leave` or an `update` entry of a group log (decision 0297): the digests
/// (``DeviceLog/vouchDigest(of:)``) of the blobs of the departing card — the leaver's, or the
/// member's old identity — that the entry's signer read in the group's zones and answers for.
/// Anything else that card signs under an epoch up to the entry's is refused.
///
/// Wire form: `count (4) ‖ digest (32)…`. An entry made before (an empty payload) vouches for
/// nothing and restricts nothing, as it did.
struct GroupVouches: Equatable {
    var digests: [[UInt8]]

    var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendBigEndian(UInt32(digests.count))
        for digest in digests { bytes += digest }
        return bytes
    }

    init(_ digests: [[UInt8]]) { self.digests = digests }

    init(decoding bytes: [UInt8]) throws(CryptoError) {
        var reader = ByteReader(bytes[...])
        guard let count = reader.readBigEndian(UInt32.self), count <= 10_000 else { throw .invalidInput("a group log entry's vouches are malformed") }
        var digests: [[UInt8]] = []
        for _ in 0..<count {
            guard let digest = reader.read(count: DeviceLog.vouchDigestSize) else { throw .invalidInput("a group log entry's vouches are malformed") }
            digests.append(Array(digest))
        }
        guard reader.isAtEnd else { throw .invalidInput("a group log entry's vouches are malformed") }
        self.digests = digests
    }
}
