#!/bin/bash
# A node vanishes from the network mid-training (n2's link goes down: no resets, no goodbyes, as
# when a node loses power). The ranks on n1 find n2's ranks silent and end within the peer
# time-out plus a few seconds, naming both ranks of n2, although their collectives hang (the
# collective time-out is left at its 300 s default). The link comes back before Slurm's own
# SlurmdTimeout, so the node is not marked down and the lab stays usable. libddp's own model:
# spank_ddp's failure watch is off (test_python_node_lost.sh has the watch).
source "$(dirname "$0")/testlib.sh"
need_trainer
TRAINING_OPTS=(--ddp-watch=off)
peer_timeout=8
netns=ddplab-n2
link_up() { ip -n "$netns" link set eth0 up; }
AT_EXIT='link_up 2>/dev/null'
start_training 100 DDP_PEER_TIMEOUT=$peer_timeout

ip -n "$netns" link set eth0 down
start=$(now)
limit=$((peer_timeout + 3 + 5 + 10))  # silence, the census of who else is silent, the 5 s grace, slack
# A rank ends either from its watch or, when another rank on n1 ended first, from its failed
# collective; both say "[rank R/4] error: ..." and name the lost ranks.
said() { echo "^\[rank $1/4\] error: "; }
for r in 0 1; do
  wait_for_line "$WORK/out" "$(said $r)" "$limit" ||
    fail "rank $r did not end within $limit s of the link going down: $(cat "$WORK/out")"
done
took=$(elapsed "$start")
link_up
# Slurm's word on the ranks' exit comes after theirs, through slurmstepd and srun: a moment later.
wait_for_line "$WORK/out" "srun: error: n1: task" 10 || true
out=$(cat "$WORK/out")
echo "$out"
for r in 0 1; do
  line=$(grep "$(said $r)" <<<"$out")
  expect_contains "$line" "rank 2 of 4 (on n2) and rank 3 of 4 (on n2) stopped responding: no heartbeat for $peer_timeout s" \
    "rank $r names both ranks of n2"
done
expect_contains "$out" "ending this process" "the watch ends a rank whose collective hangs"
expect_contains "$out" "srun: error: n1: task" "Slurm sees the ranks on n1 end"
# The ranks on n2 end too: they lost rank 0's store (no answer within the peer time-out).
for r in 2 3; do
  pid=$(cat "$WORK/pid.$r")
  for ((i = 0; i < 100 && $(kill -0 "$pid" 2>/dev/null && echo 1 || echo 0); i++)); do sleep 0.2; done
  kill -0 "$pid" 2>/dev/null && fail "rank $r on n2 still runs 20 s after the link came back"
done
# Slurm 22.05 then ends the job by itself. 24.11's srun keeps waiting for the exit of n2's tasks,
# reported while the link was down and never sent again: the job runs on with no task left, as
# on a real cluster until the admin or the time limit ends it. Cancelled then, it must go.
if ! wait_job_gone "$JOBID" 20; then
  "$RUN" scancel "$JOBID"
  wait_job_gone "$JOBID" 30 || fail "the job did not end after the link came back (nor when cancelled)"
fi
"$TESTS_DIR/up.sh" >/dev/null 2>&1 || fail "the lab did not recover"
echo "PASS: the ranks on n1 ended ${took} s after n2 went off the network (peer time-out ${peer_timeout} s)"
