import CSystemdBus

/// A D-Bus error answer: a name from the Secret Service or D-Bus error namespaces and a message
/// that never carries a secret.
struct BusError: Error, Equatable {
    var name: String
    var message: String

    static func invalidArguments(_ message: String) -> BusError { BusError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message) }
    static func noSuchObject(_ path: String) -> BusError {
        BusError(name: "org.freedesktop.Secret.Error.NoSuchObject", message: "no such object: \(path)")
    }
    static func unknownMethod(_ interface: String, _ member: String) -> BusError {
        BusError(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "no method \(member) in \(interface)")
    }
    static func notSupported(_ message: String) -> BusError { BusError(name: "org.freedesktop.DBus.Error.NotSupported", message: message) }
    static let isLocked = BusError(name: "org.freedesktop.Secret.Error.IsLocked", message: "the keychain is locked")
    static func noSession(_ path: String) -> BusError {
        BusError(name: "org.freedesktop.Secret.Error.NoSession", message: "no such session: \(path)")
    }
    static func failed(_ message: String) -> BusError { BusError(name: "org.freedesktop.DBus.Error.Failed", message: message) }
}

/// A value the service sends: the types its properties and answers use.
enum BusValue: Equatable {
    case string(String)
    case objectPath(String)
    case bool(Bool)
    case uint64(UInt64)
    case stringMap([String: String])
    case objectPaths([String])
    case bytes([UInt8])

    /// The D-Bus signature of the value.
    var signature: String {
        switch self {
        case .string: "s"
        case .objectPath: "o"
        case .bool: "b"
        case .uint64: "t"
        case .stringMap: "a{ss}"
        case .objectPaths: "ao"
        case .bytes: "ay"
        }
    }
}

/// A secret as the Secret Service API carries it: `(oayays)`, the session, its parameters (an
/// initialisation vector for an encrypted session), the value and its content type.
struct TransportSecret: Equatable {
    var session: String
    var parameters: [UInt8]
    var value: [UInt8]
    var contentType: String
}

/// Reads a message's arguments in order. Every read checks the type first, so a message of the
/// wrong shape is an `InvalidArgs` error, never a crash.
struct BusReader {
    let message: OpaquePointer

    private func check(_ result: Int32, _ what: String) throws(BusError) {
        if result <= 0 { throw .invalidArguments("expected \(what)") }
    }

    private func expect(_ type: Character, _ what: String) throws(BusError) {
        var found: CChar = 0
        var contents: UnsafePointer<CChar>?
        guard sd_bus_message_peek_type(message, &found, &contents) > 0, found == CChar(type.asciiValue!) else {
            throw .invalidArguments("expected \(what)")
        }
    }

    func string() throws(BusError) -> String { try text("s", "a string") }
    func objectPath() throws(BusError) -> String { try text("o", "an object path") }

    private func text(_ type: Character, _ what: String) throws(BusError) -> String {
        try expect(type, what)
        var pointer: UnsafePointer<CChar>?
        try check(sd_bus_message_read_basic(message, CChar(type.asciiValue!), &pointer), what)
        guard let pointer else { throw .invalidArguments("expected \(what)") }
        return String(cString: pointer)
    }

    func bool() throws(BusError) -> Bool {
        try expect("b", "a boolean")
        var value: Int32 = 0
        try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "b")), &value), "a boolean")
        return value != 0
    }

    func bytes() throws(BusError) -> [UInt8] {
        try expect("a", "a byte array")
        var pointer: UnsafeRawPointer?
        var size = 0
        guard sd_bus_message_read_array(message, CChar(UInt8(ascii: "y")), &pointer, &size) >= 0 else {
            throw .invalidArguments("expected a byte array")
        }
        guard let pointer, size > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: size))
    }

    /// `a{ss}`.
    func stringMap() throws(BusError) -> [String: String] {
        try dictionary("s", "a string dictionary") { () throws(BusError) in try string() }
    }

    /// `a{s…}`: string keys, each value read by `value`.
    private func dictionary<Value>(_ valueSignature: String, _ what: String, _ value: () throws(BusError) -> Value) throws(BusError) -> [String: Value] {
        try enter("a", "{s\(valueSignature)}", what)
        var map: [String: Value] = [:]
        while sd_bus_message_enter_container(message, CChar(UInt8(ascii: "e")), "s" + valueSignature) > 0 {
            let key = try string()
            map[key] = try value()
            try exit()
        }
        try exit()
        return map
    }

    /// `ao`.
    func objectPaths() throws(BusError) -> [String] {
        try enter("a", "o", "an array of object paths")
        var paths: [String] = []
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        while sd_bus_message_peek_type(message, &type, &contents) > 0 {
            paths.append(try objectPath())
        }
        try exit()
        return paths
    }

    /// `(oayays)`.
    func secret() throws(BusError) -> TransportSecret {
        try enter("r", "oayays", "a secret (oayays)")
        let secret = TransportSecret(session: try objectPath(), parameters: try bytes(), value: try bytes(), contentType: try string())
        try exit()
        return secret
    }

    /// `a{sv}` whose values are strings or string dictionaries (item and collection properties).
    func properties() throws(BusError) -> [String: BusValue] {
        try dictionary("v", "a property dictionary") { () throws(BusError) in try variant() }
    }

    /// A variant holding a string, an object path, a boolean, bytes or a string dictionary.
    func variant() throws(BusError) -> BusValue {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        guard sd_bus_message_peek_type(message, &type, &contents) > 0, type == CChar(UInt8(ascii: "v")), let contents else {
            throw .invalidArguments("expected a variant")
        }
        let signature = String(cString: contents)
        try enter("v", signature, "a variant")
        let value: BusValue
        switch signature {
        case "s": value = .string(try string())
        case "o": value = .objectPath(try objectPath())
        case "b": value = .bool(try bool())
        case "a{ss}": value = .stringMap(try stringMap())
        case "ay": value = .bytes(try bytes())
        default: throw .invalidArguments("a variant of type \(signature) is not understood here")
        }
        try exit()
        return value
    }

    private func enter(_ type: Character, _ contents: String, _ what: String) throws(BusError) {
        guard sd_bus_message_enter_container(message, CChar(type.asciiValue!), contents) > 0 else {
            throw .invalidArguments("expected \(what)")
        }
    }

    private func exit() throws(BusError) {
        guard sd_bus_message_exit_container(message) >= 0 else { throw .invalidArguments("malformed container") }
    }
}

/// Appends arguments to a message being built.
struct BusWriter {
    let message: OpaquePointer

    private func check(_ result: Int32) throws(BusError) {
        if result < 0 { throw .failed("cannot build the answer (errno \(-result))") }
    }

    func string(_ value: String) throws(BusError) { try text("s", value) }
    func objectPath(_ value: String) throws(BusError) { try text("o", value) }

    private func text(_ type: Character, _ value: String) throws(BusError) {
        try check(value.withCString { sd_bus_message_append_basic(message, CChar(type.asciiValue!), $0) })
    }

    func bool(_ value: Bool) throws(BusError) {
        var raw: Int32 = value ? 1 : 0
        try check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "b")), &raw))
    }

    func uint64(_ value: UInt64) throws(BusError) {
        var raw = value
        try check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "t")), &raw))
    }

    func bytes(_ value: [UInt8]) throws(BusError) {
        try check(value.withUnsafeBytes { sd_bus_message_append_array(message, CChar(UInt8(ascii: "y")), $0.baseAddress, $0.count) })
    }

    func container(_ type: Character, _ contents: String, _ body: () throws(BusError) -> Void) throws(BusError) {
        try check(sd_bus_message_open_container(message, CChar(type.asciiValue!), contents))
        try body()
        try check(sd_bus_message_close_container(message))
    }

    func objectPaths(_ paths: [String]) throws(BusError) {
        try container("a", "o") { () throws(BusError) in
            for path in paths { try objectPath(path) }
        }
    }

    func stringMap(_ map: [String: String]) throws(BusError) {
        try container("a", "{ss}") { () throws(BusError) in
            for (key, value) in map.sorted(by: { $0.key < $1.key }) {
                try container("e", "ss") { () throws(BusError) in
                    try string(key)
                    try string(value)
                }
            }
        }
    }

    func secret(_ secret: TransportSecret) throws(BusError) {
        try container("r", "oayays") { () throws(BusError) in
            try objectPath(secret.session)
            try bytes(secret.parameters)
            try bytes(secret.value)
            try string(secret.contentType)
        }
    }

    func value(_ value: BusValue) throws(BusError) {
        switch value {
        case .string(let text): try string(text)
        case .objectPath(let path): try objectPath(path)
        case .bool(let flag): try bool(flag)
        case .uint64(let number): try uint64(number)
        case .stringMap(let map): try stringMap(map)
        case .objectPaths(let paths): try objectPaths(paths)
        case .bytes(let data): try bytes(data)
        }
    }

    func variant(_ value: BusValue) throws(BusError) {
        try container("v", value.signature) { () throws(BusError) in try self.value(value) }
    }

    /// `a{sv}`.
    func properties(_ properties: [(String, BusValue)]) throws(BusError) {
        try container("a", "{sv}") { () throws(BusError) in
            for (name, value) in properties {
                try container("e", "sv") { () throws(BusError) in
                    try string(name)
                    try variant(value)
                }
            }
        }
    }
}
