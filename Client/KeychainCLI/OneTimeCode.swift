import Crypto
import Foundation
import KeychainModel

/// A TOTP seed (RFC 6238) as password managers keep it: an `otpauth://totp/…?secret=…` URI (its
/// `algorithm`, `digits` and `period` read) or a bare base32 secret (SHA-1, 6 digits, 30 s).
struct OneTimeCode {
    enum Algorithm: String { case sha1 = "SHA1", sha256 = "SHA256", sha512 = "SHA512" }

    let secret: [UInt8]
    var algorithm = Algorithm.sha1
    var digits = 6
    var period = 30

    /// Reads a seed; the error never quotes it.
    init(seed: String) throws {
        let text = seed.trimmingCharacters(in: .whitespacesAndNewlines)
        var encoded = text
        if text.lowercased().hasPrefix("otpauth://") {
            guard let components = URLComponents(string: text), components.host?.lowercased() == "totp" else {
                throw KeychainError(.param, "the TOTP seed is an otpauth URI that is not for TOTP")
            }
            let parameters = Dictionary((components.queryItems ?? []).map { ($0.name.lowercased(), $0.value ?? "") }, uniquingKeysWith: { $1 })
            encoded = parameters["secret"] ?? ""
            if let name = parameters["algorithm"] {
                guard let algorithm = Algorithm(rawValue: name.uppercased()) else { throw KeychainError(.param, "the TOTP seed names an unknown algorithm") }
                self.algorithm = algorithm
            }
            if let value = parameters["digits"] {
                guard let digits = Int(value), (6...10).contains(digits) else { throw KeychainError(.param, "the TOTP seed's digits must be 6 to 10") }
                self.digits = digits
            }
            if let value = parameters["period"] {
                guard let period = Int(value), (1...3600).contains(period) else { throw KeychainError(.param, "the TOTP seed's period must be 1 to 3600 seconds") }
                self.period = period
            }
        }
        guard let secret = Self.base32(encoded), !secret.isEmpty else { throw KeychainError(.param, "the TOTP seed is not base32") }
        self.secret = secret
    }

    /// The code at `time` (seconds since 1970) and the seconds it stays valid.
    func code(at time: Int64) -> (code: String, remaining: Int) {
        let counter = UInt64(max(time, 0) / Int64(period))
        let message = withUnsafeBytes(of: counter.bigEndian) { Data($0) }
        let key = SymmetricKey(data: secret)
        let mac: [UInt8] =
            switch algorithm {
            case .sha1: Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: key))
            case .sha256: Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
            case .sha512: Array(HMAC<SHA512>.authenticationCode(for: message, using: key))
            }
        // Dynamic truncation (RFC 4226 §5.3).
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let value = (UInt64(mac[offset] & 0x7f) << 24) | (UInt64(mac[offset + 1]) << 16) | (UInt64(mac[offset + 2]) << 8) | UInt64(mac[offset + 3])
        var modulus: UInt64 = 1
        for _ in 0..<digits { modulus *= 10 }
        let code = String(value % modulus)
        return (String(repeating: "0", count: digits - code.count) + code, period - Int(max(time, 0) % Int64(period)))
    }

    /// RFC 4648 base32, case, spaces and padding ignored; nil for any other character.
    static func base32(_ text: String) -> [UInt8]? {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)
        var bytes: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for character in text.uppercased().utf8 where character != UInt8(ascii: " ") && character != UInt8(ascii: "=") {
            guard let value = alphabet.firstIndex(of: character) else { return nil }
            buffer = buffer << 5 | UInt32(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        return bytes
    }
}
