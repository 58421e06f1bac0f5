import SyncProtocol

extension ServerConnection {
    /// Every entry of an append-only log the server serves page by page at `path?from=N` (the
    /// device log, a group's log), from `start`, held to the server's bounds: pages in order, at most
    /// `maximumPage` entries each, none empty while more are announced, `maximumEntries` in all.
    /// - Throws: `untrustedAccountState` naming `log` for a page that breaks them.
    func logEntries(at path: String, from start: Int = 0, maximumPage: Int, maximumEntries: Int, log: String) async throws -> [[UInt8]] {
        var entries: [[UInt8]] = []
        var hasMore = true
        while hasMore {
            let page = try await send(.GET, "\(path)?from=\(start + entries.count)", body: nil, as: DeviceLogResponse.self)
            let inOrder = page.entries.enumerated().allSatisfy { $0.element.index == start + entries.count + $0.offset }
            guard inOrder, page.entries.count <= maximumPage, !(page.hasMore && page.entries.isEmpty),
                start + entries.count + page.entries.count <= maximumEntries
            else {
                throw SyncClientError(.untrustedAccountState, "the server served a malformed page of \(log)")
            }
            entries += page.entries.map(\.entry.bytes)
            hasMore = page.hasMore
        }
        return entries
    }
}
