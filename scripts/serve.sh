#!/usr/bin/env bash
# The main job: the sync server on its embedded default (SQLite in ./sync-data, HTTPS with a
# self-signed certificate whose pin it prints). Extra arguments go to sync-server.
set -euo pipefail
cd "$(dirname "$0")/.."
SYNCKEYCHAIN_SKIP_POSTGRES=1 scripts/install-deps.sh
exec swift run sync-server "$@"
