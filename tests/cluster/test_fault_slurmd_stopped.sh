#!/bin/bash
# n2's slurmd is stopped while a 2-node training runs, and started again: the running step does
# not depend on it (its tasks belong to slurmstepd, and the plugin holds no state in slurmd), so
# the training finishes. While slurmd is down, a new --ddp step that needs n2 fails with Slurm's
# own message instead of hanging; once slurmd is back the node runs --ddp steps again.
source "$(dirname "$0")/testlib.sh"
need_trainer
# shellcheck source=lab-env.sh
source "$TESTS_DIR/lab-env.sh"
AT_EXIT='"$TESTS_DIR/up.sh" >/dev/null 2>&1'
start_training 6

lab_stop_daemon slurmd-n2  # SIGTERM, as `systemctl stop slurmd`
start=$(now)
new=$(run_expect_failure "a step on n2 without slurmd" \
  "$RUN" srun --ddp -N2 -n2 -w 'n[1-2]' "$PROGRAMS/print_contract.sh")
took=$(elapsed "$start")
echo "$new"
expect_contains "$new" "n2" "the failed launch names the node"
"$TESTS_DIR/up.sh" >/dev/null 2>&1 || fail "slurmd on n2 did not come back"

wait_job_gone "$JOBID" 120 || fail "the training did not end: $(cat "$WORK/out")"
out=$(cat "$WORK/out")
echo "$out"
expect_contains "$out" "Epoch 6/6 completed" "the training went on without n2's slurmd"
expect_contains "$out" "Training completed successfully." "summary"
again=$("$RUN" srun --ddp -N2 -n2 -w 'n[1-2]' "$PROGRAMS/print_contract.sh" 2>&1) ||
  fail "n2 does not run steps again: $again"
expect_contains "$again" "host=n2" "a step runs on n2 again"
echo "PASS: training finished across a slurmd stop; the new step failed in ${took} s; n2 is back"
