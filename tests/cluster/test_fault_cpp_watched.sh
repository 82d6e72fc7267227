#!/bin/bash
# A C++ program on libddp (ddp-cifar100) under spank_ddp's failure watch, as it runs by default:
# one rank killed mid-training. The watch ends every other rank within seconds and its one verdict
# names the killed rank; libddp, seeing DDP_WATCH, leaves the verdict to it (no heartbeat census
# of its own, no second "stopped responding" verdict), and each rank's failed collective points
# at the watch's line.
source "$(dirname "$0")/testlib.sh"
need_trainer
start_training 100

kill -KILL "$(cat "$WORK/pid.3")"  # rank 3, on n2
start=$(now)
wait_job_gone "$JOBID" 30 || fail "the job did not end: $(cat "$WORK/out")"
took=$(elapsed "$start")
out=$(cat "$WORK/out")
echo "$out" | grep -v '^Epoch\|^Validation\|^\[rank 0/4\] [A-Z]' || true
[ "$(grep -c '^spank_ddp: step [0-9.]* failed: ' <<<"$out")" = 1 ] || fail "expected one verdict: $out"
expect_contains "$out" "failed: rank 3 on n2 was killed by signal 9 (SIGKILL), the first of 4 ranks to fail" "the killed rank named"
grep -q "stopped responding" <<<"$out" && fail "libddp said a verdict of its own too: $out"
grep -q 'Training completed' <<<"$out" && fail "training completed without rank 3"
awk -v t="$took" 'BEGIN { exit !(t <= 12) }' || fail "the job took $took s to end after the kill"
echo "PASS: the job ended ${took} s after rank 3 was killed, with one verdict naming it"
