#!/bin/bash
# Which lines of the sync rule's code a simulation range never runs: builds sync-simulate with
# coverage into .build-coverage, runs it with the arguments given (default: the first 300 honest
# seeds), and prints each file's region coverage and the lines of the machine that ran 0 times.
# A branch these lines show is one the simulation cannot vouch for: only its tests can.
#   scripts/simulation-coverage.sh --first-seed 1 --seeds 120 --malice
set -euo pipefail
cd "$(dirname "$0")/.."
build=.build-coverage
swift build --product sync-simulate --build-path "$build" -Xswiftc -profile-generate -Xswiftc -profile-coverage-mapping >&2
tools=$(dirname "$(command -v swift)")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
arguments=("$@")
[ ${#arguments[@]} -gt 0 ] || arguments=(--seeds 300)
# A range with failing seeds (the known open ones) is still measured.
LLVM_PROFILE_FILE="$work/%p.profraw" "$build/debug/sync-simulate" "${arguments[@]}" >&2 || true
"$tools/llvm-profdata" merge -sparse "$work"/*.profraw -o "$work/run.profdata"
files=(Sources/SyncCore/ZoneSyncMachine*.swift Client/SyncClient/Driver/ZoneDriver*.swift Client/SyncClient/Driver/KeychainZone.swift)
"$tools/llvm-cov" report "$build/debug/sync-simulate" -instr-profile "$work/run.profdata" "${files[@]}"
for file in Sources/SyncCore/ZoneSyncMachine*.swift; do
  echo "== $file: lines run 0 times"
  "$tools/llvm-cov" show "$build/debug/sync-simulate" -instr-profile "$work/run.profdata" "$file" | grep -E '^ *[0-9]+\| *0\|' || true
done
