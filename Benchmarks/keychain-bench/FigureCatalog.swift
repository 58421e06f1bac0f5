/// Every figure the benchmark measures, in table order.
enum FigureCatalog {
    static let all: [Benchmark] = [
        CryptoFigures.itemSeal,
        CryptoFigures.accountDerivation,
    ]
}
