#!/usr/bin/env bash
# Installs the system packages SyncKeychain needs on a fresh Debian machine with the Swift
# toolchain: SQLite headers (GRDB), PostgreSQL (the server's production backend and its tests),
# Python's venv (schemathesis runs from a virtual environment), faketime (real wrong clocks in the
# clock-skew tests), sd-bus and the Secret Service test clients, what README's walkthrough runs, and
# the command-line password stores the benchmark compares against. Skips what is already there.
set -euo pipefail

missing=()
dpkg -s libsqlite3-dev >/dev/null 2>&1 || missing+=(libsqlite3-dev)
command -v sqlite3 >/dev/null 2>&1 || missing+=(sqlite3)  # the CLI benchmark's baseline
command -v gpg >/dev/null 2>&1 || missing+=(gnupg)  # keychain import --format pass, and its test
if [ "${SYNCKEYCHAIN_SKIP_POSTGRES:-}" = "" ]; then
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
fi
command -v python3 >/dev/null 2>&1 || missing+=(python3 python3-venv)
command -v faketime >/dev/null 2>&1 || missing+=(faketime)  # real wrong clocks in the clock-skew tests
# The Secret Service provider (sd-bus) and its tests: a private bus and the real desktop clients.
dpkg -s libsystemd-dev >/dev/null 2>&1 || missing+=(libsystemd-dev)
command -v dbus-daemon >/dev/null 2>&1 || missing+=(dbus-daemon)
command -v secret-tool >/dev/null 2>&1 || missing+=(libsecret-tools)
command -v gdbus >/dev/null 2>&1 || missing+=(libglib2.0-bin)
# README's walkthrough as a test (ReadmeWalkthroughTests): its `jq`, and `systemd-analyze verify`
# for the user units scripts/install-desktop.sh writes (no systemd needs to run).
command -v jq >/dev/null 2>&1 || missing+=(jq)
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
# The benchmark's competitors for the CLI figures (decision 0160): gnome-keyring behind
# secret-tool, pass, keepassxc-cli. Without them those rows say "not run".
command -v gnome-keyring-daemon >/dev/null 2>&1 || missing+=(gnome-keyring)
command -v pass >/dev/null 2>&1 || missing+=(pass)
command -v keepassxc-cli >/dev/null 2>&1 || missing+=(keepassxc)

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
