#!/bin/bash
# DDP_STORE_RELAY=1 in a real job (2 nodes of 2 ranks): each node's LOCAL_RANK 0 relays its node's
# store requests to rank 0 over a Unix socket of the node's network namespace. Two steps one after
# the other meet and reduce through their leaders (the second leader takes the name the first
# one's relay left). A program of the user's own that holds that name on n2 fails the step, and
# the leader's words name the relay and the fix; once it is gone, the same step runs.
source "$(dirname "$0")/testlib.sh"
worker=${DDP_TEST_WORKER_BIN:-}
[ -x "$worker" ] || { echo "SKIP: ddp_test_worker not built"; exit 77; }

port=29731
name="slurm-ddp/store-relay/n1:$port/node1"  # runtime/src/store_relay_wire.cpp: socket_name
cat >"$WORK/job.sh" <<JOB
#!/bin/bash
export DDP_STORE_RELAY=1 DDP_RENDEZVOUS_TIMEOUT=15
srun --ddp-port=$port $worker meet; echo "rc first=\$?"
srun --ddp-port=$port $worker meet; echo "rc second=\$?"
# The name of n2's relay, held by another program of this user while the step starts.
srun --overlap -N1 -n1 -w n2 --ddp=off $PYTHON -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind("\0$name")
s.listen()
print("squatting", flush=True)
time.sleep(60)' >"$WORK/squatter.out" 2>&1 & squatter=\$!
for _ in \$(seq 100); do grep -q squatting "$WORK/squatter.out" 2>/dev/null && break; sleep 0.1; done
grep -q squatting "$WORK/squatter.out" || echo "the squatter did not start: \$(cat "$WORK/squatter.out")"
srun --ddp-port=$port $worker meet; echo "rc taken=\$?"
kill \$squatter; wait \$squatter 2>/dev/null
srun --ddp-port=$port $worker meet; echo "rc freed=\$?"
JOB
chmod +x "$WORK/job.sh"
start=$(now)
timeout 200 "$RUN" sbatch --wait --ddp-nodes=2 --ddp-gpus=2 -o "$WORK/out" "$WORK/job.sh" >/dev/null ||
  fail "the job failed: $(cat "$WORK/out")"
out=$(cat "$WORK/out")
echo "$out"
for step in first second freed; do
  expect_contains "$out" "rc $step=0" "step $step through the relay"
done
[ "$(grep -c 'met 4 ranks, mean rank 1.50' <<<"$out")" = 12 ] ||
  fail "expected every rank of the first, second and last steps to meet: $out"
grep -q 'the squatter did not start' <<<"$out" && fail "n2's relay name could not be taken first: $out"
grep -q '^rc taken=0' <<<"$out" && fail "the step whose relay name was taken succeeded: $out"
expect_contains "$out" "this node's leader could not open the store relay (DDP_STORE_RELAY) under the name @$name: Address already in use" \
  "the leader names the relay"
expect_contains "$out" "choose another port with --ddp-port or MASTER_PORT, or set DDP_STORE_RELAY=0" "the fix"
echo "PASS: two steps through the node leaders' relays, a taken name named with its fix, in $(elapsed "$start") s"
