import Foundation

/// Prints a step of a long figure's setup, indented under its "measuring:" line, with the time.
func progress(_ step: String) {
    let now = Date()
    let formatter = DateFormatter()
    formatter.dateFormat = "HH:mm:ss.SSS"
    print("  \(formatter.string(from: now)) \(step)")
}
