/// A duration as operators write it: a whole number and one unit, `90s`, `15m`, `1h`, `30d`
/// (docs/design.md §7). The one parser for every duration option.
package struct WrittenDuration: Sendable, Equatable, CustomStringConvertible {
    /// The duration.
    package var duration: Duration
    /// The text it was written as.
    package var description: String

    /// Parses `text`; nil unless it is 1...9 digits followed by `s`, `m`, `h` or `d`, and not zero.
    package init?(_ text: String) {
        guard let unit = text.last, let count = Int64(text.dropLast()), count > 0, text.count <= 10,
            text.dropLast().allSatisfy(\.isASCII), text.dropLast().allSatisfy(\.isNumber)
        else { return nil }
        let seconds: Int64
        switch unit {
        case "s": seconds = 1
        case "m": seconds = 60
        case "h": seconds = 3600
        case "d": seconds = 86_400
        default: return nil
        }
        duration = .seconds(count * seconds)
        description = text
    }
}
