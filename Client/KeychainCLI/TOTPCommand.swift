import ArgumentParser
import Foundation
import KeychainModel

/// `keychain totp PLACE [-a ACCOUNT]`: the current one-time code of the TOTP seed kept beside a
/// login (the `totp:` item import makes, decision 0162), where PLACE is the login's server or
/// service. Prints the code alone on its line; `--at` computes it for another time.
struct TOTP: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "totp", abstract: "Print the current one-time code of a login's TOTP seed (kept by import).")

    @OptionGroup var keychain: KeychainOptions
    @Argument(help: "The login's server (internet password) or service (generic password), as the seed's item names it after `totp:`.")
    var place: String
    @Option(name: .customShort("a"), help: "The login's account, when several logins of the place have seeds.") var account: String?
    @Option(name: .customLong("at"), help: "The time, in seconds since 1970, to compute the code for (default: now).") var at: Int64?

    func run() throws {
        var attributes = ItemAttributes()
        attributes.service = "totp:" + place
        if let account { attributes.account = account }
        let query = Query(itemClass: .genericPassword, attributes: attributes, synchronizable: .any, limit: .count(2), returns: [.data])
        var matches: [ItemResult] = []
        do {
            matches = try keychain.openExisting().find(query)
        } catch let error as KeychainError where error.code == .itemNotFound {}
        guard let match = matches.first, let data = match.data else {
            throw KeychainError(.itemNotFound, "no TOTP seed for \(place)\(account.map { " and account \($0)" } ?? ""); `keychain import` keeps the seeds it reads as totp: items")
        }
        guard matches.count == 1 else {
            throw KeychainError(.param, "several logins of \(place) have TOTP seeds: name the account with -a")
        }
        let seed = try OneTimeCode(seed: String(decoding: data, as: UTF8.self))
        let (code, _) = seed.code(at: at ?? Int64(Date().timeIntervalSince1970))
        ItemPrinter.write(Array((code + "\n").utf8))
    }
}
