import Foundation
import ProcessTesting

/// The built executables the tests run.
enum Products {
    static let directory = BuiltProducts.directory(containing: "sync-client")
    static var syncClient: URL { directory.appendingPathComponent("sync-client") }
    static var syncServer: URL { TestServer.binary }
    static var keychain: URL { directory.appendingPathComponent("keychain") }
}
