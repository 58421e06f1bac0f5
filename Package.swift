// swift-tools-version:6.0
//
// SyncKeychain: one SwiftPM package. Dependencies point one way:
//   KeychainModel, SyncCore (pure values and rules)
//     -> KeychainCrypto (swift-crypto)
//       -> KeychainStore (GRDB) -> SecurityCompat (Apple's names)
//       -> SyncProtocol (wire types)
//         -> SyncServer (Hummingbird, GRDB, PostgresNIO)   [Server/]
//         -> SyncClient (AsyncHTTPClient)                  [Client/]
// Executables (keychain, sync-server, sync-client, benchmarks) hold @main and wiring only.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

// The modules a one-shot `keychain` process runs through. In release, their code asks for a
// generic type's metadata through its accessor, witness tables passed in, not by mangled name:
// each first look-up by name checks the type's conformances by scanning every conformance record
// of the static binary, a fifth of a `find` process's CPU (decision 0183).
let processPathSettings = swiftSettings + [
    .unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"], .when(configuration: .release)),
]

/// The link of a release executable on Linux that carries `runtime` (`-static-executable`: the
/// Swift runtime, Foundation, libc, libstdc++ and SQLite; `-static-stdlib`: the Swift runtime and
/// Foundation, the C libraries shared). Loading and relocating shared libraries costs a one-shot
/// process more than its work (decisions 0160, 0183, 0285); it is not position-independent, which
/// spares ~95,000 relocations at every start. (Foundation's libraries are named: the modules import
/// Foundation's shared-library interface, whose link entries leave them out.)
func staticallyLinked(_ runtime: String) -> [LinkerSetting] {
    [.unsafeFlags(
        [runtime, "-Xlinker", "--start-group", "-lFoundation", "-lCoreFoundation", "-lFoundationInternationalization",
         "-lFoundationEssentials", "-l_FoundationICU", "-l_FoundationCShims", "-l_FoundationCollections", "-Xlinker", "--end-group", "-lstdc++", "-Xclang-linker", "-no-pie"],
        .when(platforms: [.linux], configuration: .release))]
}

let package = Package(
    name: "SyncKeychain",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "KeychainModel", targets: ["KeychainModel"]),
        .library(name: "SyncCore", targets: ["SyncCore"]),
        .library(name: "KeychainCrypto", targets: ["KeychainCrypto"]),
        .library(name: "KeychainStore", targets: ["KeychainStore"]),
        .library(name: "SecurityCompat", targets: ["SecurityCompat"]),
        .library(name: "KeyValueStore", targets: ["KeyValueStore"]),
        .executable(name: "keychain", targets: ["keychain"]),
        .executable(name: "keychain-secret-service", targets: ["keychain-secret-service"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // MARK: Pure values and rules
        .target(name: "KeychainModel", swiftSettings: processPathSettings),
        .target(name: "SyncCore", swiftSettings: swiftSettings),

        // MARK: Crypto
        .target(
            name: "KeychainCrypto",
            dependencies: [
                "SyncCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: Local keychain
        .target(
            name: "KeychainSQLiteConfig", dependencies: [.product(name: "GRDBSQLite", package: "GRDB.swift")],
            path: "Sources/KeychainSQLiteConfig"),
        .target(
            name: "KeychainStore",
            dependencies: [
                "KeychainModel", "KeychainSQLiteConfig", "DurableSQLite",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: processPathSettings
        ),
        .target(name: "SecurityCompat", dependencies: ["KeychainModel", "KeychainStore"], swiftSettings: swiftSettings),

        // MARK: How every SQLite file but the keychain's is opened (0600, WAL, durable commits)
        // The keychain's opener checks its files with its `FileKind`, so it is on a `keychain` process's path.
        .target(name: "DurableSQLite", dependencies: [.product(name: "GRDB", package: "GRDB.swift")], swiftSettings: processPathSettings),

        // MARK: Key-value store (iCloud key-value store semantics; each store is its own zone)
        .target(
            name: "KeyValueStore",
            dependencies: [
                "SyncCore", "DurableSQLite",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: Wire protocol (shared by server and client)
        .target(name: "SyncProtocol", dependencies: ["SyncCore"], swiftSettings: swiftSettings),

        // MARK: Client side
        // The programs the client runs (gpg for a pass store, the Secret Service's askpass): bounded
        // in time and output, and dying with their parent.
        .target(name: "CBoundedProcess", path: "Client/CBoundedProcess"),
        .target(name: "BoundedProcess", dependencies: ["CBoundedProcess"], path: "Client/BoundedProcess", swiftSettings: swiftSettings),
        .target(
            name: "KeychainCLI",
            dependencies: [
                "KeychainModel", "KeychainStore", "KeyValueStore", "DurableSQLite", "BoundedProcess",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Client/KeychainCLI",
            swiftSettings: processPathSettings
        ),
        .executableTarget(
            name: "keychain", dependencies: ["KeychainCLI"], path: "Client/keychain", swiftSettings: processPathSettings,
            // One static executable: nothing of a `find` is left to the dynamic loader (0183).
            linkerSettings: staticallyLinked("-static-executable")
        ),

        // MARK: Linux desktop: the freedesktop Secret Service over the keychain (decision 0140)
        .systemLibrary(name: "CSystemdBus", path: "Client/CSystemdBus", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .target(
            name: "SecretService",
            dependencies: [
                "CSystemdBus", "KeychainCrypto", "KeychainModel", "KeychainStore", "KeyValueStore", "DurableSQLite", "BoundedProcess",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            path: "Client/SecretService",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "keychain-secret-service", dependencies: ["SecretService", "KeychainStore"], path: "Client/keychain-secret-service",
            swiftSettings: swiftSettings),

        // MARK: Benchmarks
        .executableTarget(
            name: "keychain-bench",
            dependencies: [
                "KeychainCrypto", "KeychainStore", "SyncCore", "keychain", "ProcessTesting",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/keychain-bench",
            swiftSettings: swiftSettings
        ),
        .executableTarget(name: "keychain-bench-noop", dependencies: ["KeychainCLI"], path: "Benchmarks/keychain-bench-noop", swiftSettings: swiftSettings),

        // MARK: Tests
        .testTarget(name: "KeychainModelTests", dependencies: ["KeychainModel"], swiftSettings: swiftSettings),
        .testTarget(name: "SyncCoreTests", dependencies: ["SyncCore"], swiftSettings: swiftSettings),
        .testTarget(
            name: "KeychainCryptoTests",
            dependencies: ["KeychainCrypto", "SyncCore"],
            resources: [.copy("Vectors")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KeychainStoreTests",
            dependencies: ["KeychainStore", "KeychainModel", .product(name: "GRDB", package: "GRDB.swift")],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "SecurityCompatTests", dependencies: ["SecurityCompat"], swiftSettings: swiftSettings),
        .testTarget(
            name: "KeychainCLITests",
            dependencies: ["keychain", "KeychainStore", "KeychainModel", "ProcessTesting", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: swiftSettings),
        .testTarget(name: "KeyValueStoreTests", dependencies: ["KeyValueStore", "DurableSQLite", .product(name: "GRDB", package: "GRDB.swift")], swiftSettings: swiftSettings),
        // Child processes for the tests that run the built executables: output read whole, waits bounded.
        .target(name: "ProcessTesting", path: "Tests/ProcessTesting", swiftSettings: swiftSettings),

    ],
    swiftLanguageModes: [.v6]
)

// MARK: Network stack (server, and later the sync client)
//
// `SYNCKEYCHAIN_CORE_ONLY=1 swift test` leaves these out: a fast inner loop for work on the lower
// layers, which then builds without Hummingbird, NIO and PostgresNIO. CI always builds everything.
let networkTargets: [Target] = [
    .target(
        name: "SyncServer",
        dependencies: [
            "SyncCore", "SyncProtocol", "KeychainCrypto", "DurableSQLite",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdTLS", package: "hummingbird"),
            .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "X509", package: "swift-certificates"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Crypto", package: "swift-crypto"),
        ],
        path: "Server/SyncServer",
        resources: [.copy("openapi.yaml")],
        swiftSettings: swiftSettings
    ),
    .executableTarget(
        name: "sync-server",
        dependencies: ["SyncServer", .product(name: "ArgumentParser", package: "swift-argument-parser")],
        path: "Server/sync-server",
        swiftSettings: swiftSettings
    ),
    .target(
        name: "SyncClient",
        dependencies: [
            "SyncCore", "SyncProtocol", "KeychainCrypto", "KeychainStore", "KeychainModel", "KeyValueStore", "DurableSQLite",
            "KeychainSQLiteConfig",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "X509", package: "swift-certificates"),
        ],
        path: "Client/SyncClient",
        swiftSettings: swiftSettings
    ),
    .executableTarget(
        name: "sync-client",
        dependencies: ["SyncClient", .product(name: "ArgumentParser", package: "swift-argument-parser")],
        path: "Client/sync-client",
        swiftSettings: swiftSettings,
        // The runtime inside, the C libraries shared: `getaddrinfo` of a static glibc loads the
        // system's NSS modules at run time anyway (decision 0285).
        linkerSettings: staticallyLinked("-static-stdlib")
    ),
    .testTarget(
        name: "SyncClientTests",
        dependencies: [
            "SyncClient", "SyncProtocol", "KeychainCrypto", "KeychainModel", "sync-client", "sync-server", "keychain", "ProcessTesting", "SyncTesting",
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "X509", package: "swift-certificates"), .product(name: "Crypto", package: "swift-crypto"),
        ],
        swiftSettings: swiftSettings
    ),
    // The Secret Service's clients, and two machines syncing through a real server.
    .testTarget(
        name: "SecretServiceTests", dependencies: ["SecretService", "keychain-secret-service", "keychain", "sync-server", "sync-client", "ProcessTesting"],
        swiftSettings: swiftSettings),
    // The loopback of the zone endpoints over a server storage, for in-process tests and the
    // simulation of the shipped code.
    .target(
        name: "SyncTesting",
        dependencies: [
            "SyncClient", "SyncServer", "SyncCore", "SyncProtocol", "KeychainCrypto", "KeychainStore", "KeychainModel", "KeyValueStore",
            .product(name: "Logging", package: "swift-log"),
        ],
        path: "Tests/SyncTesting", swiftSettings: swiftSettings),
    .target(
        name: "ShippedSimulation",
        dependencies: [
            "SyncTesting", "SyncClient", "SyncServer", "SyncCore", "KeychainStore", "KeychainModel", "KeychainCrypto",
            "KeyValueStore",
            .product(name: "Logging", package: "swift-log"),
        ],
        swiftSettings: swiftSettings),
    // The simulation of the shipped code: devices with real keychains, the shipped driver, the real
    // SQLite server storage, one seed per run.
    .executableTarget(
        name: "sync-simulate",
        dependencies: ["ShippedSimulation", .product(name: "ArgumentParser", package: "swift-argument-parser")],
        swiftSettings: swiftSettings
    ),
    .testTarget(
        name: "ShippedSimulationTests",
        dependencies: [
            "ShippedSimulation", "SyncTesting", "SyncClient", "SyncServer", "SyncCore", "KeychainStore", "KeychainModel", "KeychainCrypto",
            .product(name: "Logging", package: "swift-log"),
        ],
        swiftSettings: swiftSettings),
    // Fuzzing of every decoder of outside bytes (decision 0267): the targets and a seeded mutation
    // engine, run briefly by FuzzingTests and at length by `scripts/fuzz.sh` through `keychain-fuzz`
    // (libFuzzer when the build is instrumented, the seeded engine otherwise).
    .target(
        name: "Fuzzing",
        dependencies: [
            "KeychainCLI", "KeychainModel", "KeychainStore", "KeychainCrypto", "KeyValueStore", "SyncCore", "SyncProtocol",
            "SyncServer", "SyncClient", "SecretService", "ShippedSimulation",
            .product(name: "Crypto", package: "swift-crypto"),
        ],
        path: "Tests/Fuzzing", swiftSettings: swiftSettings),
    .executableTarget(name: "keychain-fuzz", dependencies: ["Fuzzing"], path: "Tests/keychain-fuzz", swiftSettings: swiftSettings),
    .testTarget(name: "FuzzingTests", dependencies: ["Fuzzing", "ShippedSimulation"], exclude: ["Corpus"], swiftSettings: swiftSettings),
    .testTarget(
        name: "SyncServerTests",
        dependencies: [
            "SyncServer", "SyncProtocol", "sync-server", "ProcessTesting",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "HummingbirdTesting", package: "hummingbird"),
            .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "InMemoryLogging", package: "swift-log"),
        ],
        swiftSettings: swiftSettings
    ),
]

if Context.environment["SYNCKEYCHAIN_CORE_ONLY"] == nil {
    package.targets += networkTargets
    package.products += [
        .executable(name: "sync-server", targets: ["sync-server"]),
        .executable(name: "sync-client", targets: ["sync-client"]),
        .executable(name: "sync-simulate", targets: ["sync-simulate"]),
    ]
}

// The benchmark's server and device figures run the real executables and talk HTTP, so they
// need the network stack; a core-only build leaves them out (the table says so).
if Context.environment["SYNCKEYCHAIN_CORE_ONLY"] == nil, let bench = package.targets.first(where: { $0.name == "keychain-bench" }) {
    bench.dependencies += [
        "SyncClient", "SyncProtocol", "KeychainModel", "sync-server", "sync-client", "keychain-bench-noop", "fair-sync",
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
        .product(name: "Logging", package: "swift-log"),
    ]
    bench.swiftSettings = swiftSettings + [.define("SYNCKEYCHAIN_NETWORK")]
    // The fair baseline of the first push and the new device's pull (issue 35): the least work a
    // correct end-to-end sync does, in processes of its own, as the product's are.
    package.targets.append(.executableTarget(
        name: "fair-sync",
        dependencies: [
            "SyncServer",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdTLS", package: "hummingbird"),
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
        ],
        path: "Benchmarks/fair-sync",
        swiftSettings: swiftSettings))
}
