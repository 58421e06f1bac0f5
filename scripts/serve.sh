#!/usr/bin/env bash
# The main job: the sync server on its embedded default (SQLite in ./sync-data, HTTPS with a
# self-signed certificate whose pin it prints), the release build an operator runs. Extra
# arguments go to sync-server.
set -euo pipefail
cd "$(dirname "$0")/.."
SYNCKEYCHAIN_SKIP_POSTGRES=1 scripts/install-deps.sh
swift build -c release --product sync-server >&2
exec "$(swift build -c release --show-bin-path)/sync-server" "$@"
