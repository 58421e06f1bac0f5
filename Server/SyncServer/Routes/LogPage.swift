import Hummingbird
import SyncProtocol

/// How an append-only log (the device log, a group's log) is served: from the index in `from`
/// (0 when absent), a page of at most `page` entries, `hasMore` when it was cut.
enum LogPage {
    static func response(
        _ request: Request, page: Int, read: (_ from: Int, _ limit: Int) async throws -> [DeviceLogRecord]
    ) async throws -> Response {
        let from = try request.uri.queryParameters.get("from").map { text in
            guard let from = Int(text), from >= 0 else { throw APIError.invalid("from must be a log index") }
            return from
        } ?? 0
        let records = try await read(from, page + 1)
        let entries = records.prefix(page).map { DeviceLogEntryMessage(index: $0.index, entry: Base64Bytes($0.entry)) }
        return JSONBody.response(DeviceLogResponse(entries: Array(entries), hasMore: records.count > page))
    }
}
