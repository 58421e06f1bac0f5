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

# Each part's heading, with the seconds the part before it took: where a CI run's time goes.
phase_started=$SECONDS
phase() {
  echo "== $* (the part before took $((SECONDS - phase_started)) s; $SECONDS s so far)"
  phase_started=$SECONDS
}

phase "build"
swift build --build-tests

if [ -x scripts/postgres-cluster.sh ] && [ -z "${SYNCKEYCHAIN_TEST_POSTGRES_URL:-}" ]; then
  phase "PostgreSQL"
  pg_dir="$work/postgres"
  SYNCKEYCHAIN_TEST_POSTGRES_URL=$(scripts/postgres-cluster.sh start "$pg_dir" | tail -n 1)
  export SYNCKEYCHAIN_TEST_POSTGRES_URL
fi

# Every suite, the end-to-end client suite included, in one test process. (The client suite used
# to run in a process of its own after a stall with no CPU use, most likely a pipe to a child that
# other children inherited and held open; the pipes are close-on-exec since (ProcessTesting's
# OutputPipe).) The run is bounded so that a stall fails it instead of eating CI's time.
phase "tests"
# Just before the bound, the processes still running are written down (the tree, with their ages)
# for the run's closing lines; a run that ends in time stops the watch.
bound=1500
(
  sleep $((bound - 20)) & pause=$!
  trap 'kill "$pause" 2>/dev/null; exit 0' TERM
  wait "$pause" && ps -eo pid,ppid,etimes,stat,args --forest | grep -v " \\[.*\\]$" | cut -c1-240 > "$work/processes-at-bound.txt"
) &
watch=$!
set +e
timeout --kill-after=30 "$bound" stdbuf -oL -eL swift test --skip-build 2>&1 | tee "$work/test.log"
test_status=${PIPESTATUS[0]}
set -e
kill "$watch" 2>/dev/null || true
wait "$watch" 2>/dev/null || true

simulate="$(swift build --show-bin-path)/sync-simulate"
# Runs the simulation of the shipped driver on COUNT seeds from FIRST, of OPERATIONS operations each,
# in two processes (one per core), with the options after KNOWN. A violation prints its seed and how
# to reproduce it; one of a seed not in KNOWN (the seeds whose violation is understood and left open)
# fails the run.
simulate_seeds() {
  local name=$1 from=$2 count=$3 operations=$4 known=$5
  shift 5
  local half=$((count / 2)) status=0 first second failed unexpected
  "$simulate" --first-seed "$from" --seeds "$half" --operations "$operations" "$@" > "$work/$name-1.log" 2>&1 &
  first=$!
  "$simulate" --first-seed $((from + half)) --seeds $((count - half)) --operations "$operations" "$@" > "$work/$name-2.log" 2>&1 &
  second=$!
  wait "$first" || status=$?
  wait "$second" || status=$?
  grep -a -A 4 -E "^seed [0-9]+ failed" "$work/$name-1.log" "$work/$name-2.log" || true
  tail -n 1 "$work/$name-1.log" "$work/$name-2.log"
  failed=$(grep -ahoE '^seed [0-9]+ failed' "$work/$name-1.log" "$work/$name-2.log" | awk '{ print $2 }' | sort -n | tr '\n' ' ')
  unexpected=$(for seed in $failed; do case " $known " in *" $seed "*) ;; *) echo "$seed";; esac; done)
  if [ "$status" -ne 0 ] && [ -n "$failed" ] && [ -z "$unexpected" ]; then
    echo "$name: only known open seeds failed ($failed); see scripts/test.sh"
    status=0
  fi
  return "$status"
}

simulation_status=0
# The shipped driver over real SQLite storage, with every fault (issue 11). A seed cost 0.9-1.3 s in
# this debug build on the machine of wave 2 and 0.44 s on that of 2026-11-28, where the first range
# went from 320 seeds to 640 and then to the 2,000 short seeds issue 33 asks for (about 7.5 minutes
# on two cores; the simulations are about 9.5 minutes of the run's 30); a change to the rule runs the
# wider ranges by hand before it lands (docs/simulation.md lists what ran on which code).
phase "simulation of the shipped driver (seeds 1-1500)"
simulate_seeds simulate 1 1500 120 "" || simulation_status=$?
# The last quarter of the 2,000 against a server that keeps 2 collected deletions a zone (R10a's
# bound, 100,000 by default): it forgets the others without evidence, as a server past the bound
# does. Only then does a page carry a collection time, and only then do the branches that judge an
# unlisted or listed copy against it (R48's listed clause, R49 C1) run at all: at the default bound
# no seed of these ranges reaches them (a coverage run, docs/simulation.md).
phase "the same past the collected-deletion bound (seeds 1501-2000, 2 kept a zone)"
simulate_seeds simulate-bound 1501 500 120 "" --collected-deletion-bound 2 || simulation_status=$?
# The same with a malicious server in one seed in three (issue 12, decision 0203): withholding,
# replays, forced resyncs, hidden statements, a fork between device groups, a stale key epoch
# (decision 0252). Known open: none (seeds 1-600). Fixed: 32 (0239), 50 (0241), 101 and 191 (0236,
# 0243), 272 (0242), 176 (0247), fork seeds 14, 29, 179, 209 (0248), 104 and 140 (0253); of 301-600:
# 485 (0243, 0248), 389, 419 and 464 (0248), 302 (0253).
# Which seeds meet a case moves with any change of the driver's effects.
phase "simulation of the shipped driver with a malicious server (seeds 1-120)"
simulate_seeds malice 1 120 120 "" --malice || simulation_status=$?
# Longer histories: 400 operations a seed, honest and malicious (docs/simulation.md).
phase "simulation of the shipped driver, long histories (seeds 1-40, 400 operations)"
simulate_seeds long 1 40 400 "" || simulation_status=$?
# Seeds 2 and 41 were known open here (a device back without its state under a malicious server):
# docs/sync-rules.md R53, R52.
phase "the same with a malicious server (seeds 1-30, 400 operations)"
simulate_seeds long-malice 1 30 400 "" --malice || simulation_status=$?
# The operator restores the server from a backup half-way through the faults (honest, R58): the
# only range whose server answers `feed_restored`. Known open: 78, a restore into a full account
# (docs/sync-rules.md §5; 12 and 60 were too until the crashes between commits died at later applies
# as well, which moved their draws). Fixed: 6 (R49 C4), and beyond this range 292 (R48) and 742 (R35).
phase "simulation of the shipped driver across a server restore (seeds 1-100)"
simulate_seeds restores 1 100 120 "78" --restores || simulation_status=$?
# A shared group's items (decision 0295): two accounts, the member removed and added back while its
# devices are offline; in every even seed the server keeps the removal from the member's devices or
# hides half the items from them.
phase "simulation of a shared group (seeds 1-200, half with a malicious server)"
simulate_seeds groups 1 200 120 "" --groups --malice || simulation_status=$?
[ "$test_status" -ne 0 ] || test_status=$simulation_status

other_status=0
if [ -x scripts/schemathesis.sh ]; then
  phase "schemathesis"
  scripts/schemathesis.sh "$(swift build --show-bin-path)/sync-server" || other_status=$?
fi
if [ -d Benchmarks/keychain-bench ]; then
  phase "benchmark (quick; numbers are not judged here)"
  swift run --skip-build keychain-bench --quick || other_status=$?
fi

phase "end"

# One closing line for the whole run, counted from Swift Testing's own output.
total=$( (grep -aoE 'Test run with [0-9]+ tests?' "$work/test.log" || true) | grep -oE '[0-9]+' | awk '{ sum += $1 } END { print sum + 0 }')
failed=$(grep -acE '^✘ Test [^ ]+.* (failed|recorded)' "$work/test.log" || true)
echo "tests: $((total - failed)) passed, $failed failed"
# A test process that ends without its summary was stopped at the bound or crashed: the closing
# lines say which tests it had started and not ended, what it printed on the way out, and (at the
# bound) which processes were still running, so that a stall on CI can be found from its tail.
if [ "$total" -eq 0 ]; then
  case "$test_status" in
    124|137) echo "the test process was stopped at its bound of $bound s (status $test_status)" ;;
    0) echo "the test process printed no summary" ;;
    *) echo "the test process ended without its summary (status $test_status$([ "$test_status" -gt 128 ] && echo ", signal $((test_status - 128))"))" ;;
  esac
  if [ -s "$work/processes-at-bound.txt" ]; then
    echo "processes $((bound - 20)) s into the tests:"
    cat "$work/processes-at-bound.txt"
  fi
  echo "tests started and not ended:"
  awk '/^◇ Test .* started\.$/ && !/^◇ Test case / { name = $0; sub(/^◇ Test /, "", name); sub(/ started\.$/, "", name); open[name]++ }
       /^(✔|✘) Test .* (passed|failed) after [0-9.]+ seconds/ {
         name = $0; sub(/^(✔|✘) Test /, "", name); sub(/( with [0-9]+ test cases?)? (passed|failed) after .*$/, "", name); open[name]-- }
       END { for (name in open) if (open[name] > 0 && name != "run") print "  " name }' "$work/test.log"
  grep -aE 'Fatal error|Fatal signal|Segmentation fault|Illegal instruction|Assertion failed|Precondition failed|Crash' "$work/test.log" | tail -n 20 || true
fi
if [ "$test_status" -ne 0 ]; then exit "$test_status"; fi
if [ "$total" -eq 0 ]; then echo "no test ran" >&2; exit 1; fi
exit "$other_status"
