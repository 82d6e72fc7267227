#!/bin/bash
# What a job's user controls never holds root's slurmstepd, run as user `nobody`: a sampler that
# floods its control channel, one that never reads it and never exits, a 20,000-deep `extends`
# chain, an alias bomb (and root's peak memory for the largest profiles accepted) and a profile on
# a FIFO (user_profiles=yes), one that tries to hand root a descriptor,
# one that names another process as itself, a mistyped plugstack.conf argument (DDP
# steps fail with it, plain steps run). Each step ends within its bound with a message that
# names the problem, no slurmstepd is left behind, and every node ends idle, not drained. The
# user's own profile reaches nodes that cannot see the file (srun sends it), and the sampler runs
# under the limits Slurm gives the task (SLURM_RLIMIT_*), not slurmstepd's.
source "$(dirname "$0")/testlib.sh"
source "$TESTS_DIR/lab-env.sh"
id nobody >/dev/null 2>&1 || { echo "SKIP: no user nobody"; exit 77; }
command -v cc >/dev/null || { echo "SKIP: no C compiler for the hostile sampler"; exit 77; }
BOUND=20  # seconds, from the issue: each reproduction ends within it

OUT=$WORK/out  # the user's working directory (the sampler writes its file there)
mkdir "$OUT"
chown nobody:"$(id -gn nobody)" "$OUT"
cc -shared -fPIC -o "$WORK/hostile.so" "$PROGRAMS/hostile_sampler.c"
chmod 755 "$WORK/hostile.so"
as_user() { (cd "$OUT" && "$RUN" setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"); }

restore() { "$TESTS_DIR/up.sh" >/dev/null 2>&1 || true; }
trap 'restore; rm -rf "$WORK"' EXIT
lab_args=${DDP_SPANK_ARGS:-}
DDP_SPANK_ARGS="$lab_args user_profiles=yes" "$TESTS_DIR/up.sh" >/dev/null 2>&1 || fail "lab restart"

# No slurmstepd of the job is left, and every node is idle (not drained, not draining).
settled() {
  local job=$1 what=$2 i states
  for ((i = 0; i < 50; i++)); do
    states=$("$RUN" sinfo -h -N -o '%N=%t' | sort -u | tr '\n' ' ')
    if ! pgrep -f "slurmstepd: \[$job\." >/dev/null && [[ $states == "n1=idle n2=idle " ]]; then
      return 0
    fi
    sleep 0.2
  done
  fail "$what: after the step: nodes $states; slurmstepd: $(pgrep -af "slurmstepd: \[$job\." || echo none);" \
    "$("$RUN" scontrol show node | grep -i reason || true)"
}

# step WHAT EXPECT(ok|fail) CMD...: runs CMD as nobody within the bound; prints its output.
step() {
  local what=$1 expect=$2 start out rc=0 took
  shift 2
  start=$(now)
  out=$(as_user timeout $((BOUND + 40)) "$@" 2>&1 </dev/null) || rc=$?
  took=$(elapsed "$start")
  echo "--- $what: exit $rc after $took s" >&2
  printf '%s\n' "$out" >&2
  awk -v t="$took" -v b="$BOUND" 'BEGIN { exit !(t < b) }' || fail "$what took $took s (bound $BOUND s)"
  [[ $expect == ok && $rc == 0 || $expect == fail && $rc != 0 ]] || fail "$what: exit $rc, expected $expect"
  printf '%s' "$out"
}
job_of() { sed -n 's/^job=\([0-9]*\)$/\1/p' <<<"$1" | head -1; }

# 1. The issue's reproduction: the sampler floods its channel to slurmstepd.
out=$(step "flooding sampler" ok srun -N1 -n1 --ddp --ddp-monitor=1 \
  --export=ALL,LD_PRELOAD="$WORK/hostile.so",HOSTILE_SAMPLER=flood bash -c 'echo job=$SLURM_JOB_ID; sleep 2')
expect_contains "$out" "the sampler wrote more than 65536 bytes" "flood named"
expect_contains "$out" "it was killed" "flooding sampler killed"
[ "$(grep -c "wrote more than" <<<"$out")" = 1 ] || fail "the flood was reported more than once"
settled "$(job_of "$out")" "flooding sampler"

# 2. A sampler that never reads its channel and never exits.
out=$(step "hung sampler" ok srun -N2 -n2 --ddp --ddp-monitor=1 \
  --export=ALL,LD_PRELOAD="$WORK/hostile.so",HOSTILE_SAMPLER=hang bash -c 'echo job=$SLURM_JOB_ID; sleep 1')
expect_contains "$out" "did not finish within 3 s after the step's tasks" "hung sampler named"
settled "$(job_of "$out")" "hung sampler"
# (a zombie has ended: whoever adopted it reaps it)
live=$(ps -u nobody -o pid=,stat=,comm= | awk '$3 == "ddp-monitor" && $2 !~ /Z/')
[ -z "$live" ] || fail "a sampler outlived its step: $live"

# 2b. The review's: a descriptor whose close blocks, handed to slurmstepd. The channel is two
# pipes, which carry none; the step ends as if the sampler had only hung.
out=$(step "descriptor-passing sampler" ok srun -N1 -n1 --ddp --ddp-monitor=1 \
  --export=ALL,LD_PRELOAD="$WORK/hostile.so",HOSTILE_SAMPLER=passfd bash -c 'echo job=$SLURM_JOB_ID; sleep 1')
[[ $out != *"went through"* ]] || fail "a descriptor reached slurmstepd: $out"
expect_contains "$out" "did not finish within 3 s after the step's tasks" "descriptor-passing sampler killed"
settled "$(job_of "$out")" "descriptor-passing sampler"

# 2c. A sampler that names another process of the user's as itself: root kills the sampler, and
# nothing else (who the helper is comes on a pipe the helper never holds).
victim=$(as_user bash -c 'sleep 300 >/dev/null 2>&1 </dev/null & echo $!')
out=$(step "sampler naming another process" ok srun -N1 -n1 --ddp --ddp-monitor=1 \
  --export=ALL,LD_PRELOAD="$WORK/hostile.so",HOSTILE_SAMPLER=swap,HOSTILE_VICTIM="$victim" \
  bash -c 'echo job=$SLURM_JOB_ID; sleep 1')
expect_contains "$out" "did not finish within 3 s after the step's tasks" "the lying sampler killed"
kill -0 "$victim" 2>/dev/null || fail "root killed process $victim, which the sampler named as itself"
kill "$victim"
settled "$(job_of "$out")" "sampler naming another process"

# 3. The sampler gets the task's limits: the submitting shell's soft NOFILE, not root's.
out=$(step "limits" ok bash -c 'ulimit -Sn 555; srun -N1 -n1 --ddp --ddp-monitor=1 bash -c "
  sleep 1.5; echo task \$(grep \"Max open files\" /proc/self/limits)
  for p in \$(pgrep -u nobody -x ddp-monitor); do echo sampler \$(grep \"Max open files\" /proc/\$p/limits); done"')
expect_contains "$out" "task Max open files 555 " "the task's limit"
expect_contains "$out" "sampler Max open files 555 " "the sampler's limit"

# 4. A 20,000-deep extends chain of the user's.
mkdir "$WORK/chain"
awk 'BEGIN { for (i = 0; i <= 20000; i++) { f = ARGV[1] "/p" i ".yaml"
  printf "name: p%d\n", i > f; if (i < 20000) printf "extends: p%d\n", i + 1 > f; close(f) } }' "$WORK/chain"
chmod -R a+rX "$WORK/chain"
out=$(step "20,000-deep extends" fail srun -N1 -n1 --ddp --ddp-profile="$WORK/chain/p0.yaml" true)
expect_contains "$out" "more than 16 levels of extends" "depth limit named"
expect_contains "$out" "$WORK/chain/p16.yaml" "the file named"
settled "$(as_user srun -N1 -n1 bash -c 'echo $SLURM_JOB_ID')" "after the chain"

# 4b. The issue's alias bomb: 300 aliased node entries of 32 aliases each of one 32 KiB value
# (1.2 GB in ddp-plan before anchors were refused): refused at its line, before anything is built
# (by srun, which reads the user's profile with the user's rights; slurmstepd refuses it alike).
mkdir "$WORK/bomb"
"$PYTHON" - "$WORK/bomb" <<'PY'
import sys
d = sys.argv[1]
env = ", ".join("V%d: *x" % i for i in range(32))
open(d + "/bomb.yaml", "w").write("name: bomb\ndescription: &x " + "v" * 32000 + "\nnodes: [&o {match: n1, env: {" +
                                  env + "}}" + ", *o" * 300 + "]\n")
# The largest accepted profiles: as many values as a profile may hold, and one value as long as
# a user's profile may be.
open(d + "/many.yaml", "w").write("name: many\nenv:\n" + "".join("  V%d: x\n" % i for i in range(2000)))
open(d + "/long.yaml", "w").write("name: long\ndescription: " + "d" * 90000 + "\n")
open(d + "/min.yaml", "w").write("name: min\n")
PY
chmod -R a+rX "$WORK/bomb"
out=$(step "alias bomb" fail srun -N1 -n1 --ddp --ddp-profile="$WORK/bomb/bomb.yaml" true)
expect_contains "$out" "bomb.yaml:2:14: uses a YAML anchor ('&NAME'); profiles take neither" "the anchor refused at its line"
# Root's peak memory (slurmstepd's VmHWM) for the largest accepted profiles grows by at most 16
# times their size plus 4 MiB over a minimal profile's.
stepd_hwm_kb() {
  local profile=$1 job pid hwm="" i
  rm -f "$OUT/job"
  as_user srun -N1 -n1 -w n1 --ddp --ddp-profile="$profile" bash -c "echo \$SLURM_JOB_ID >$OUT/job; sleep 1.5" &
  local srun_pid=$!
  for ((i = 0; i < 100; i++)); do
    [ -z "$hwm" ] || break
    sleep 0.1
    [ -s "$OUT/job" ] || continue
    job=$(cat "$OUT/job")
    pid=$(pgrep -f "slurmstepd: \[$job\.0\]" | head -1) || continue
    hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null) || true
  done
  wait "$srun_pid" || fail "the step with $profile failed"
  [ -n "$hwm" ] || fail "no slurmstepd found for the step with $profile"
  echo "$hwm"
}
base=$(stepd_hwm_kb "$WORK/bomb/min.yaml")
for big in many long; do
  hwm=$(stepd_hwm_kb "$WORK/bomb/$big.yaml")
  size_kb=$(( $(stat -c %s "$WORK/bomb/$big.yaml") / 1024 ))
  echo "slurmstepd VmHWM: $hwm kB with $big.yaml ($size_kb KiB), $base kB with a minimal profile" >&2
  (( hwm - base <= 16 * size_kb + 4096 )) || fail "$big.yaml: root's peak memory grew by $((hwm - base)) kB"
done

# 5. A profile that is a FIFO: refused at once, not waited on.
mkdir "$WORK/fifo" && mkfifo "$WORK/fifo/f.yaml" && chmod -R a+rwX "$WORK/fifo"
out=$(step "FIFO profile" fail srun -N1 -n1 --ddp --ddp-profile="$WORK/fifo/f.yaml" true)
expect_contains "$out" "is not a regular file" "FIFO refused"

# 6. A user's profile, from a directory that n2 cannot see: srun sends it with the step.
mkdir -p "$WORK/mine" "$WORK/empty"
printf 'name: base\nenv: {FROM_BASE: "b"}\n' >"$WORK/mine/base.yaml"
printf 'name: mine\nextends: base\nenv: {FROM_MINE: "m"}\n' >"$WORK/mine/mine.yaml"
chmod -R a+rX "$WORK/mine" "$WORK/empty"
"$RUN" --node n2 mount --bind "$WORK/empty" "$WORK/mine"
out=$(step "user profile" ok srun -N2 -n2 --ddp --ddp-profile="$WORK/mine/mine.yaml" bash -c \
  'echo "on $(hostname): $FROM_BASE$FROM_MINE $(ls '"$WORK/mine"' | wc -l) files ${SLURM_SPANK_DDP_USER_PROFILE:-gone}"')
"$RUN" --node n2 umount "$WORK/mine"
expect_contains "$out" "on n1: bm 2 files gone" "n1 planned from the user's profile"
expect_contains "$out" "on n2: bm 0 files gone" "n2 planned from the copy srun sent"

# 7. A mistyped plugstack.conf argument: DDP steps fail with it, everything else runs.
DDP_SPANK_ARGS="$lab_args bogus=1" "$TESTS_DIR/up.sh" >/dev/null 2>&1 || fail "lab restart (bogus=1)"
out=$(step "plain step, bad plugstack" ok srun -N2 -n2 bash -c 'echo job=$SLURM_JOB_ID')
settled "$(job_of "$out")" "plain step"
step "plain batch job, bad plugstack" ok sbatch --wait -N1 -o /dev/null --wrap true >/dev/null
out=$(step "DDP step, bad plugstack" fail srun -N1 -n1 --ddp true)
expect_contains "$out" "plugstack.conf argument 'bogus' is unknown" "srun names the argument"
expect_contains "$out" "tell the administrator" "srun says whose it is"
out=$(step "DDP job, bad plugstack" fail sbatch --ddp-nodes=2 --ddp-gpus=1 --wrap true)
expect_contains "$out" "plugstack.conf argument" "sbatch names the problem"
# A DDP option a job passes on reaches slurmstepd, which fails the step with the same words.
out=$(step "inherited DDP option, bad plugstack" fail env SLURM_SPANK__SLURM_SPANK_OPTION_spank_ddp_ddp="(null)" \
  srun -N1 -n1 true)
expect_contains "$out" "plugstack.conf argument 'bogus' is unknown" "slurmstepd names the argument"
grep -q "spank_ddp: plugstack.conf argument 'bogus' is unknown" "$LAB_LOG_DIR/slurmd-n1.log" ||
  fail "slurmd's log does not say it"
restore
echo "PASS: every reproduction ended within $BOUND s with its message; nodes idle"
