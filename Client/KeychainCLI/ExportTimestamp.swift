import KeychainModel

/// A date of the export (seconds since 1970, a `Double`) as an ISO 8601 UTC timestamp that gives
/// the same `Double` back: the fraction carries the digits of the shortest decimal that reads back
/// as that double (`2026-11-25T10:00:00.1234567Z`), so `import` restores the dates exactly.
/// Proleptic Gregorian calendar, years 1 to 9999 (``AttributeValue/dateRange``).
enum ExportTimestamp {
    /// The timestamp of `seconds`.
    static func format(_ seconds: Double) -> String {
        // The shortest decimal that reads back as `seconds`, without an exponent.
        let decimal = plain("\(seconds)")
        let parts = decimal.split(separator: ".", maxSplits: 1)
        var whole = Int64(parts[0]) ?? 0
        var fraction = parts.count > 1 ? String(parts[1]) : ""
        if fraction.allSatisfy({ $0 == "0" }) { fraction = "" }
        if seconds < 0, !fraction.isEmpty {
            // -100.25 is 100.25 s before 1970: the second before, and 0.75 of it.
            whole -= 1
            fraction = complement(fraction)
        }
        let days = whole >= 0 ? whole / 86_400 : -((-whole + 86_399) / 86_400)
        let secondOfDay = whole - days * 86_400
        let (year, month, day) = CivilCalendar.civil(fromDays: days)
        let time = [secondOfDay / 3600, secondOfDay / 60 % 60, secondOfDay % 60].map { pad($0, 2) }.joined(separator: ":")
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(time)\(fraction.isEmpty ? "" : "." + fraction)Z"
    }

    /// The seconds of a timestamp `format` wrote (or any `YYYY-MM-DDTHH:MM:SS[.F…]Z`); nil for
    /// anything else.
    static func parse(_ text: String) -> Double? {
        let bytes = Array(text.utf8), number = CivilCalendar.number
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z"), bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            let year = number(bytes[0..<4]), let month = number(bytes[5..<7]), let day = number(bytes[8..<10]),
            let hour = number(bytes[11..<13]), let minute = number(bytes[14..<16]), let second = number(bytes[17..<19]),
            (1...9999).contains(year), (1...12).contains(month), (1...CivilCalendar.days(inMonth: month, of: year)).contains(day), hour < 24, minute < 60, second < 60
        else { return nil }
        var fraction = ""
        if bytes.count > 20 {
            let digits = bytes[19..<(bytes.count - 1)]
            guard digits.first == UInt8(ascii: "."), digits.count > 1, digits.count <= 31,
                digits.dropFirst().allSatisfy({ (0x30...0x39).contains($0) })
            else { return nil }
            fraction = String(decoding: digits.dropFirst(), as: UTF8.self)
        }
        var whole = CivilCalendar.days(fromCivil: year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
        if fraction.isEmpty || fraction.allSatisfy({ $0 == "0" }) { return Double(whole) }
        if whole < 0 {
            // The second before, and the fraction of it: written back as the negative decimal.
            whole += 1
            return Double("\(whole == 0 ? "-0" : String(whole)).\(complement(fraction))")
        }
        return Double("\(whole).\(fraction)")
    }

    /// A number Swift wrote with an exponent (`1.5e-05`) written out (`0.000015`); others unchanged.
    private static func plain(_ text: String) -> String {
        guard let marker = text.firstIndex(where: { $0 == "e" || $0 == "E" }), let exponent = Int(text[text.index(after: marker)...]) else {
            return text
        }
        var mantissa = text[..<marker]
        let negative = mantissa.hasPrefix("-")
        if negative { mantissa = mantissa.dropFirst() }
        let point = mantissa.firstIndex(of: ".").map { mantissa.distance(from: mantissa.startIndex, to: $0) } ?? mantissa.count
        let digits = mantissa.filter { $0 != "." }
        let position = point + exponent
        let written: String
        if position <= 0 {
            written = "0." + String(repeating: "0", count: -position) + digits
        } else if position >= digits.count {
            written = digits + String(repeating: "0", count: position - digits.count)
        } else {
            written = digits.prefix(position) + "." + digits.dropFirst(position)
        }
        return (negative ? "-" : "") + written
    }

    /// 1 − 0.`digits`, as the same number of digits (`25` → `75`, `5` → `5`).
    private static func complement(_ digits: String) -> String {
        var result: [UInt8] = []
        var borrow = true  // 10^n − d: the last non-zero digit from 10, the ones before it from 9
        for digit in digits.utf8.reversed() {
            let value = Int(digit - 0x30)
            if borrow {
                if value == 0 {
                    result.append(0x30)
                    continue
                }
                result.append(UInt8(10 - value) + 0x30)
                borrow = false
            } else {
                result.append(UInt8(9 - value) + 0x30)
            }
        }
        return String(decoding: result.reversed(), as: UTF8.self)
    }


    private static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
