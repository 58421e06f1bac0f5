import Foundation
import ProcessTesting
import SyncProtocol

/// A rewriting proxy in front of the real server (a real process: Python's standard library),
/// standing for a malicious or broken server as one device sees it. It forwards every request,
/// except the keychain zone's change feed in the mode the test writes into its mode file:
/// - `pass`: forward (the first non-empty keychain page is recorded);
/// - `wipe`: an incremental pull is answered `410 cursor_expired`, and the full resync that
///   follows gets the server's answer with every item taken out;
/// - `replay`: the next incremental pull is answered with the recorded page, once, naming the
///   question asked (`after`, `resync`, `collected`) as a server replaying on purpose does; then `pass`;
/// - `replayAlways`: every incremental pull is answered with the recorded page, naming the question asked;
/// - `replayVerbatim`: every incremental pull is answered with the recorded page as it was, naming
///   the question it answered then;
/// - `hide`, `hideLast`: every non-empty page is served with its first (last) item taken out, the
///   rest (cursor, `hasMore`) as the server answered: the device is told it is in step without it;
/// - `hideLastAndStatements`: as `hideLast`, and the keychain zone's statements are served as
///   none: a server that hides a write and every statement that holds it;
/// - `hideKeyValue`: as `hide`, for the feeds of key-value stores (zones `kv.…`) instead;
/// - `hideGroup`: as `hide`, for the feeds of shared groups' zones (`/v1/groups/…/zones/…`) instead;
/// - `shiftAndHide`: as `hide`, and every sequence number and cursor served is 1,000 higher than
///   the server's: the device's feed positions are not the other devices' (for a device's first
///   pull, whose request names position 0, so no request needs shifting back).
///
/// Beside the mode, for account-state tests (each a file beside the mode file, read per request):
/// a request failed once (``fail(_:_:occurrence:)``), requests held until the test releases them
/// (``hold(_:_:)``: a race put in a chosen order), a short device log served once
/// (``serveShortDeviceLogOnce(entries:)``), and a statement served in place of a device's own
/// (``serve(statement:of:zone:)``), forged versions served in place of an item's
/// (``serveVersions(_:)``).
///
/// For approval enrolment (decision 0271), the proxy keeps the last approval request it served
/// (``approvalSeen()``) and the last reveal it carried (``approvalReveal()``), and serves what a
/// server answering in the approver's place would: its own offer in place of the approver's
/// (``serveApprovalOffer(_:)``), its own answer (``serveApprovalAnswer(_:)``) and its own device log
/// (``serveDeviceLog(_:)``); and a password wrap of its own at sign-in (``serveSignInWrap(_:)``).
/// For contacts (decision 0282), an identity card of its own for any account looked up
/// (``serveIdentityCard(_:)``); for groups (decision 0283), a group of its own making
/// (``serveForgedGroup(_:entries:)``) and group logs rolled back (``serveGroupLogs(cutTo:)``).
final class RewritingProxy: Sendable {
    enum Mode: String, Sendable {
        case pass, wipe, replay, replayAlways, replayVerbatim, hide, hideLast, hideLastAndStatements, hideKeyValue, hideGroup, shiftAndHide
    }

    let url: String
    private let process: ChildProcess
    private let modeFile: URL

    init(upstreamPort: Int, in directory: URL) async throws {
        let script = directory.appendingPathComponent("rewriting_proxy.py")
        try Self.source.write(to: script, atomically: true, encoding: .utf8)
        modeFile = directory.appendingPathComponent("proxy-mode")
        try Mode.pass.rawValue.write(to: modeFile, atomically: true, encoding: .utf8)
        process = try ChildProcess(
            URL(fileURLWithPath: "/usr/bin/python3"), [script.path, String(upstreamPort), modeFile.path])
        // The whole line, its newline included: a line read in part would give no port.
        try await process.waitForOutput(containing: "\n")
        guard let line = process.stdout.split(separator: "\n").first(where: { $0.hasPrefix("listening ") }),
            let port = Int(line.dropFirst("listening ".count))
        else { throw TestFailure("the proxy printed no port: \(process.stdout) \(process.stderr)") }
        url = "http://127.0.0.1:\(port)"
    }

    func set(_ mode: Mode) throws {
        try mode.rawValue.write(to: modeFile, atomically: true, encoding: .utf8)
    }

    func stop() { process.stop() }

    /// Answers the `occurrence`-th request `method path` (path without its query) from now on with
    /// a 500 and forwards nothing: a command cut off between two of its steps.
    func fail(_ method: String, _ path: String, occurrence: Int) throws {
        try write("\(method) \(path) \(occurrence) \(UUID().uuidString)", to: "fail")
    }

    /// Holds every request `method path` until ``release(_:)`` releases it (at most 60 s): the
    /// held ones are numbered from 1 in the order they arrive.
    func hold(_ method: String, _ path: String) throws {
        try write("\(method) \(path)", to: "hold")
    }

    /// Holds no more requests (those held stay held until released).
    func stopHolding() throws {
        try? FileManager.default.removeItem(at: file("hold"))
    }

    /// Waits until the `number`-th held request arrived.
    func waitUntilHeld(_ number: Int) async throws {
        try await eventually(timeout: .seconds(60), "request \(number) held at the proxy") {
            (try? String(contentsOf: file("held"), encoding: .utf8)).flatMap { Int($0) } ?? 0 >= number
        }
    }

    /// Releases the held requests up to the `number`-th.
    func release(_ number: Int) throws {
        try write(String(number), to: "released")
    }

    /// Answers the next read of the device log from its start with its first `entries` entries only
    /// (an older log, or one the server announces differently from what it serves next); then
    /// forwards again.
    func serveShortDeviceLogOnce(entries: Int) throws {
        try write(String(entries), to: "shortlog")
    }

    /// Answers every read of the device log as if it ended before entry `index` (the entries from
    /// it on are left out, `hasMore` false) until ``stopWithholdingDeviceLog()``: a server that
    /// keeps a revocation from this device.
    func withholdDeviceLog(from index: Int) throws {
        try write(String(index), to: "withheldlog")
    }

    func stopWithholdingDeviceLog() throws {
        try? FileManager.default.removeItem(at: file("withheldlog"))
    }

    /// Serves `statement` as `device`'s latest statement about `zone` (in place of the server's,
    /// or beside the others when the server has none of the device) until ``stopServingStatement()``.
    func serve(statement: [UInt8], of device: String, zone: String) throws {
        let message = ["zone": zone, "device": device, "statement": Data(statement).base64EncodedString()]
        try write(String(decoding: try JSONEncoder().encode(message), as: UTF8.self), to: "statement")
    }

    func stopServingStatement() throws {
        try? FileManager.default.removeItem(at: file("statement"))
    }

    /// Every answer from now on says, in its `Date` header, a time `seconds` ahead of the real one
    /// (a server whose clock jumped, or that lies about it).
    func shiftDate(by seconds: Int) throws {
        try write(String(seconds), to: "date-offset")
    }

    /// The last approval request (`GET /v1/approval-requests/ID`) the proxy served, as served.
    func approvalSeen() throws -> ApprovalRequestMessage? {
        guard let data = try? Data(contentsOf: file("approval-seen")) else { return nil }
        return try JSONDecoder().decode(ApprovalRequestMessage.self, from: data)
    }

    /// The last reveal (`PUT /v1/approval-requests/ID/reveal`) the proxy carried.
    func approvalReveal() throws -> ApprovalRevealRequest? {
        guard let data = try? Data(contentsOf: file("approval-reveal")) else { return nil }
        return try JSONDecoder().decode(ApprovalRevealRequest.self, from: data)
    }

    /// Serves `offer` in place of the approver's in every approval request that has one.
    func serveApprovalOffer(_ offer: [UInt8]) throws {
        try write(Data(offer).base64EncodedString(), to: "approval-offer")
    }

    /// Serves `answer` as the answer of every approval request read from now on.
    func serveApprovalAnswer(_ answer: [UInt8]) throws {
        try write(Data(answer).base64EncodedString(), to: "approval-answer")
    }

    /// Serves `wrap` as the password's wrap of the account key in every sign-in answer.
    func serveSignInWrap(_ wrap: [UInt8]) throws {
        try write(Data(wrap).base64EncodedString(), to: "sign-in-wrap")
    }

    /// Serves `entries` as the whole device log, in place of the server's.
    /// Serves `items`' versions in place of the server's wherever the keychain feed lists one of
    /// them (its position in the feed kept): a server serving forged versions.
    func serveVersions(_ items: [FeedItem]) throws {
        try write(String(decoding: try WireCoding.makeEncoder().encode(items), as: UTF8.self), to: "forged-versions")
    }

    /// Serves `card` as the identity card of every account looked up from now on (decision 0282);
    /// nil: the server's again.
    func serveIdentityCard(_ card: [UInt8]?) throws {
        guard let card else {
            try FileManager.default.removeItem(at: file("identity-card"))
            return
        }
        try write(Data(card).base64EncodedString(), to: "identity-card")
    }

    /// Lists a group of its own making to every device (`GET /v1/groups`) and serves `entries` as
    /// its log (decision 0283): a server that invites an account into a group it made up.
    func serveForgedGroup(_ group: [UInt8], entries: [[UInt8]]) throws {
        let forged: [String: Any] = ["group": group.map { String(format: "%02x", $0) }.joined(), "entries": entries.map { Data($0).base64EncodedString() }]
        try write(String(decoding: try JSONSerialization.data(withJSONObject: forged), as: UTF8.self), to: "forged-group")
    }

    /// Serves every group log cut to its first `entries` entries from now on: a server rolling a
    /// group's membership back (decision 0283).
    func serveGroupLogs(cutTo entries: Int) throws {
        try write(String(entries), to: "group-log-cut")
    }

    func serveDeviceLog(_ entries: [[UInt8]]) throws {
        let encoded = entries.map { Data($0).base64EncodedString() }
        try write(String(decoding: try JSONEncoder().encode(encoded), as: UTF8.self), to: "forged-log")
    }

    private func file(_ name: String) -> URL { URL(fileURLWithPath: modeFile.path + "." + name) }

    private func write(_ text: String, to name: String) throws {
        try text.write(to: file(name), atomically: true, encoding: .utf8)
    }

    /// The bytes (request and response bodies) the proxy has carried so far, by method and kind
    /// of path (`GET statements`, `PUT statement`, `GET device-log`, `GET changes`, …).
    func carried() throws -> [String: Int] {
        let file = URL(fileURLWithPath: modeFile.path + ".stats")
        guard FileManager.default.fileExists(atPath: file.path) else { return [:] }
        return try JSONDecoder().decode([String: Int].self, from: Data(contentsOf: file))
    }

    /// How many requests the proxy has answered so far, by method and kind of path, as
    /// ``carried()`` names them (`GET device-log`, `POST device-log`, …).
    func requests() throws -> [String: Int] {
        let file = URL(fileURLWithPath: modeFile.path + ".requests")
        guard FileManager.default.fileExists(atPath: file.path) else { return [:] }
        return try JSONDecoder().decode([String: Int].self, from: Data(contentsOf: file))
    }

    private static let source = #"""
        import http.client, http.server, json, os, sys, threading, time, urllib.parse

        UPSTREAM = int(sys.argv[1])
        MODE_FILE = sys.argv[2]
        recorded = None
        carried = {}
        answered = {}
        carried_lock = threading.Lock()
        HOP = {"connection", "keep-alive", "transfer-encoding", "date", "server", "content-length"}

        def mode():
            with open(MODE_FILE) as f:
                return f.read().strip()

        def set_mode(value):
            with open(MODE_FILE, "w") as f:
                f.write(value)

        def side(name):
            try:
                with open(MODE_FILE + "." + name) as f:
                    return f.read().strip()
            except FileNotFoundError:
                return None

        def write_side(name, value):
            with open(MODE_FILE + "." + name + ".tmp", "w") as f:
                f.write(value)
            os.replace(MODE_FILE + "." + name + ".tmp", MODE_FILE + "." + name)

        side_lock = threading.Lock()
        failing = {"rule": None, "count": 0}
        holding = {"count": 0}

        class Proxy(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def date_time_string(self, timestamp=None):
                offset = float(side("date-offset") or 0)
                return super().date_time_string((timestamp if timestamp is not None else time.time()) + offset)

            def forward(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP and k.lower() != "host"}
                self.sent_body = body
                connection = http.client.HTTPConnection("127.0.0.1", UPSTREAM, timeout=30)
                connection.request(self.command, self.path, body=body, headers=headers)
                response = connection.getresponse()
                data = response.read()
                kept = [(k, v) for k, v in response.getheaders() if k.lower() not in HOP]
                connection.close()
                return response.status, kept, data

            def count(self, request_length, data):
                path = urllib.parse.urlsplit(self.path).path
                parts = path.rstrip("/").split("/")
                # /v1/approval-requests/ID counts as "approval-request", not by its ID.
                kind = "approval-request" if len(parts) == 4 and parts[2] == "approval-requests" else parts[-1]
                key = self.command + " " + kind
                with carried_lock:
                    carried[key] = carried.get(key, 0) + request_length + len(data)
                    answered[key] = answered.get(key, 0) + 1
                    for name, value in (("stats", carried), ("requests", answered)):
                        with open(MODE_FILE + "." + name + ".tmp", "w") as f:
                            json.dump(value, f)
                        os.replace(MODE_FILE + "." + name + ".tmp", MODE_FILE + "." + name)

            def answer(self, status, headers, data):
                self.count(int(self.headers.get("Content-Length") or 0), data)
                self.send_response(status)
                for k, v in headers:
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def injected_failure(self):
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                body = json.dumps({"error": {"code": "injected_failure", "message": "the proxy failed this request"}}).encode()
                return self.answer(500, [("Content-Type", "application/json")], body)

            def handle_any(self):
                global recorded
                url = urllib.parse.urlsplit(self.path)
                query = urllib.parse.parse_qs(url.query)
                request = self.command + " " + url.path
                rule = side("fail")
                if rule is not None:
                    method, path, occurrence, _ = rule.split(" ")
                    if request == method + " " + path:
                        with side_lock:
                            if failing["rule"] != rule:
                                failing["rule"] = rule
                                failing["count"] = 0
                            failing["count"] += 1
                            hit = failing["count"] == int(occurrence)
                        if hit:
                            return self.injected_failure()
                if side("hold") == request:
                    with side_lock:
                        holding["count"] += 1
                        number = holding["count"]
                        write_side("held", str(number))
                    deadline = time.monotonic() + 60
                    while time.monotonic() < deadline and int(side("released") or 0) < number:
                        time.sleep(0.01)
                if request == "GET /v1/device-log" and query.get("from", ["0"])[0] == "0":
                    with side_lock:
                        short = side("shortlog")
                        if short is not None:
                            os.remove(MODE_FILE + ".shortlog")
                    if short is not None:
                        status, headers, data = self.forward()
                        page = json.loads(data)
                        page["entries"] = [entry for entry in page["entries"] if entry["index"] < int(short)]
                        page["hasMore"] = False
                        return self.answer(status, headers, json.dumps(page).encode())
                forged_log = side("forged-log") if request == "GET /v1/device-log" else None
                if forged_log is not None:
                    self.forward()
                    start = int(query.get("from", ["0"])[0])
                    entries = [{"index": index, "entry": entry} for index, entry in enumerate(json.loads(forged_log)) if index >= start]
                    return self.answer(200, [("Content-Type", "application/json")], json.dumps({"entries": entries, "hasMore": False}).encode())
                approval_parts = url.path.rstrip("/").split("/")
                if len(approval_parts) == 4 and approval_parts[2] == "approval-requests" and self.command == "GET":
                    status, headers, data = self.forward()
                    if status == 200:
                        message = json.loads(data)
                        offer = side("approval-offer")
                        if offer is not None and message.get("offer") is not None:
                            message["offer"] = offer
                        answer = side("approval-answer")
                        if answer is not None:
                            message["response"] = answer
                        data = json.dumps(message).encode()
                        write_side("approval-seen", data.decode())
                    return self.answer(status, headers, data)
                if len(approval_parts) == 5 and approval_parts[2] == "approval-requests" and approval_parts[4] == "reveal":
                    status, headers, data = self.forward()
                    if status < 300 and self.sent_body:
                        write_side("approval-reveal", self.sent_body.decode())
                    return self.answer(status, headers, data)
                group_parts = url.path.rstrip("/").split("/")
                forged_group = json.loads(side("forged-group") or "null")
                if request == "GET /v1/groups" and forged_group is not None:
                    status, headers, data = self.forward()
                    listed = json.loads(data)
                    listed["groups"].append({"group": forged_group["group"], "entries": len(forged_group["entries"])})
                    return self.answer(status, headers, json.dumps(listed).encode())
                if self.command == "GET" and len(group_parts) == 5 and group_parts[2] == "groups" and group_parts[4] == "log":
                    start = int(query.get("from", ["0"])[0])
                    if forged_group is not None and group_parts[3] == forged_group["group"]:
                        entries = [{"index": i, "entry": e} for i, e in enumerate(forged_group["entries"]) if i >= start]
                        return self.answer(200, [("Content-Type", "application/json")], json.dumps({"entries": entries, "hasMore": False}).encode())
                    cut = side("group-log-cut")
                    if cut is not None:
                        status, headers, data = self.forward()
                        page = json.loads(data)
                        if status == 200:
                            page["entries"] = [entry for entry in page["entries"] if entry["index"] < int(cut)]
                            page["hasMore"] = False
                        return self.answer(status, headers, json.dumps(page).encode())
                card = side("identity-card") if request == "POST /v1/identities/lookup" else None
                if card is not None:
                    self.forward()
                    return self.answer(200, [("Content-Type", "application/json")], json.dumps({"card": card}).encode())
                wrap = side("sign-in-wrap") if request == "POST /v1/sign-in" else None
                if wrap is not None:
                    status, headers, data = self.forward()
                    if status == 200:
                        answer = json.loads(data)
                        answer["keys"]["wrappedAccountKey"] = wrap
                        data = json.dumps(answer).encode()
                    return self.answer(status, headers, data)
                withheld = side("withheldlog") if request == "GET /v1/device-log" else None
                if withheld is not None:
                    status, headers, data = self.forward()
                    page = json.loads(data)
                    if status == 200:
                        page["entries"] = [entry for entry in page["entries"] if entry["index"] < int(withheld)]
                        page["hasMore"] = False
                    return self.answer(status, headers, json.dumps(page).encode())
                feed = self.command == "GET" and url.path == "/v1/zones/keychain/changes"
                resync = query.get("resync", ["false"])[0] == "true"
                current = mode()
                if feed and current == "wipe" and not resync:
                    self.forward()
                    body = json.dumps({"error": {"code": "cursor_expired", "message": "the cursor can no longer be served"}}).encode()
                    return self.answer(410, [("Content-Type", "application/json")], body)
                if feed and current in ("replay", "replayAlways", "replayVerbatim") and not resync and recorded is not None:
                    if current == "replay":
                        set_mode("pass")
                    self.forward()
                    body = recorded
                    if current != "replayVerbatim":
                        page = json.loads(recorded)
                        page["after"] = int(query.get("after", ["0"])[0])
                        page["collected"] = query.get("collected", ["false"])[0] == "true"
                        body = json.dumps(page).encode()
                    return self.answer(200, [("Content-Type", "application/json")], body)
                status, headers, data = self.forward()
                if current == "hideLastAndStatements" and self.command == "GET" and url.path == "/v1/zones/keychain/statements" and status == 200:
                    data = json.dumps({"statements": []}).encode()
                statement = side("statement")
                if statement is not None and self.command == "GET" and status == 200:
                    served = json.loads(statement)
                    if url.path == "/v1/zones/" + served["zone"] + "/statements":
                        page = json.loads(data)
                        others = [message for message in page["statements"] if message["device"] != served["device"]]
                        page["statements"] = others + [{"device": served["device"], "statement": served["statement"]}]
                        data = json.dumps(page).encode()
                store_feed = self.command == "GET" and url.path.startswith("/v1/zones/kv.") and url.path.endswith("/changes")
                group_feed = self.command == "GET" and url.path.startswith("/v1/groups/") and "/zones/" in url.path and url.path.endswith("/changes")
                if (store_feed and current == "hideKeyValue" or group_feed and current == "hideGroup") and status == 200:
                    page = json.loads(data)
                    if page["items"]:
                        page["items"] = page["items"][1:]
                        data = json.dumps(page).encode()
                forged_versions = side("forged-versions") if feed and status == 200 else None
                if forged_versions is not None:
                    forged = {item["id"]: item["versions"] for item in json.loads(forged_versions)}
                    page = json.loads(data)
                    for item in page["items"]:
                        if item["id"] in forged:
                            item["versions"] = forged[item["id"]]
                    data = json.dumps(page).encode()
                if feed and status == 200:
                    page = json.loads(data)
                    if current == "wipe":
                        page["items"] = []
                        page["hasMore"] = False
                        data = json.dumps(page).encode()
                    elif current == "hide" and page["items"]:
                        page["items"] = page["items"][1:]
                        data = json.dumps(page).encode()
                    elif current == "shiftAndHide" and page["items"]:
                        page["items"] = page["items"][1:]
                        for item in page["items"]:
                            item["sequence"] += 1000
                        page["cursor"] += 1000
                        data = json.dumps(page).encode()
                    elif current in ("hideLast", "hideLastAndStatements") and page["items"]:
                        page["items"] = page["items"][:-1]
                        data = json.dumps(page).encode()
                    elif recorded is None and page["items"]:
                        recorded = data
                self.answer(status, headers, data)

            do_GET = do_POST = do_PUT = do_DELETE = handle_any

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
        # One write: with PYTHONUNBUFFERED, print's parts are written one by one, and the test
        # could read "listening " before the port.
        sys.stdout.write("listening %d\n" % server.server_address[1])
        sys.stdout.flush()
        server.serve_forever()
        """#
}
