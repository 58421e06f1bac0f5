/// A refusal of an operator's command line that is not a usage error: reported as one line,
/// `sync-server: MESSAGE`, exit status 1 (``SyncServerMain/main()``).
struct OperatorError: Error, CustomStringConvertible {
    let message: String

    init(_ message: String) { self.message = message }

    var description: String { message }
}
