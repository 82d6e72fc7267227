#!/bin/bash
# Fuzzes every parser that sees user or admin input (tests/fuzz): builds the libFuzzer targets with
# clang, AddressSanitizer and UBSan in build-fuzz/, runs each for a set time from its seed corpus,
# and prints executions, exec/s, crashes and the coverage gained. Exits non-zero on any crash, leak,
# time-out or sanitizer report; the input that caused it is kept in build-fuzz/artifacts/TARGET/.
#
#   bench/fuzz.sh [SECONDS] [TARGET...]     (default 30 s each, every target)
#
# Targets: contract cpu_list hostlist index_list plugstack profile user_option. The corpus each
# run grows is kept in build-fuzz/corpus/TARGET and reused by the next run; the seeds in
# tests/fuzz/corpus are never written.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD="$ROOT/build-fuzz"
SECONDS_EACH=${1:-30}
[[ $SECONDS_EACH =~ ^[0-9]+$ ]] && ((SECONDS_EACH >= 1)) ||
  { echo "usage: bench/fuzz.sh [SECONDS] [TARGET...]  (SECONDS: a whole number >= 1)" >&2; exit 2; }
shift || true
ALL=(contract cpu_list hostlist index_list plugstack profile user_option)
TARGETS=("${@:-${ALL[@]}}")
for t in "${TARGETS[@]}"; do
  [[ " ${ALL[*]} " == *" $t "* ]] || { echo "unknown target '$t'; targets: ${ALL[*]}" >&2; exit 2; }
done

# clang with libFuzzer's runtime (Debian 12: clang 14 and libclang-rt-14-dev).
have_libfuzzer() {
  command -v clang++ >/dev/null || return 1
  local dir
  dir=$(mktemp -d)
  printf 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }\n' >"$dir/t.cpp"
  clang++ -fsanitize=fuzzer,address,undefined "$dir/t.cpp" -o "$dir/t" 2>/dev/null
  local rc=$?
  rm -rf "$dir"
  return $rc
}
if ! have_libfuzzer; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing clang and libFuzzer (apt-get install clang libclang-rt-dev)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q clang libclang-rt-dev >&2
  fi
  have_libfuzzer || { echo "clang++ with -fsanitize=fuzzer is needed: apt-get install clang libclang-rt-dev" >&2; exit 2; }
fi

CC=clang CXX=clang++ cmake -S "$ROOT/tests/fuzz" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" -j"$(nproc)" >"$BUILD/build.log" 2>&1 || { cat "$BUILD/build.log" >&2; exit 2; }

# LeakSanitizer and UBSan reports are fatal; a unit slower than 30 s or over 2 GiB is a finding too
# (30 s: libslurm grows a multi-bracket list such as n[0-65535]x[1] with realloc, which takes 70 ms
# natively but seconds under ASan, whose realloc always copies).
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
failed=0
rows=()
for t in "${TARGETS[@]}"; do
  corpus="$BUILD/corpus/$t"
  artifacts="$BUILD/artifacts/$t"
  log="$BUILD/logs/$t.log"
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  echo "fuzzing $t for ${SECONDS_EACH}s ..." >&2
  before=$(find "$artifacts" -type f ! -name 'slow-unit-*' | wc -l)
  rc=0
  "$BUILD/fuzz_$t" -max_total_time="$SECONDS_EACH" -timeout=30 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" "$ROOT/tests/fuzz/corpus/$t" \
    >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov0=$(grep -m1 -oE 'INITED cov: [0-9]+ ft: [0-9]+' "$log" | awk '{print $3, $5}')
  cov1=$(grep -oE '(DONE|pulse|NEW|REDUCE) +cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 | awk '{print $3, $5}')
  read -r c0 f0 <<<"${cov0:-0 0}"
  read -r c1 f1 <<<"${cov1:-$c0 $f0}"
  crashes=$(($(find "$artifacts" -type f ! -name 'slow-unit-*' | wc -l) - before))
  if ((rc != 0)); then
    ((crashes == 0)) && crashes=1
    failed=1
    echo "fuzz_$t failed (exit $rc); see $log, input kept in $artifacts/" >&2
    grep -m3 -E 'ERROR|SUMMARY|FUZZ_CHECK' "$log" >&2 || true
  fi
  rows+=("$(printf '%-12s %12s %8s %8s %9s %9s' "$t" "${execs:-0}" "${speed:-0}" "$crashes" \
    "$c0->$c1" "+$((f1 - f0))")")
done

printf '%-12s %12s %8s %8s %9s %9s\n' TARGET EXECUTIONS EXEC/S CRASHES COVERAGE FEATURES
printf '%s\n' "${rows[@]}"
exit $failed
