#!/usr/bin/env bash
# Installs the desktop integration for the current user: the D-Bus activation file for
# org.freedesktop.secrets and systemd user units for `keychain secret-service` and `sync-client run`,
# pointing at the built binaries (default: .build/release). Usage: scripts/install-desktop.sh [BIN_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(cd "${1:-$root/.build/release}" && pwd)"
for exe in keychain keychain-secret-service sync-client; do
  [ -x "$bin/$exe" ] || { echo "install-desktop: $bin/$exe not found (swift build -c release first)" >&2; exit 1; }
done
services="${XDG_DATA_HOME:-$HOME/.local/share}/dbus-1/services"
units="${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user"
mkdir -p "$services" "$units"
render() { sed -e "s|@KEYCHAIN@|$bin/keychain|g" -e "s|@SYNC_CLIENT@|$bin/sync-client|g" "$1" > "$2"; }
render "$root/docs/desktop/org.freedesktop.secrets.service" "$services/org.freedesktop.secrets.service"
render "$root/docs/desktop/keychain-secret-service.service" "$units/keychain-secret-service.service"
render "$root/docs/desktop/sync-client.service" "$units/sync-client.service"
if command -v systemctl >/dev/null 2>&1 && systemctl --user daemon-reload 2>/dev/null; then
  echo "install-desktop: installed; enable with: systemctl --user enable --now keychain-secret-service sync-client"
else
  echo "install-desktop: installed under $services and $units"
fi
