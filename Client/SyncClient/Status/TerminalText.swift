import Logging

/// Text that came from the server (error messages and codes, item IDs, device names) made safe
/// for a terminal or a log line: control characters (C0, DEL, C1: escape sequences start with
/// them) and the invisible format characters that reorder or hide text (bidirectional overrides
/// and isolates, zero-width characters) are replaced by U+FFFD, and the text is cut at `limit`
/// characters. A server can then neither move the cursor, rewrite what was printed, change the
/// terminal's title or colours, nor make one name look like another.
package enum TerminalText {
    /// The longest text kept from a server, in characters.
    package static let defaultLimit = 512

    /// `text` with unsafe characters replaced and cut to `limit` characters (with "…").
    package static func sanitized(_ text: some StringProtocol, limit: Int = defaultLimit) -> String {
        var result = String.UnicodeScalarView()
        var count = 0
        for scalar in text.unicodeScalars {
            guard count < limit else {
                result.append("…")
                break
            }
            result.append(isUnsafe(scalar) ? "\u{FFFD}" : scalar)
            count += 1
        }
        return String(result)
    }

    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: return true
        default: return false
        }
    }
}

/// A log handler that sanitizes every message and metadata value (``TerminalText``) before the
/// wrapped handler writes it: log lines carry server-provided item IDs and error messages.
package struct TerminalSafeLogHandler: LogHandler {
    private var wrapped: any LogHandler

    package init(wrapping handler: any LogHandler) { wrapped = handler }

    package var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    package var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = newValue }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue }
    }

    package func log(event: LogEvent) {
        var event = event
        event.message = "\(TerminalText.sanitized(event.message.description, limit: 4_096))"
        event.metadata = event.metadata?.mapValues { .string(TerminalText.sanitized($0.description)) }
        wrapped.log(event: event)
    }
}
