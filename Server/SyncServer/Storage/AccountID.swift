import Foundation

/// The server's own identifier of an account: a random UUID, never derived from the name.
package struct AccountID: Hashable, Sendable, Codable, CustomStringConvertible {
    package let rawValue: UUID

    package init(_ rawValue: UUID = UUID()) {
        self.rawValue = rawValue
    }

    package init?(_ text: String) {
        guard let uuid = UUID(uuidString: text) else { return nil }
        self.rawValue = uuid
    }

    package var description: String { rawValue.uuidString.lowercased() }
}
