#!/usr/bin/env bash
# The test command: installs what the tests need, builds everything, runs every test (unit,
# simulation, CLI and server processes, PostgreSQL on a throwaway cluster), the OpenAPI fuzz run
# and a quick benchmark pass that only checks the benchmark still works.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

work=$(mktemp -d)
pg_dir=""
cleanup() {
  if [ -n "$pg_dir" ]; then scripts/postgres-cluster.sh stop "$pg_dir" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "== build"
swift build --build-tests

if [ -x scripts/postgres-cluster.sh ] && [ -z "${SYNCKEYCHAIN_TEST_POSTGRES_URL:-}" ]; then
  echo "== PostgreSQL"
  pg_dir="$work/postgres"
  SYNCKEYCHAIN_TEST_POSTGRES_URL=$(scripts/postgres-cluster.sh start "$pg_dir" | tail -n 1)
  export SYNCKEYCHAIN_TEST_POSTGRES_URL
fi

# Every suite, the end-to-end client suite included, in one test process. (The client suite used
# to run in a process of its own after a stall with no CPU use, most likely a pipe to a child that
# other children inherited and held open; the pipes are close-on-exec since (ProcessTesting's
# OutputPipe).) The run is bounded so that a stall fails it instead of eating CI's time.
echo "== tests"
set +e
timeout --kill-after=30 1500 stdbuf -oL -eL swift test --skip-build 2>&1 | tee "$work/test.log"
test_status=${PIPESTATUS[0]}
set -e

# The shipped driver over real SQLite storage, with every fault, on 2,000 seeds (issue 11): two
# processes of 1,000 seeds each, one per core. A violation prints its seed and how to reproduce it.
echo "== simulation of the shipped driver (seeds 1-2000)"
simulate="$(swift build --show-bin-path)/sync-simulate"
"$simulate" --shipped --first-seed 1 --seeds 1000 --operations 120 > "$work/simulate-1.log" 2>&1 &
first_half=$!
"$simulate" --shipped --first-seed 1001 --seeds 1000 --operations 120 > "$work/simulate-2.log" 2>&1 &
second_half=$!
simulation_status=0
wait "$first_half" || simulation_status=$?
wait "$second_half" || simulation_status=$?
grep -a -A 4 "failed:" "$work/simulate-1.log" "$work/simulate-2.log" || true
tail -n 1 "$work/simulate-1.log" "$work/simulate-2.log"
# Seeds whose violation is understood and left open, each with its decision: a failure of any other
# seed fails the run.
# 1015 and 1597 (decision 0195): a value that lost a conflict returns when a device that never saw
# it deletes the winner (the designed rule: an update beats a concurrent deletion). Which seeds
# meet that case moves with any change of the driver's effects (1015 passes since 0234, 1597 fails).
known_seeds="1015 1597"
failed_seeds=$(grep -ahoE '^seed [0-9]+ failed' "$work/simulate-1.log" "$work/simulate-2.log" | awk '{ print $2 }' | sort -n | tr '\n' ' ')
unexpected=$(for seed in $failed_seeds; do case " $known_seeds " in *" $seed "*) ;; *) echo "$seed";; esac; done)
if [ "$simulation_status" -ne 0 ] && [ -n "$failed_seeds" ] && [ -z "$unexpected" ]; then
  echo "simulation: only known open seeds failed ($failed_seeds); see scripts/test.sh"
  simulation_status=0
fi
[ "$test_status" -ne 0 ] || test_status=$simulation_status

other_status=0
if [ -x scripts/schemathesis.sh ]; then
  echo "== schemathesis"
  scripts/schemathesis.sh "$(swift build --show-bin-path)/sync-server" || other_status=$?
fi
if [ -d Benchmarks/keychain-bench ]; then
  echo "== benchmark (quick; numbers are not judged here)"
  swift run --skip-build keychain-bench --quick || other_status=$?
fi

# One closing line for the whole run, counted from Swift Testing's own output.
total=$(grep -aoE 'Test run with [0-9]+ tests?' "$work/test.log" | grep -oE '[0-9]+' | awk '{ sum += $1 } END { print sum + 0 }')
failed=$(grep -acE '^✘ Test [^ ]+.* (failed|recorded)' "$work/test.log" || true)
total=${total:-0}
echo "tests: $((total - failed)) passed, $failed failed"
if [ "$test_status" -ne 0 ]; then exit "$test_status"; fi
if [ "$total" -eq 0 ]; then echo "no test ran" >&2; exit 1; fi
exit "$other_status"
