import Foundation
import ProcessTesting
import SyncCore
import SyncProtocol
import SyncServer
import Testing

/// Bad input to the built `sync-server` over real HTTP: a body over the limit is `413 too_large`
/// whether or not it announced its length, and KDF parameters no client accepts are refused at the
/// door (design §6: a 4xx JSON error with a stable code, never a 5xx, never a partial write).
@Suite("Bad input, live", .serialized)
struct BadInputTests {
    static let limit = 1024

    /// `POST path` with `body` sent in 256-byte chunks (`Transfer-Encoding: chunked`, no length
    /// announced) or with `Content-Length`; returns the status and the error code.
    static func post(_ server: TestServer, _ path: String, token: String? = nil, body: [UInt8], chunked: Bool) async throws -> (Int, String?) {
        let connection = try await RawHTTPConnection.connect(port: server.port, pin: server.pin)
        var head = "POST \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        var bytes: [UInt8]
        if chunked {
            bytes = Array((head + "Transfer-Encoding: chunked\r\n\r\n").utf8)
            for start in stride(from: 0, to: body.count, by: 256) {
                let chunk = Array(body[start..<min(start + 256, body.count)])
                let size = String(chunk.count, radix: 16) + "\r\n"
                bytes.append(contentsOf: Array(size.utf8))
                bytes.append(contentsOf: chunk)
                bytes.append(contentsOf: Array("\r\n".utf8))
            }
            bytes += Array("0\r\n\r\n".utf8)
        } else {
            bytes = Array((head + "Content-Length: \(body.count)\r\n\r\n").utf8) + body
        }
        // The server may answer and close before the whole body is sent.
        try? await connection.send(bytes)
        let response = try RawHTTPConnection.parse(try await connection.readResponse(timeout: .seconds(60)))
        await connection.close()
        let code = try? WireCoding.makeDecoder().decode(ErrorResponse.self, from: Data(response.body.utf8)).error.code
        return (response.status, code)
    }

    /// A JSON body of `size` bytes (an account name far too long, but never read that far).
    static func oversizedBody(_ size: Int) -> [UInt8] {
        Array(#"{"account":""#.utf8) + Array(repeating: UInt8(ascii: "a"), count: size) + Array(#""}"#.utf8)
    }

    @Test func aChunkedBodyOverTheLimitGets413LikeAnAnnouncedOne() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory, options: ["--max-request-bytes", "\(Self.limit)"])
            defer { server.stop() }
            let token = try await ServerProcessTests.enroll(server)
            let body = Self.oversizedBody(4 * Self.limit)
            // The routes that need no token, and one that does.
            let routes: [(String, String?)] = [
                ("/v1/accounts", nil), ("/v1/sign-in/parameters", nil), ("/v1/sign-in", nil), ("/v1/recovery/keys", nil),
                ("/v1/zones/keychain/items", token),
            ]
            for (path, token) in routes {
                for chunked in [false, true] {
                    let (status, code) = try await Self.post(server, path, token: token, body: body, chunked: chunked)
                    #expect(status == 413, "\(path), chunked: \(chunked)")
                    #expect(code == ErrorCode.tooLarge, "\(path), chunked: \(chunked)")
                }
            }
            // A chunked body within the limit is read as before.
            let (status, _) = try await Self.post(
                server, "/v1/sign-in/parameters", body: Array(#"{"account":"alice"}"#.utf8), chunked: true)
            #expect(status == 200)
        }
    }

    @Test func routesThatNeedNoTokenTakeSmallBodiesOnly() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory)
            defer { server.stop() }
            let token = try await ServerProcessTests.enroll(server)
            // 100 KiB: far below the 8 MiB a device may send, far above any sign-in.
            let body = Self.oversizedBody(100 << 10)
            for path in ["/v1/accounts", "/v1/sign-in/parameters", "/v1/sign-in", "/v1/recovery/keys", "/v1/recovery/credentials"] {
                for chunked in [false, true] {
                    let (status, code) = try await Self.post(server, path, body: body, chunked: chunked)
                    #expect(status == 413 && code == ErrorCode.tooLarge, "\(path), chunked: \(chunked): \(status)")
                }
            }
            let upload = try ServerProcessTests.json(UploadRequest(
                cursor: 0, items: (0..<3).map { APIClient.item("large-\($0)", ["laptop": 1], blobSize: 40_000) }))
            #expect(upload.count > 100 << 10)
            let (status, _) = try await Self.post(server, "/v1/zones/keychain/items", token: token, body: upload, chunked: true)
            #expect(status == 200)
        }
    }

    /// KDF parameters outside KeychainCrypto's `KDFParameters` floors and limits, which every
    /// client applies to what the server hands back.
    static let refusedKDFs: [PasswordKDF] = [
        PasswordKDF(algorithm: "scrypt", logN: 255, r: .max, p: .max),
        PasswordKDF(algorithm: "scrypt", logN: 14, r: 8, p: 1),
        PasswordKDF(algorithm: "scrypt", logN: 21, r: 8, p: 1),
        PasswordKDF(algorithm: "scrypt", logN: 17, r: 7, p: 1),
        PasswordKDF(algorithm: "scrypt", logN: 17, r: 17, p: 1),
        PasswordKDF(algorithm: "scrypt", logN: 17, r: 8, p: 5),
        // Within each range, over the memory (2 GiB) or work (2^24) limit.
        PasswordKDF(algorithm: "scrypt", logN: 20, r: 16, p: 1),
        PasswordKDF(algorithm: "scrypt", logN: 19, r: 8, p: 4),
        PasswordKDF(algorithm: "argon2id", logN: 17, r: 8, p: 1),
    ]

    static func keys(_ kdf: PasswordKDF) -> AccountKeyBundle {
        AccountKeyBundle(kdf: kdf, salt: APIClient.keys.salt, wrappedAccountKey: APIClient.keys.wrappedAccountKey)
    }

    @Test func kdfParametersNoClientAcceptsAreRefused() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory)
            defer { server.stop() }
            for (index, kdf) in Self.refusedKDFs.enumerated() {
                let create = try await RawHTTPConnection.request(
                    port: server.port, pin: server.pin, method: "POST", path: "/v1/accounts",
                    json: ServerProcessTests.json(CreateAccountRequest(account: "bad-\(index)", authKey: APIClient.authKey(1), keys: Self.keys(kdf))))
                #expect(create.status == 400, "\(kdf)")
                #expect(create.body.contains(ErrorCode.unsupportedKDF), "\(kdf): \(create.body)")
                let preSignIn = try await RawHTTPConnection.request(
                    port: server.port, pin: server.pin, method: "POST", path: "/v1/sign-in/parameters",
                    json: ServerProcessTests.json(PreSignInRequest(account: "bad-\(index)")))
                // Nothing was stored: the account's parameters are the decoy's.
                #expect(try WireCoding.makeDecoder().decode(PreSignInResponse.self, from: Data(preSignIn.body.utf8)).kdf == .standard)
            }
            // The edges clients accept are accepted.
            for (index, kdf) in [
                PasswordKDF(algorithm: "scrypt", logN: 15, r: 16, p: 4), PasswordKDF(algorithm: "scrypt", logN: 20, r: 8, p: 1),
            ].enumerated() {
                let create = try await RawHTTPConnection.request(
                    port: server.port, pin: server.pin, method: "POST", path: "/v1/accounts",
                    json: ServerProcessTests.json(CreateAccountRequest(account: "edge-\(index)", authKey: APIClient.authKey(1), keys: Self.keys(kdf))))
                #expect(create.status == 201, "\(kdf): \(create.body)")
            }
            // A password change is held to the same rule.
            let token = try await ServerProcessTests.enroll(server)
            let change = try await RawHTTPConnection.request(
                port: server.port, pin: server.pin, method: "PUT", path: "/v1/account/credentials", token: token,
                json: ServerProcessTests.json(ChangeCredentialsRequest(
                    currentAuthKey: APIClient.authKey(1), authKey: APIClient.authKey(2), keys: Self.keys(Self.refusedKDFs[0]))))
            #expect(change.status == 400)
            #expect(change.body.contains(ErrorCode.unsupportedKDF), "\(change.body)")
        }
    }
}
