/// The error of an opener that found something other than a regular file where a database, or a
/// file SQLite keeps beside it, belongs (see ``FileKind``). Nothing was opened for writing.
public struct NotARegularFile: Error, CustomStringConvertible, Sendable {
    /// One line naming the path and what is there instead.
    public let description: String

    /// An error saying `description`.
    public init(_ description: String) {
        self.description = description
    }
}
