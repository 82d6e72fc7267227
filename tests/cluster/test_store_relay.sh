#!/bin/bash
# DDP_STORE_RELAY=1 in a real job (2 nodes of 2 ranks): each node's LOCAL_RANK 0 relays its node's
# store requests to rank 0 over a Unix socket of the node's network namespace. Two steps one after
# the other meet and reduce through their leaders. Another user holds, on n2, the relay name a step
# would have without the step's secret (the name libddp derives from MASTER_ADDR:MASTER_PORT): the
# plugin's steps, whose names come from their secrets, still relay; a step without the secret
# (as a program that drops DDP_STORE_KEY would be) runs too, its n2 ranks reaching rank 0
# directly, and its leader says so once.
source "$(dirname "$0")/testlib.sh"
worker=${DDP_TEST_WORKER_BIN:-}
[ -x "$worker" ] || { echo "SKIP: ddp_test_worker not built"; exit 77; }
id "$ATTACKER" >/dev/null 2>&1 || { echo "SKIP: no user $ATTACKER"; exit 77; }

port=29731
name="slurm-ddp/store-relay/n1:$port/node1"  # runtime/src/store_relay_wire.cpp: socket_name
"$RUN" --node n2 setpriv --reuid="$ATTACKER" --regid="$(id -g "$ATTACKER")" --clear-groups $PYTHON -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind("\0'"$name"'")
s.listen()
print("squatting", flush=True)
time.sleep(120)' >"$WORK/squatter.out" 2>&1 &
squatter=$!
trap 'kill $squatter 2>/dev/null || true; wait $squatter 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do grep -q squatting "$WORK/squatter.out" 2>/dev/null && break; sleep 0.1; done
grep -q squatting "$WORK/squatter.out" || fail "the other user could not take the name: $(cat "$WORK/squatter.out")"

cat >"$WORK/job.sh" <<JOB
#!/bin/bash
export DDP_STORE_RELAY=1 DDP_RENDEZVOUS_TIMEOUT=15
srun --ddp-port=$port $worker meet; echo "rc first=\$?"
srun --ddp-port=$port $worker meet; echo "rc second=\$?"
echo "-- without the secret"
srun --ddp-port=$port env -u DDP_STORE_KEY $worker meet; echo "rc unkeyed=\$?"
JOB
chmod +x "$WORK/job.sh"
start=$(now)
timeout 200 "$RUN" sbatch --wait --ddp-nodes=2 --ddp-gpus=2 -o "$WORK/out" "$WORK/job.sh" >/dev/null ||
  fail "the job failed: $(cat "$WORK/out")"
out=$(cat "$WORK/out")
echo "$out"
for step in first second unkeyed; do
  expect_contains "$out" "rc $step=0" "step $step"
done
[ "$(grep -c 'met 4 ranks, mean rank 1.50' <<<"$out")" = 12 ] ||
  fail "expected every rank of the three steps to meet: $out"
warning="another program holds this node's store relay name (@$name); this node's ranks reach rank 0's store directly"
keyed=${out%%-- without the secret*}
[[ $keyed != *"another program holds"* ]] || fail "a step with its secret met the other user's name: $keyed"
[ "$(grep -cF "$warning" <<<"$out")" = 1 ] || fail "expected the warning once, from n2's leader: $out"
echo "PASS: steps relay under names nobody can take first; a taken name costs one warning, in $(elapsed "$start") s"
