#!/usr/bin/env bash
# The long fuzzing run (decision 0267, docs/fuzzing.md): every target of `keychain-fuzz list` in
# turn, the time shared evenly, then a table of executions, executions per second and crashes per
# target. Any input that breaks a property (a trap, an error that is not the decoder's own, a
# round trip that loses something, an input over the time bound) is kept as a file under
# Tests/FuzzingTests/Corpus/TARGET/ (crash-…, timeout-…, oom-…), where FuzzingTests replays it.
#
#   scripts/fuzz.sh [--minutes N] [--engine libfuzzer|builtin] [--debug] [--jobs J] [--only PATTERN]
#
#   --minutes N   the whole run (default 60)
#   --engine      libfuzzer (default): a release build instrumented for coverage, linked with the
#                 toolchain's libFuzzer, in .build-fuzz; builtin: the seeded mutation engine of the
#                 tests, in a plain release build (.build-fuzz-builtin), with no coverage guidance
#   --debug       builtin only: the debug build of `swift build` (.build), no second build
#   --jobs J      targets run at once (default 1; the machine is shared)
#   --only P      only the targets whose name matches the extended regular expression P
set -euo pipefail
cd "$(dirname "$0")/.."

minutes=60
engine=libfuzzer
jobs=1
only=""
debug=""
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes=$2; shift 2 ;;
    --engine) engine=$2; shift 2 ;;
    --debug) debug=1; shift ;;
    --jobs) jobs=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) echo "usage: $0 [--minutes N] [--engine libfuzzer|builtin] [--debug] [--jobs J] [--only PATTERN]" >&2; exit 2 ;;
  esac
done

corpus=Tests/FuzzingTests/Corpus
configuration=release
case "$engine" in
  libfuzzer)
    build=.build-fuzz
    runtime=$(ls "$(dirname "$(readlink -f "$(command -v swiftc)")")"/../lib/clang/*/lib/linux/libclang_rt.fuzzer_no_main-x86_64.a 2>/dev/null | head -n 1)
    [ -n "$runtime" ] || { echo "fuzz: this toolchain has no libFuzzer runtime; use --engine builtin" >&2; exit 1; }
    # Every Swift module instrumented for libFuzzer's coverage (edges, comparisons); libFuzzer's
    # runtime without its main, which keychain-fuzz's own main calls through LLVMFuzzerRunDriver.
    flags=(-c release --build-path "$build" --product keychain-fuzz
      -Xswiftc -Xfrontend -Xswiftc -sanitize=fuzzer
      -Xswiftc -Xfrontend -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,trace-cmp,pc-table
      -Xlinker --export-dynamic -Xlinker --whole-archive -Xlinker "$runtime" -Xlinker --no-whole-archive -Xlinker -lstdc++)
    ;;
  builtin)
    if [ -n "$debug" ]; then
      build=.build configuration=debug
      flags=(--product keychain-fuzz)
    else
      build=.build-fuzz-builtin
      flags=(-c release --build-path "$build" --product keychain-fuzz)
    fi
    ;;
  *) echo "fuzz: unknown engine $engine" >&2; exit 2 ;;
esac

echo "== build ($engine, $build)"
start=$SECONDS
swift build "${flags[@]}"
echo "built in $((SECONDS - start)) s"
fuzz="$build/$configuration/keychain-fuzz"

targets=$("$fuzz" list)
if [ -n "$only" ]; then targets=$(echo "$targets" | grep -E "$only" || true); fi
count=$(echo "$targets" | grep -c . || true)
[ "$count" -gt 0 ] || { echo "fuzz: no target matches" >&2; exit 2; }
per=$(( minutes * 60 * jobs / count ))
[ "$per" -ge 1 ] || per=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$fuzz" seeds "$work/seeds"
echo "== $count targets, $per s each, $jobs at a time, $minutes min in all"

# Runs one target for PER seconds, again after each crash for the time left; writes
# "TARGET EXECUTIONS SECONDS CRASHES" to $work/TARGET.result.
fuzz_target() {
  local target=$1 left=$per executions=0 crashes=0 begin=$SECONDS run=0 log ran
  mkdir -p "$corpus/$target" "$build/corpus/$target"
  while [ "$left" -gt 0 ]; do
    run=$((run + 1))
    log="$work/$target.$run.log"
    local before=$SECONDS status=0
    if [ "$engine" = libfuzzer ]; then
      "$fuzz" libfuzzer "$target" "$build/corpus/$target" "$corpus/$target" "$work/seeds/$target" \
        -max_total_time="$left" -timeout=5 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=65536 \
        -artifact_prefix="$corpus/$target/" -print_final_stats=1 >"$log" 2>&1 || status=$?
      ran=$(grep -aoE '^#[0-9]+' "$log" | tail -n 1 | tr -d '#')
      executions=$((executions + ${ran:-0}))
    else
      "$fuzz" run "$target" --seconds "$left" --seed "$((RANDOM * 32768 + RANDOM + run))" --timeout 5 --crashes "$corpus" >"$log" 2>"$log.err" || status=$?
      read -r _ ran _ found <"$log" || { ran=0; found=1; }
      executions=$((executions + ran))
      crashes=$((crashes + found))
    fi
    if [ "$status" -ne 0 ]; then
      crashes=$((crashes + 1))
      echo "fuzz: $target: a crash (log: see below), kept under $corpus/$target" >&2
      grep -aE 'Fatal error|ERROR: libFuzzer|Test unit written|SUMMARY' "$log" "$log.err" 2>/dev/null | head -n 5 >&2 || true
    fi
    left=$((per - (SECONDS - begin)))
    # A crash at once, again and again: stop rather than spin.
    if [ "$status" -ne 0 ] && [ $((SECONDS - before)) -lt 1 ] && [ "$run" -gt 20 ]; then break; fi
  done
  # A trap under the builtin engine left its input as crash-trap-PID: named by its hash like the rest.
  for file in "$corpus/$target"/crash-trap-*; do
    [ -e "$file" ] || continue
    mv "$file" "$corpus/$target/crash-$(sha256sum "$file" | cut -c1-16)"
  done
  echo "$target $executions $((SECONDS - begin)) $crashes" >"$work/$target.result"
}

running=0
for target in $targets; do
  fuzz_target "$target" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
done
wait

printf '\n%-28s %14s %10s %8s\n' target executions exec/s crashes
total=0 total_crashes=0
for target in $targets; do
  read -r name executions seconds crashes <"$work/$target.result"
  printf '%-28s %14d %10d %8d\n' "$name" "$executions" "$(( executions / (seconds > 0 ? seconds : 1) ))" "$crashes"
  total=$((total + executions)); total_crashes=$((total_crashes + crashes))
done
printf '%-28s %14d %10s %8d\n' "all ($minutes min, $engine, $configuration)" "$total" "" "$total_crashes"
[ "$total_crashes" -eq 0 ]
