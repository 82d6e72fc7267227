#!/bin/bash
# Progress in a batch log: rank 0 downloads the data set from a slow mirror (the lab's controller,
# throttled so that the download takes about 15 s) and its log gets a line at every 10%; the other
# ranks wait for it past DDP_TIMEOUT=5 (a barrier with that time-out made them fail: "barrier
# failed: a rank probably died") and one of them says so; the epochs then come as time-stamped
# lines with their training loss and the time left.
source "$(dirname "$0")/testlib.sh"
need_trainer
source "$TESTS_DIR/lab-env.sh"
# The archive as the official one is laid out: cifar-100-binary/{train,test}.bin.
mkdir -p "$WORK/serve"
tar -C "$WORK/data" -czf "$WORK/serve/cifar.tar.gz" cifar-100-binary
md5=$(md5sum "$WORK/serve/cifar.tar.gz" | cut -d' ' -f1)
size=$(stat -c %s "$WORK/serve/cifar.tar.gz")
rate=$((size / 15))
port=28080
"$RUN" "$PYTHON" "$PROGRAMS/slow_http.py" "$WORK/serve/cifar.tar.gz" "$port" "$rate" &
server=$!
trap 'kill "$server" 2>/dev/null; rm -rf "$WORK"' EXIT
url="http://$LAB_CTL_ADDR:$port/cifar.tar.gz"
for _ in $(seq 50); do "$RUN" "$PYTHON" -c "import socket; socket.create_connection(('$LAB_CTL_ADDR', $port), 1)" 2>/dev/null && break; sleep 0.1; done

trainer_job "$WORK/job.sh" DDP_TIMEOUT=5
start=$(now)
"$RUN" sbatch --wait --ddp-nodes=2 --ddp-gpus=2 -o "$WORK/out" "$WORK/job.sh" --data-dir "$WORK/fetched" \
  --download --download-url "$url" --download-md5 "$md5" --width 0.1 --batch-size 64 --base-lr 0.05 \
  --seed 1 --epochs 2 >/dev/null || fail "the job failed: $(cat "$WORK/out")"
took=$(elapsed "$start")
out=$(cat "$WORK/out")
echo "$out"
[[ $out != *"barrier failed"* ]] || fail "a rank gave up waiting for the download"
tens=$(grep -cE '^cifar: downloading [0-9.]+ of [0-9.]+ MB \([1-9]0%\), [0-9.]+ MB/s' <<<"$out" || true)
((tens >= 5)) || fail "expected a line at every 10% of the download, found $tens"
grep -qE '^cifar: downloading [0-9.]+ of [0-9.]+ MB \(100%\)' <<<"$out" || fail "no line at 100%"
expect_contains "$out" "[rank 1/4] waiting for rank 0 (on n1) to finish the download of CIFAR-100 into $WORK/fetched" \
  "one waiting rank says so"
[ "$(grep -c 'waiting for rank 0' <<<"$out")" = 1 ] || fail "more than one rank said it waits"
for e in 1 2; do
  grep -qE "^\[[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}\] Epoch $e/2 completed in [0-9.]+ seconds, training loss [0-9.]+" <<<"$out" ||
    fail "epoch $e's line lacks its time stamp or training loss"
done
grep -qE '^\[[^]]*\] Epoch 1/2 completed in .*, about [0-9.]+ (s|min) left$' <<<"$out" || fail "epoch 1's line lacks the time left"
expect_contains "$out" "Training completed successfully." "summary"
echo "PASS: a download of about 15 s (past DDP_TIMEOUT=5) in the batch log, $tens lines of 10%, the job took $took s"
