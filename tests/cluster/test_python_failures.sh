#!/bin/bash
# A Python DDP program (Debian's python3-torch, Gloo) under srun --ddp, run as user nobody, raises
# on one rank: the failure watch ends the step within its bound and says once which rank failed
# first, with the exception and where from torch's error file (TORCHELASTIC_ERROR_FILE), in srun,
# sbatch and salloc. The other faults (killed, stopped, hung, an early or a slow rank) are
# test_python_faults.sh: the watch's logic, not torch's.
source "$(dirname "$0")/python_steps.sh"

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

processes_gone nobody 'python3|dstate|ddp-watch' 10 || fail "processes of the steps outlived them: $LIVE"
echo "PASS: ${TIMES[*]} (fault to srun's end; --ddp-watch=$WATCH), in srun, sbatch and salloc"
