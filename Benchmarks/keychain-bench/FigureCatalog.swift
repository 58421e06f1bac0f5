/// Every figure the benchmark measures, in table order.
enum FigureCatalog {
    static let all: [Benchmark] = [
        StoreFigures.add,
        StoreFigures.lookup,
        CryptoFigures.itemSeal,
        CryptoFigures.accountDerivation,
        SharingFigures.removalRekey,
        SharingFigures.versionAdmission,
        CLIFigure.benchmark,
        CompetitorFigures.secretTool,
        CompetitorFigures.pass,
        CompetitorFigures.keepassxc,
        SecretServiceFigures.benchmark,
    ] + networkFigures

    #if SYNCKEYCHAIN_NETWORK
    static let networkFigures: [Benchmark] = [
        ServerFigures.sqliteWrites,
        ServerFigures.postgresWrites,
        ServerFigures.changesSinceCursor,
        NewDeviceFigures.benchmark,
        GroupSyncFigures.benchmark,
        FirstPushFigures.benchmark,
        PropagationFigure.benchmark,
        ScaleOutFigures.twoProcesses,
        ScaleOutFigures.pushSubscribers,
        HostileConnectionsFigure.benchmark,
    ]
    #else
    /// A core-only build has no server, client or HTTP stack: one row says so.
    static let networkFigures: [Benchmark] = [
        Benchmark(
            name: "server and device figures",
            rows: [.init(name: "server and device figures", unit: "", target: .report)]
        ) { _, _ in throw BenchmarkUnavailable("core-only build (SYNCKEYCHAIN_CORE_ONLY): build without it") }
    ]
    #endif
}
