import GRDB

extension Database {
    /// Runs one SQL statement through the connection's statement cache: compiled (and checked by
    /// GRDB's authorizer) once per connection, not at every call. For statements a process runs
    /// again and again (decision 0232); one-off and schema statements use `execute(sql:)`.
    public func executeCached(sql: String, arguments: StatementArguments = StatementArguments()) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }
}
