#!/bin/bash
# One rank killed mid-training (SIGKILL, as the OOM killer does): every other rank ends non-zero
# within the collective time-out plus a few seconds, each saying which rank was lost and where:
# from its failed collective, or from its heartbeat watch when its own collective still waits on
# a rank that ended first (both print "[rank R/4] error: ..."). This is libddp's own failure model,
# as a C++ program has it under torchrun or plain srun: spank_ddp's failure watch is off here
# (test_fault_cpp_watched.sh has the program under it).
source "$(dirname "$0")/testlib.sh"
need_trainer
timeout_s=30
TRAINING_OPTS=(--ddp-watch=off)
start_training 100 DDP_TIMEOUT=$timeout_s

kill -KILL "$(cat "$WORK/pid.3")"  # rank 3, on n2
start=$(now)
for r in 0 1 2; do
  wait_for_line "$WORK/out" "^\[rank $r/4\] error: " $((timeout_s + 10)) ||
    fail "rank $r did not end within $((timeout_s + 10)) s of the kill: $(cat "$WORK/out")"
done
took=$(elapsed "$start")
wait_job_gone "$JOBID" 30 || fail "the job did not end: $(cat "$WORK/out")"
out=$(cat "$WORK/out")
echo "$out"
for r in 0 1 2; do
  line=$(grep "^\[rank $r/4\] error: " <<<"$out")
  expect_contains "$line" "rank 3 of 4 (on n2) stopped responding" "rank $r names the lost rank"
done
expect_contains "$out" "srun: error: n2: task 3: Killed" "Slurm reports the kill"
grep -q 'Training completed' <<<"$out" && fail "training completed without rank 3"
state=$("$RUN" scontrol show job "$JOBID" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
[ "$state" = FAILED ] || fail "job state $state, expected FAILED"
echo "PASS: ranks 0-2 ended ${took} s after rank 3 was killed (time-out ${timeout_s} s), naming it"
