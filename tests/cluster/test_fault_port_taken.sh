#!/bin/bash
# MASTER_PORT already taken on the head node by another program (a listener that never answers):
# rank 0 ends at once saying the port is in use and how to choose another. Under the failure
# watch (the default) that ends the step at once, its verdict's root cause rank 0's words; without
# it (libddp's own model), the other ranks, which reached that program instead of the
# rendezvous, end within the rendezvous time-out saying so.
source "$(dirname "$0")/testlib.sh"
need_trainer
port=19999
rdv_timeout=10
"$RUN" --node n1 "$PYTHON" -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(64)
print("listening", flush=True)
held = []
while True:
    held.append(s.accept()[0])
' "$port" >"$WORK/listener.out" 2>&1 &
listener=$!
trap 'kill "$listener" 2>/dev/null; rm -rf "$WORK"' EXIT
wait_for_line "$WORK/listener.out" listening 30 || fail "listener did not start: $(cat "$WORK/listener.out")"

trainer_job "$WORK/job.sh" DDP_RENDEZVOUS_TIMEOUT=$rdv_timeout
run_job() {  # run_job [SBATCH OPTION...]: OUT, TOOK
  local start
  start=$(now)
  "$RUN" sbatch --wait --no-requeue --ddp-nodes=2 --ddp-gpus=2 --ddp-port=$port -o "$WORK/out" "$@" \
    "$WORK/job.sh" "${TRAIN_ARGS[@]}" --epochs 1 >/dev/null && fail "the job succeeded: $(cat "$WORK/out")"
  took=$(elapsed "$start")
  out=$(cat "$WORK/out")
  echo "$out"
}

run_job
expect_contains "$out" "failed: rank 0 on n1 exited with code 1, the first of 4 ranks to fail" "the watch's verdict"
expect_contains "$out" "root cause: ddp-cifar100: rank 0 could not open the rendezvous on port $port" "rank 0's words as the root cause"
[ "$(grep -c '^spank_ddp: step [0-9.]* failed: ' <<<"$out")" = 1 ] || fail "expected one verdict"
awk -v t="$took" -v l=$((rdv_timeout)) 'BEGIN { exit !(t < l) }' ||
  fail "under the watch the job took $took s, not less than the rendezvous time-out $rdv_timeout s"
watched=$took

run_job --ddp-watch=off
line=$(grep '^\[rank 0/4\] error: ' <<<"$out") || fail "rank 0 said nothing"
expect_contains "$line" "rank 0 could not open the rendezvous on port $port (MASTER_PORT) on n1" "rank 0"
expect_contains "$line" "Address already in use" "rank 0: the OS error"
expect_contains "$line" "choose another one (--ddp-port" "rank 0: the fix"
for r in 1 2 3; do
  line=$(grep "^\[rank $r/4\] error: " <<<"$out") || fail "rank $r said nothing"
  expect_contains "$line" "reached n1:$port (MASTER_ADDR:MASTER_PORT) but got no rendezvous answer within $rdv_timeout s" "rank $r"
  expect_contains "$line" "Another program may hold that port" "rank $r: the likely cause"
done
awk -v t="$took" -v l=$((rdv_timeout + 15)) 'BEGIN { exit !(t < l) }' ||
  fail "the job took $took s (rendezvous time-out $rdv_timeout s)"
echo "PASS: a taken MASTER_PORT ended the job in $watched s under the failure watch, $took s without it (rendezvous time-out $rdv_timeout s), with the cause"
