#!/bin/bash
# A ddp-cifar100 job killed mid-way and started again resumes from its checkpoint: same epoch,
# optimizer state, sampler position (the training run itself is test_main_job.sh).
source "$(dirname "$0")/testlib.sh"
BIN=${DDP_CIFAR100_BIN:-}
SYNTH=${DDP_CIFAR_SYNTH_BIN:-}
[ -x "$BIN" ] && [ -x "$SYNTH" ] || { echo "SKIP: ddp-cifar100 not built"; exit 77; }

# 10 learnable classes (chance 0.10) among the model's 100 outputs.
"$SYNTH" --out "$WORK/data" --train 1024 --test 256 --classes 10 --seed 3 >/dev/null
args=(--data-dir "$WORK/data" --width 0.1 --batch-size 64 --base-lr 0.05 --seed 1)

cat >"$WORK/job.sh" <<JOB
#!/bin/bash
srun "$BIN" "\$@"
JOB
chmod +x "$WORK/job.sh"

# Kill a 6-epoch job once its second checkpoint exists, then start the same job again.
ckpt="$WORK/ckpt"
jobid=$("$RUN" sbatch --parsable --ddp-nodes=2 --ddp-gpus=2 -o "$WORK/first.out" "$WORK/job.sh" \
  "${args[@]}" --epochs 6 --checkpoint-dir "$ckpt")
for _ in $(seq 600); do
  grep -q '^Epoch 2/6 completed' "$WORK/first.out" 2>/dev/null && [ -f "$ckpt/checkpoint.pt" ] && break
  sleep 0.2
done
sleep 0.5
"$RUN" scancel "$jobid"
grep -q '^Epoch 2/6 completed' "$WORK/first.out" || fail "first job did not reach epoch 2: $(cat "$WORK/first.out")"
grep -q 'Training completed' "$WORK/first.out" && fail "the first job finished before it was killed"
done_before=$(grep -c '^Epoch [0-9]*/6 completed' "$WORK/first.out")
"$RUN" sbatch --ddp-nodes=2 --ddp-gpus=2 --wait -o "$WORK/second.out" "$WORK/job.sh" "${args[@]}" \
  --epochs 6 --checkpoint-dir "$ckpt" >/dev/null || fail "resumed job failed: $(cat "$WORK/second.out")"
second=$(cat "$WORK/second.out")
echo "$second"
expect_contains "$second" "Resuming from $ckpt/checkpoint.pt after epoch" "resume line"
resumed_at=$(sed -n 's/.*Resuming from .* after epoch \([0-9]*\).*/\1/p' <<<"$second")
[ "$resumed_at" -ge 2 ] && [ "$resumed_at" -le "$done_before" ] || fail "resumed after epoch $resumed_at"
grep -q "^Epoch $resumed_at/6 completed" <<<"$second" && fail "an epoch was trained twice"
expect_contains "$second" "Epoch 6/6 completed" "the resumed job finishes"
expect_contains "$second" "Training completed successfully." "resumed summary"
echo "PASS: killed after epoch $done_before, resumed after epoch $resumed_at, finished epoch 6"
