#!/bin/bash
# A Python DDP program (Debian's python3-torch, Gloo) under srun --ddp, run as user nobody, with
# one fault on one rank: the failure watch ends the step within its bound and says once which
# rank failed first, where and how; a rank that ends well early, or one that only takes long,
# ends nothing. Each case times the fault (the faulty rank's own timestamp) to srun's end.
source "$(dirname "$0")/testlib.sh"
"$PYTHON" -c "import torch.distributed.elastic.multiprocessing.errors" 2>/dev/null ||
  { echo "SKIP: python3-torch missing"; exit 77; }
id nobody >/dev/null 2>&1 || { echo "SKIP: no user nobody"; exit 77; }
command -v cc >/dev/null || { echo "SKIP: no C compiler for the D-state program"; exit 77; }

OUT=$WORK/out
mkdir -p "$OUT"
cc -o "$OUT/dstate" "$PROGRAMS/dstate_hang.c"
chown -R nobody:"$(id -gn nobody)" "$OUT"
as_user() { (cd "$OUT" && "$RUN" setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"); }
WATCH=10
TIMES=()

# case NAME FAULT RANK [SECONDS]: the step of 2 nodes x 2 ranks with that fault; TEXT, RC, TOOK.
case_() {
  local name=$1 fault=$2 rank=$3 seconds=${4:-20} end at
  echo "--- $name"
  set +e
  TEXT=$(as_user timeout 120 srun --ddp -N2 --ntasks-per-node=2 --ddp-watch=$WATCH \
    --export=ALL,DDP_DSTATE_PROGRAM="$OUT/dstate" "$PYTHON" "$PROGRAMS/python_faults.py" \
    "$fault" "$rank" "$seconds" 2>&1)
  RC=$?
  set -e
  end=$(now)
  echo "$TEXT" | grep -v '^  \|^Traceback\|^RuntimeError\|^    ' || true
  at=$(sed -n 's/^fault .* at \([0-9.]*\)$/\1/p' <<<"$TEXT" | head -n 1)
  [ -n "$at" ] || fail "$name: the fault never happened (rc $RC)"
  TOOK=$(awk -v a="$at" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  echo "$name: srun ended ${TOOK} s after the fault, exit $RC"
}
verdicts() { grep -c "^spank_ddp: step [0-9.]* failed: " <<<"$TEXT" || true; }
within() {  # within LIMIT WHAT
  awk -v t="$TOOK" -v l="$1" 'BEGIN { exit !(t <= l) }' || fail "$2: took $TOOK s, more than $1 s"
  TIMES+=("$2 ${TOOK}s")
}

case_ exception raise 3
[ "$RC" != 0 ] || fail "exception: the step succeeded"
within 10 "exception"
[ "$(verdicts)" = 1 ] || fail "exception: expected one verdict: $TEXT"
expect_contains "$TEXT" "failed: rank 3 on n2 exited with code 1, the first of 4 ranks to fail" "exception: first failure named"
expect_contains "$TEXT" "root cause: ValueError: injected failure on rank 3 (File \"$PROGRAMS/python_faults.py\", line" "exception: its exception and where"
expect_contains "$TEXT" "also failed after it: " "exception: the others counted"
[ "$(grep -c '^spank_ddp: root cause' <<<"$TEXT")" = 1 ] || fail "exception: the root cause twice"

# The same from a batch job: the verdict is in the job's output, once.
cat >"$OUT/job.sh" <<JOB
#!/bin/bash
srun --ddp-watch=$WATCH "$PYTHON" "$PROGRAMS/python_faults.py" raise 1
JOB
chmod +x "$OUT/job.sh"
as_user sbatch --wait --ddp-nodes=2 --ddp-gpus=2 -o "$OUT/job.out" "$OUT/job.sh" >/dev/null 2>&1 &&
  fail "batch: the job succeeded"
TEXT=$(cat "$OUT/job.out")
[ "$(verdicts)" = 1 ] || fail "batch: expected one verdict: $TEXT"
expect_contains "$TEXT" "failed: rank 1 on n1 exited with code 1, the first of 4 ranks to fail" "batch: named"
expect_contains "$TEXT" "root cause: ValueError: injected failure on rank 1" "batch: its exception"
# And from salloc, without the cli_filter's shape options.
TEXT=$(as_user timeout 120 salloc -N2 --ntasks-per-node=2 srun --ddp --ddp-watch=$WATCH \
  "$PYTHON" "$PROGRAMS/python_faults.py" raise 2 2>&1) && fail "salloc: the step succeeded"
[ "$(verdicts)" = 1 ] || fail "salloc: expected one verdict: $TEXT"
expect_contains "$TEXT" "failed: rank 2 on n2 exited with code 1, the first of 4 ranks to fail" "salloc: named"

case_ killed sigkill 2
[ "$RC" != 0 ] || fail "killed: the step succeeded"
within 10 "SIGKILL"
[ "$(verdicts)" = 1 ] || fail "killed: expected one verdict: $TEXT"
expect_contains "$TEXT" "failed: rank 2 on n2 was killed by signal 9 (SIGKILL), the first of 4 ranks" "killed: named"

case_ early_exit exit0 3 $((WATCH + 4))
[ "$RC" = 0 ] || fail "early exit: a rank that ended well ended the step (exit $RC): $TEXT"
[ "$(verdicts)" = 0 ] || fail "early exit: a verdict: $TEXT"
[ "$(grep -c '^done rank' <<<"$TEXT")" = 4 ] || fail "early exit: not every rank finished: $TEXT"

case_ slow_checkpoint slow 0 $((WATCH + 8))
[ "$RC" = 0 ] || fail "slow rank: ended (exit $RC): $TEXT"
[ "$(verdicts)" = 0 ] || fail "slow rank: a verdict: $TEXT"
[ "$(grep -c '^done rank' <<<"$TEXT")" = 4 ] || fail "slow rank: not every rank finished: $TEXT"

case_ stopped sigstop 1
[ "$RC" != 0 ] || fail "stopped: the step succeeded"
within $((WATCH + 5)) "SIGSTOP"
[ "$(verdicts)" = 1 ] || fail "stopped: expected one verdict: $TEXT"
expect_contains "$TEXT" "failed: rank 1 on n1 has been stopped (state T: SIGSTOP or SIGTSTP) for $WATCH s; ending the step (failure watch time-out $WATCH s" "stopped: named"

case_ hung dstate 3
[ "$RC" != 0 ] || fail "hung: the step succeeded"
within $((WATCH + 5)) "D state"
[ "$(verdicts)" = 1 ] || fail "hung: expected one verdict: $TEXT"
expect_contains "$TEXT" "failed: rank 3 on n2 has been in uninterruptible sleep (state D) for $WATCH s" "hung: named"

# Nothing of the steps lives on (the watches leave within a second of their node's last task).
processes_gone nobody 'python3|dstate|ddp-watch' 10 || fail "processes of the steps outlived them: $LIVE"
echo "PASS: ${TIMES[*]} (fault to srun's end; --ddp-watch=$WATCH)"
