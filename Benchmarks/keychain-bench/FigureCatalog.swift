/// Every figure the benchmark measures, in table order.
enum FigureCatalog {
    static let all: [Benchmark] = [
        StoreFigures.add,
        StoreFigures.lookup,
        CryptoFigures.itemSeal,
        CryptoFigures.accountDerivation,
    ]
}
