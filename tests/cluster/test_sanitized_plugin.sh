#!/bin/bash
# The plugin built with AddressSanitizer and UndefinedBehaviorSanitizer (spank_ddp_asan.so), loaded
# by the lab's real slurmd and slurmstepd and by srun, sbatch and salloc, with libasan preloaded
# into each of them: the contract, pinning and bad-input tests run through it, and the sanitizers
# must report nothing from the plugin (memory errors, undefined behaviour, leaks). Not the profile
# and contract-rule tests: their parsers have fuzz targets of their own (tests/fuzz: fuzz_profile,
# fuzz_user_option, fuzz_contract), and under the sanitizers they took 126 of this test's 216 s on
# sid, the last phase of CI.
# Leaks that Slurm's own code makes at exit are counted and shown, not failed.
source "$(dirname "$0")/testlib.sh"
plugin=${DDP_TEST_SANITIZED_PLUGIN:-}
[ -f "$plugin" ] || { echo "SKIP: spank_ddp_asan.so not built (DDP_BUILD_SANITIZED_PLUGIN: off by default where libasan takes no allocator lock around fork)"; exit 77; }
asan=$(ldd "$plugin" | awk '$1 ~ /^libasan\.so/ { print $3 }')
cxx=$(ldd "$plugin" | awk '$1 ~ /^libstdc\+\+\.so/ { print $3 }')
[ -f "$asan" ] && [ -f "$cxx" ] || fail "no libasan or libstdc++ for $plugin"
# Only where libasan locks its allocator around fork: elsewhere slurmstepd's forked tasks can
# deadlock in it and drain the node (libasan_locks_fork.sh says why).
rc=0
"$TESTS_DIR/libasan_locks_fork.sh" "$asan" || rc=$?
case $rc in
  0) ;;
  1) echo "SKIP: $asan takes no allocator lock around fork, so slurmstepd's forked tasks can deadlock in it; the sanitized plugin runs where libasan has one (GCC 16)"
     exit 77 ;;
  *) fail "cannot tell whether $asan locks its allocator around fork" ;;
esac
# libstdc++ too: Slurm's programs are C, and ASan resolves the real __cxa_throw when it starts,
# so without libstdc++ loaded by then the plugin's first exception is a "CHECK failed" abort.
preload=$asan:$cxx

logs=$WORK/sanitizer
mkdir -p "$logs"
chmod 777 "$logs"
options="log_path=$logs/asan:detect_leaks=1:halt_on_error=1:handle_abort=1:allocator_may_return_null=1"
ubsan="log_path=$logs/ubsan:print_stacktrace=1"
export LAB_DAEMON_ENV="LD_PRELOAD=$preload ASAN_OPTIONS=$options UBSAN_OPTIONS=$ubsan"
# The clients' environment becomes the tasks' (srun passes it on), and coreutils leak at exit by
# design (LeakSanitizer would fail `hostname`): the clients are checked for memory errors and
# undefined behaviour, slurmd and slurmstepd for leaks as well.
export LAB_CLIENT_ENV="LD_PRELOAD=$preload ASAN_OPTIONS=${options/detect_leaks=1/detect_leaks=0} UBSAN_OPTIONS=$ubsan"
normal_plugin=$DDP_SPANK_PLUGIN
export DDP_SPANK_PLUGIN=$plugin
restore() {
  LAB_DAEMON_ENV='' LAB_CLIENT_ENV='' DDP_SPANK_PLUGIN=$normal_plugin "$TESTS_DIR/up.sh" >/dev/null 2>&1 ||
    echo "warning: could not restore the lab's normal plugin" >&2
  rm -rf "$WORK"
}
trap restore EXIT
"$TESTS_DIR/up.sh" >/dev/null 2>&1 || fail "the lab did not come up with $plugin"
slurmd_pid=$(cat /run/ddp-lab/pids/slurmd-n1.pid)
grep -q libasan "/proc/$slurmd_pid/maps" || fail "slurmd on n1 does not run with libasan"

for t in sbatch_contract pinning bad_input; do
  echo "== $t, under the sanitizers"
  start=$(now)
  "$TESTS_DIR/test_$t.sh" >"$WORK/$t.out" 2>&1 ||
    fail "$t failed with the sanitized plugin: $(cat "$WORK/$t.out" "$logs"/* 2>/dev/null)"
  echo "$(tail -n 1 "$WORK/$t.out") [$(elapsed "$start") s]"
done
# slurmd and slurmstepd write their reports when they exit: stop them (up.sh then restores).
start=$(now)
LAB_DAEMON_ENV='' LAB_CLIENT_ENV='' DDP_SPANK_PLUGIN=$normal_plugin "$TESTS_DIR/up.sh" >/dev/null 2>&1 ||
  fail "the lab did not come back with the normal plugin"
echo "the lab back with the normal plugin, the daemons' reports written [$(elapsed "$start") s]"

start=$(now)
reports=$(find "$logs" -type f | sort)
errors=$(grep -l -e 'ERROR: AddressSanitizer' -e 'runtime error:' $reports 2>/dev/null || true)
[ -z "$errors" ] || fail "sanitizer errors: $(cat $errors)"
# LeakSanitizer must really have run where the plugin lives: slurmstepd's own leaks at exit show it.
grep -l 'ERROR: LeakSanitizer' $reports 2>/dev/null | xargs -r grep -l -q 'slurmstepd' ||
  fail "no leak check ran in slurmstepd (reports: $reports)"
# A leak record is the plugin's when any frame of its stack is the plugin's: its library, its
# namespace, or its SPANK entry points (symbolised frames name the function, not the library).
plugin_leaks=0
slurm_leaks=0
for f in $(grep -l 'ERROR: LeakSanitizer' $reports 2>/dev/null || true); do
  mine=$(awk -v so="${plugin##*/}" '/^(Direct|Indirect) leak/ { b = 1; hit = 0 }
    b && (index($0, so) || /ddp::|slurm_spank_|spank_ddp/) { hit = 1 }
    b && /^$/ { if (hit) n++; b = 0 } END { if (b && hit) n++; print n + 0 }' "$f")
  all=$(grep -c -E '^(Direct|Indirect) leak' "$f")
  plugin_leaks=$((plugin_leaks + mine))
  slurm_leaks=$((slurm_leaks + all - mine))
  [ "$mine" = 0 ] || { echo "---- $f"; cat "$f"; }
done
[ "$plugin_leaks" = 0 ] || fail "$plugin_leaks leak(s) from the plugin"
echo "PASS: no sanitizer error and no leak from the plugin in srun/sbatch/salloc/slurmd/slurmstepd" \
  "($(wc -w <<<"$reports") report file(s), $(du -sh "$logs" | cut -f1); $slurm_leaks leak record(s) of Slurm's own code at exit; read in $(elapsed "$start") s)"
