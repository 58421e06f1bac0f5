#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests and benchmarks.
#
#   scripts/postgres-cluster.sh start DIR   creates (or reuses) a cluster in DIR, starts it on a
#                                           free port of its own, waits until it accepts
#                                           connections and prints its URL on stdout:
#                                           postgres://postgres@127.0.0.1:PORT/postgres
#   scripts/postgres-cluster.sh stop DIR    stops it and removes DIR
#
# Both are idempotent. Run as root (CI), the server runs as the `postgres` user, because
# PostgreSQL refuses to run as root. Authentication is `trust` on 127.0.0.1 and on the unix socket
# inside DIR only: this is a test cluster, never a production one.
set -euo pipefail

usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
command_name=$1
dir=$2

find_bin() {
    local name=$1
    if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return; fi
    local candidate
    for candidate in /usr/lib/postgresql/*/bin/"$name"; do
        [[ -x $candidate ]] && { echo "$candidate"; return; }
    done
    return 1
}

ensure_installed() {
    if ! find_bin initdb >/dev/null; then
        echo "initdb missing: installing Debian's postgresql package" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql >&2 \
            || { apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql >&2; }
    fi
}

# Runs a command as the cluster's owner: `postgres` when we are root, ourselves otherwise.
as_owner() {
    if [[ $(id -u) -eq 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

is_running() {
    [[ -f $dir/data/postmaster.pid ]] && as_owner "$(find_bin pg_ctl)" -D "$dir/data" status >/dev/null 2>&1
}

print_url() {
    echo "postgres://postgres@127.0.0.1:$(cat "$dir/port")/postgres"
}

start() {
    ensure_installed
    local initdb pg_ctl pg_isready
    initdb=$(find_bin initdb); pg_ctl=$(find_bin pg_ctl); pg_isready=$(find_bin pg_isready)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if [[ $(id -u) -eq 0 ]]; then
        chown postgres: "$dir"
        # The postgres user must be able to reach DIR through its parents (e.g. a 0700 mktemp dir).
        local parent
        parent=$(dirname "$dir")
        while [[ $parent != / ]]; do
            runuser -u postgres -- test -x "$parent" || chmod o+x "$parent"
            parent=$(dirname "$parent")
        done
    fi
    if is_running; then print_url; return; fi
    if [[ ! -f $dir/data/PG_VERSION ]]; then
        as_owner "$initdb" -D "$dir/data" -U postgres --auth=trust --no-sync -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
            || { cat "$dir/initdb.log" >&2; exit 1; }
        cat >"$dir/data/pg_hba.conf" <<'HBA'
local all all trust
host  all all 127.0.0.1/32 trust
HBA
        [[ $(id -u) -eq 0 ]] && chown postgres: "$dir/data/pg_hba.conf"
    fi
    free_port >"$dir/port.new" && mv "$dir/port.new" "$dir/port"
    local port
    port=$(cat "$dir/port")
    as_owner "$pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$dir -c max_connections=200 -c fsync=on" \
        start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    local deadline=$((SECONDS + 60))
    until "$pg_isready" -q -h 127.0.0.1 -p "$port"; do
        (( SECONDS < deadline )) || { echo "PostgreSQL did not become ready" >&2; exit 1; }
        sleep 0.2
    done
    print_url
}

stop() {
    [[ -d $dir ]] || return 0
    if [[ -f $dir/data/postmaster.pid ]]; then
        as_owner "$(find_bin pg_ctl)" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
}

case $command_name in
    start) start ;;
    stop) stop ;;
    *) usage ;;
esac
