import Foundation
import GRDB
import GRDBSQLite
import KeychainModel

/// Reads the current row of a prepared SQLite statement column by column, without GRDB's `Row`.
struct RawColumns {
    let statement: OpaquePointer

    var count: Int32 { sqlite3_column_count(statement) }

    /// Resets the statement and binds positional arguments.
    func bind(_ values: [DatabaseValue]) {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            switch value.storage {
            case .null: sqlite3_bind_null(statement, index)
            case .int64(let number): sqlite3_bind_int64(statement, index, number)
            case .double(let number): sqlite3_bind_double(statement, index, number)
            case .string(let text): sqlite3_bind_text(statement, index, text, -1, transient)
            case .blob(let data):
                data.withUnsafeBytes { bytes in
                    _ = sqlite3_bind_blob(statement, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), transient)
                }
            }
        }
    }

    /// Runs a statement that returns no rows (an insert), with `values` bound.
    func execute(_ values: [DatabaseValue], _ db: Database) throws {
        bind(values)
        defer { finish() }
        while try step(db) {}
    }

    /// Resets the statement and drops its bindings (no argument outlives the lookup).
    func finish() {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
    }

    /// Advances to the next row; false when there is none.
    func step(_ db: Database) throws -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code: throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
    }

    func isNull(_ index: Int32) -> Bool { sqlite3_column_type(statement, index) == SQLITE_NULL }

    func int64(_ index: Int32) -> Int64 { sqlite3_column_int64(statement, index) }

    func bytes(_ index: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(statement, index))
        guard count > 0, let base = sqlite3_column_blob(statement, index) else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }

    func data(_ index: Int32) -> Data {
        let count = Int(sqlite3_column_bytes(statement, index))
        guard count > 0, let base = sqlite3_column_blob(statement, index) else { return Data() }
        return Data(bytes: base, count: count)
    }

    func text(_ index: Int32) -> String {
        guard let base = sqlite3_column_text(statement, index) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, index))
        return String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self)
    }

    /// The column as an attribute value of `kind`; nil for NULL.
    func value(_ index: Int32, of kind: Attribute.Kind) -> AttributeValue? {
        if isNull(index) { return nil }
        switch kind {
        case .string: return .string(text(index))
        case .data: return .data(bytes(index))
        case .integer: return .integer(int64(index))
        case .bool: return .bool(int64(index) != 0)
        case .date: return .date(sqlite3_column_double(statement, index))
        }
    }
}
