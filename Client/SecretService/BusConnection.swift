import CSystemdBus
import Glibc
import Synchronization

/// One method call as the service sees it.
struct BusCall {
    var path: String
    var interface: String
    var member: String
    var sender: String
    var arguments: BusReader
}

/// What answers the calls on the service's object paths.
protocol BusCallHandler: AnyObject, Sendable {
    /// Answers `call`, appending the reply's arguments with `reply`, or throws a ``BusError``.
    func handle(_ call: BusCall, reply: BusWriter) throws(BusError)
    /// The client with unique name `client` left the bus (its connection closed).
    func clientLeft(_ client: String)
}

/// The session bus through sd-bus: owns a well-known name and routes every call on a path prefix
/// to one handler. sd-bus is not thread-safe, so one thread runs the loop and owns the bus; other
/// threads hand it work (signals, the stop) through ``perform(_:)``, which wakes it.
final class BusConnection: @unchecked Sendable {
    private let bus: OpaquePointer
    /// A pipe whose write end wakes the loop.
    private let wake: (read: Int32, write: Int32)
    private let pending = Mutex<[@Sendable (BusConnection) -> Void]>([])
    private let running = Atomic<Bool>(true)
    private var slot: OpaquePointer?
    private var departures: OpaquePointer?
    private var handler: (any BusCallHandler)?

    /// Connects to the session bus (`DBUS_SESSION_BUS_ADDRESS`) and takes `name`.
    /// - Throws: a ``BusError`` with a clear message when there is no bus or another process owns
    ///   the name.
    init(name: String) throws(BusError) {
        var opened: OpaquePointer?
        var result = sd_bus_open_user(&opened)
        guard result >= 0, let opened else { throw .failed("cannot connect to the session bus (\(Self.describe(result)))") }
        bus = opened
        result = sd_bus_request_name(bus, name, 0)
        if result < 0 {
            sd_bus_unref(bus)
            if result == -EEXIST || result == -EALREADY {
                throw .failed("another program already provides \(name) on this session bus")
            }
            throw .failed("cannot take the name \(name) (\(Self.describe(result)))")
        }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            sd_bus_unref(bus)
            throw .failed("cannot create the wake pipe")
        }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        wake = (ends[0], ends[1])
    }

    deinit {
        if let slot { sd_bus_slot_unref(slot) }
        if let departures { sd_bus_slot_unref(departures) }
        sd_bus_flush_close_unref(bus)
        close(wake.read)
        close(wake.write)
    }

    /// Runs the loop on the calling thread until ``stop()``, answering calls under `prefix`.
    func serve(prefix: String, handler: any BusCallHandler) throws(BusError) {
        self.handler = handler
        let context = Unmanaged.passUnretained(self).toOpaque()
        let result = sd_bus_add_fallback(bus, &slot, prefix, { message, userdata, _ in
            guard let message, let userdata else { return 0 }
            return Unmanaged<BusConnection>.fromOpaque(userdata).takeUnretainedValue().dispatch(message)
        }, context)
        guard result >= 0 else { throw .failed("cannot serve \(prefix) (\(Self.describe(result)))") }
        // A client that leaves the bus: the bus daemon says so with NameOwnerChanged (its unique
        // name, its old owner, no new one).
        let watched = sd_bus_match_signal(
            bus, &departures, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged",
            { message, userdata, _ in
                guard let message, let userdata else { return 0 }
                Unmanaged<BusConnection>.fromOpaque(userdata).takeUnretainedValue().nameOwnerChanged(message)
                return 0
            }, context)
        guard watched >= 0 else { throw .failed("cannot watch clients leave the bus (\(Self.describe(watched)))") }
        while running.load(ordering: .acquiring) {
            while true {
                let processed = sd_bus_process(bus, nil)
                if processed < 0 { throw .failed("the bus connection failed (\(Self.describe(processed)))") }
                if processed == 0 { break }
            }
            for work in pending.withLock({ queued in defer { queued.removeAll() }; return queued }) { work(self) }
            _ = sd_bus_flush(bus)
            guard running.load(ordering: .acquiring) else { break }
            waitForWork()
        }
    }

    /// Runs `work` on the bus thread (for signals from other threads).
    func perform(_ work: @escaping @Sendable (BusConnection) -> Void) {
        pending.withLock { $0.append(work) }
        ring()
    }

    /// Ends ``serve(prefix:handler:)`` (from any thread).
    func stop() {
        running.store(false, ordering: .releasing)
        ring()
    }

    private func ring() {
        var one: UInt8 = 1
        _ = write(wake.write, &one, 1)
    }

    /// Emits a signal, to every subscriber or to `destination` alone; on the bus thread only
    /// (see ``perform(_:)``).
    func emit(path: String, interface: String, member: String, destination: String? = nil, _ arguments: (BusWriter) throws(BusError) -> Void) {
        var signal: OpaquePointer?
        guard sd_bus_message_new_signal(bus, &signal, path, interface, member) >= 0, let signal else { return }
        defer { sd_bus_message_unref(signal) }
        if let destination, sd_bus_message_set_destination(signal, destination) < 0 { return }
        do {
            try arguments(BusWriter(message: signal))
            _ = sd_bus_send(bus, signal, nil)
        } catch {}
    }

    private func dispatch(_ message: OpaquePointer) -> Int32 {
        guard let handler else { return 0 }
        var type: UInt8 = 0
        guard sd_bus_message_get_type(message, &type) >= 0, type == UInt8(SD_BUS_MESSAGE_METHOD_CALL) else { return 0 }
        let call = BusCall(
            path: sd_bus_message_get_path(message).map { String(cString: $0) } ?? "/",
            interface: sd_bus_message_get_interface(message).map { String(cString: $0) } ?? "",
            member: sd_bus_message_get_member(message).map { String(cString: $0) } ?? "",
            sender: sd_bus_message_get_sender(message).map { String(cString: $0) } ?? "",
            arguments: BusReader(message: message))
        var reply: OpaquePointer?
        guard sd_bus_message_new_method_return(message, &reply) >= 0, let reply else { return -ENOMEM }
        defer { sd_bus_message_unref(reply) }
        do {
            try handler.handle(call, reply: BusWriter(message: reply))
            _ = sd_bus_send(bus, reply, nil)
        } catch {
            var failure = sd_bus_error()
            _ = sd_bus_error_set(&failure, error.name, error.message)
            _ = sd_bus_reply_method_error(message, &failure)
            sd_bus_error_free(&failure)
        }
        return 1
    }

    private func nameOwnerChanged(_ message: OpaquePointer) {
        let reader = BusReader(message: message)
        guard let name = try? reader.string(), let _ = try? reader.string(), let newOwner = try? reader.string(),
            name.hasPrefix(":"), newOwner.isEmpty
        else { return }
        handler?.clientLeft(name)
    }

    /// Waits for the bus or the wake descriptor, within sd-bus's own timeout.
    private func waitForWork() {
        let events = sd_bus_get_events(bus)
        var descriptors = [
            pollfd(fd: sd_bus_get_fd(bus), events: Int16(events > 0 ? events : Int32(POLLIN)), revents: 0),
            pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
        ]
        var deadline: UInt64 = 0
        var timeout: Int32 = -1
        if sd_bus_get_timeout(bus, &deadline) > 0, deadline != UInt64.max {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
            timeout = deadline > nowMicroseconds ? Int32(clamping: (deadline - nowMicroseconds + 999) / 1_000) : 0
        }
        _ = poll(&descriptors, 2, timeout)
        var drained = [UInt8](repeating: 0, count: 64)
        while read(wake.read, &drained, drained.count) > 0 {}
    }

    private static func describe(_ result: Int32) -> String {
        String(cString: strerror(-result))
    }
}
