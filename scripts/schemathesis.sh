#!/usr/bin/env bash
# Fuzzes a real sync-server against the committed OpenAPI document with schemathesis (PyPI).
#
#   scripts/schemathesis.sh [SYNC_SERVER_BINARY]
#
# Without an argument it builds `sync-server` (swift build) and uses that binary. Starts the server
# on the embedded SQLite store (temporary data directory, --insecure-http, port 0), runs
# schemathesis with the checks `not_a_server_error` and `response_schema_conformance`, prints the
# number of requests made and how many got a 5xx, stops the server and exits non-zero when
# schemathesis found a failure or the server answered any request with a 5xx.
#
# The stateful phase chains operations through the OpenAPI document's links (account creation ->
# sign-in, upload -> changes -> next page -> acknowledge).
#
# Environment: SCHEMATHESIS_MAX_EXAMPLES (default 20 per operation), SCHEMATHESIS_PHASES (default
# examples,coverage,fuzzing,stateful), SCHEMATHESIS_VENV (where
# schemathesis is installed if missing; default: a directory under $TMPDIR), SCHEMATHESIS_SEED.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
schema=$root/Server/SyncServer/openapi.yaml
max_examples=${SCHEMATHESIS_MAX_EXAMPLES:-20}
seed=${SCHEMATHESIS_SEED:-20261122}
venv=${SCHEMATHESIS_VENV:-${TMPDIR:-/tmp}/synckeychain-schemathesis-venv}

server=${1:-}
if [[ -z $server ]]; then
    (cd "$root" && swift build --product sync-server >&2)
    server=$(cd "$root" && swift build --show-bin-path)/sync-server
fi
[[ -x $server ]] || { echo "no sync-server binary at $server" >&2; exit 2; }
[[ -f $schema ]] || { echo "no OpenAPI document at $schema" >&2; exit 2; }

if [[ ! -x $venv/bin/schemathesis ]]; then
    echo "installing schemathesis into $venv" >&2
    python3 -m venv "$venv"
    # Pinned: the run must not change under CI with a new release of the tool.
    # One worker (below): with two, the tool itself now and then failed a case with an internal
    # "AST constructor recursion depth mismatch" (its threads building Python ASTs at once),
    # which made the run exit 1 with no failure of ours.
    "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==4.32.5" "hypothesis==6.170.15" >&2
fi

work=$(mktemp -d)
server_pid=
cleanup() {
    if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# The rate limits have tests of their own; here they would turn most of the run into 429 answers.
"$server" --host 127.0.0.1 --port 0 --data-dir "$work/data" --insecure-http \
    --sign-in-attempts-per-address 1000000 --sign-in-attempts-per-account 1000000 \
    --account-creations-per-address 1000000 --token-failures-per-address 1000000 >"$work/server.log" 2>&1 &
server_pid=$!

url=
deadline=$((SECONDS + 60))
while [[ -z $url ]]; do
    url=$(grep -oE 'http://127\.0\.0\.1:[0-9]+' "$work/server.log" | head -n 1 || true)
    if [[ -z $url ]]; then
        kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; echo "sync-server exited" >&2; exit 1; }
        (( SECONDS < deadline )) || { cat "$work/server.log" >&2; echo "sync-server printed no URL" >&2; exit 1; }
        sleep 0.1
    fi
done
echo "sync-server at $url" >&2

# A signed-in device, so the authenticated operations are fuzzed past the 401 (best effort: without
# a token they are still checked for server errors).
token=$(python3 - "$url" <<'PY' || true
import base64, json, sys, urllib.request
url = sys.argv[1]
def post(path, body):
    request = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)
b64 = lambda n, byte: base64.b64encode(bytes([byte]) * n).decode()
auth_key = b64(32, 1)
post("/v1/accounts", {"account": "schemathesis", "authKey": auth_key, "keys": {
    "kdf": {"algorithm": "scrypt", "logN": 17, "r": 8, "p": 1}, "salt": b64(16, 2), "wrappedAccountKey": b64(72, 3)}})
print(post("/v1/sign-in", {"account": "schemathesis", "authKey": auth_key, "device": "fuzzer",
                           "deviceName": "schemathesis"})["token"])
PY
)
auth=()
if [[ -n $token ]]; then auth=(--header "Authorization: Bearer $token"); else echo "could not sign a device in: fuzzing without a token" >&2; fi

# Revoking the fuzzer's own device would turn every later authenticated request into a 401, so the
# revocation runs last, in a second pass of its own.
fuzz() {
    local har=$1; shift
    "$venv/bin/schemathesis" run "$schema" \
        --url "$url" \
        "${auth[@]}" \
        --checks not_a_server_error,response_schema_conformance \
        --max-examples "$max_examples" \
        --seed "$seed" \
        --phases "${SCHEMATHESIS_PHASES:-examples,coverage,fuzzing,stateful}" \
        --workers 1 \
        --request-timeout 10 \
        --suppress-health-check all \
        --report har --report-har-path "$har" \
        "$@"
}
status=0
fuzz "$work/requests.har" --exclude-operation-id revokeDevice || status=$?
SCHEMATHESIS_PHASES=examples,coverage,fuzzing fuzz "$work/revoke.har" --include-operation-id revokeDevice || { (( status != 0 )) || status=$?; }

read -r requests server_errors < <(python3 - "$work/requests.har" "$work/revoke.har" <<'PY'
import json, sys
entries = []
for path in sys.argv[1:]:
    try:
        entries += json.load(open(path))["log"]["entries"]
    except (OSError, ValueError, KeyError):
        pass
print(len(entries), sum(1 for e in entries if e["response"]["status"] >= 500))
PY
)
echo "schemathesis: $requests requests, $server_errors server errors (5xx), schemathesis exit status $status"
if (( server_errors > 0 )); then
    echo "server errors:" >&2
    grep -iE 'error|fatal' "$work/server.log" | tail -n 20 >&2 || true
    exit 1
fi
exit "$status"
