/// Dates of the proleptic Gregorian calendar as days since 1970-01-01, and the digits of their
/// fields, for the formats read and written by hand (an export's timestamps, an HTTP `Date` header) without Foundation's
/// calendars: Howard Hinnant's `days_from_civil` and `civil_from_days`, years counted from March
/// so that the leap day ends the year.
package enum CivilCalendar {
    /// Days from 1970-01-01 to `year`-`month`-`day`.
    package static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The year, month and day of a day since 1970-01-01.
    package static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shifted + 2) / 5 + 1
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// How many days `month` of `year` has.
    package static func days(inMonth month: Int64, of year: Int64) -> Int64 {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The value of a field written in ASCII decimal digits (`2026`, `09`); nil for anything else.
    package static func number(_ digits: ArraySlice<UInt8>) -> Int64? {
        guard digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return digits.reduce(0) { $0 * 10 + Int64($1 - UInt8(ascii: "0")) }
    }
}
