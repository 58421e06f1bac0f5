import Foundation
import KeychainModel

/// A pass (passwordstore.org) store: every `NAME.gpg` below the directory, decrypted with
/// `gpg --decrypt` as pass itself does (so gpg-agent and the user's keys apply). The first line
/// is the password; `login:`, `user:`, `username:` and `url:` lines fill those fields, an
/// `otpauth://` line is the TOTP seed, and the remaining lines are the notes. The entry's name
/// (its path without `.gpg`) is the title.
struct PassStore {
    var directory: String

    func logins() throws -> [ImportedLogin] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw KeychainError(.param, "\(directory) is not a pass store directory")
        }
        guard let enumerator = FileManager.default.enumerator(atPath: directory) else {
            throw KeychainError(.param, "cannot read \(directory)")
        }
        let names = enumerator.compactMap { $0 as? String }.filter { $0.hasSuffix(".gpg") && !$0.hasPrefix(".") }.sorted()
        return try names.map { name in
            let entry = String(name.dropLast(4))
            return Self.login(entry, from: try decrypt((directory as NSString).appendingPathComponent(name), entry: entry))
        }
    }

    private func decrypt(_ path: String, entry: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["gpg", "--quiet", "--yes", "--batch", "--use-agent", "--decrypt", path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw KeychainError(.param, "cannot run gpg to read the pass store")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw KeychainError(.param, "pass entry \(entry): gpg could not decrypt it")
        }
        return String(decoding: data, as: UTF8.self)
    }

    static func login(_ entry: String, from text: String) -> ImportedLogin {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { String($0) }
        if lines.last == "" { lines.removeLast() }
        var login = ImportedLogin(position: "pass entry \(entry)", title: entry)
        login.password = lines.first.flatMap { $0.isEmpty ? nil : $0 }
        var notes: [String] = []
        for line in lines.dropFirst() {
            let lower = line.lowercased()
            if let value = Self.field(line, lower, ["login:", "user:", "username:"]), login.username == nil {
                login.username = value
            } else if let value = Self.field(line, lower, ["url:"]), login.url == nil {
                login.url = value
            } else if lower.hasPrefix("otpauth://"), login.totp == nil {
                login.totp = line
            } else {
                notes.append(line)
            }
        }
        let joined = notes.joined(separator: "\n")
        login.notes = joined.isEmpty ? nil : joined
        return login
    }

    private static func field(_ line: String, _ lower: String, _ keys: [String]) -> String? {
        guard let key = keys.first(where: lower.hasPrefix) else { return nil }
        return String(line.dropFirst(key.count)).trimmingSpaces()
    }
}
