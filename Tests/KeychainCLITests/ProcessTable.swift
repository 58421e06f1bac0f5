import Foundation

/// The machine's processes as /proc shows them, for tests that check which children a `keychain`
/// process left behind (and stop them, so that no test leaves one running).
enum ProcessTable {
    /// A running process: its ID and the start time that tells it from a later one with the same ID.
    struct Process: Hashable {
        var pid: Int32
        var startTime: String
    }

    /// Every process whose environment holds `entry` (`NAME=value`), zombies left out.
    static func processes(withEnvironment entry: String) -> [Process] {
        let wanted = Array(entry.utf8)
        return allPIDs().compactMap { pid in
            guard let environment = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return nil }
            let entries = environment.split(separator: 0, omittingEmptySubsequences: true)
            guard entries.contains(where: { Array($0) == wanted }) else { return nil }
            return alive(pid)
        }
    }

    /// Every process whose command line holds `text`, zombies left out.
    static func mentioning(_ text: String) -> [Process] {
        allPIDs().compactMap { pid in
            guard let line = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
            return String(decoding: line, as: UTF8.self).contains(text) ? alive(pid) : nil
        }
    }

    /// Every process whose parent is `parent`, zombies left out.
    static func children(of parent: Int32) -> [Process] {
        allPIDs().compactMap { pid in fields(pid)?.parent == parent ? alive(pid) : nil }
    }

    /// Whether `process` still runs (a zombie has ended).
    static func isRunning(_ process: Process) -> Bool {
        alive(process.pid) == process
    }

    /// Sends SIGKILL to each of `processes` that still runs (and is still that process).
    static func stop(_ processes: [Process]) {
        for process in processes where isRunning(process) { kill(process.pid, SIGKILL) }
    }

    private static func alive(_ pid: Int32) -> Process? {
        guard let fields = fields(pid), fields.state != "Z", fields.state != "X" else { return nil }
        return Process(pid: pid, startTime: fields.startTime)
    }

    private static func allPIDs() -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { Int32($0) }
    }

    /// State, parent and start time from /proc/PID/stat (after the command name, which may hold
    /// spaces and parentheses, so the fields are read after its last parenthesis).
    private static func fields(_ pid: Int32) -> (state: String, parent: Int32, startTime: String)? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        guard let close = text.lastIndex(of: ")") else { return nil }
        let rest = text[text.index(after: close)...].split(separator: " ")
        // rest[0] is field 3 (state), rest[1] field 4 (parent), rest[19] field 22 (start time).
        guard rest.count > 19, let parent = Int32(rest[1]) else { return nil }
        return (String(rest[0]), parent, String(rest[19]))
    }
}
