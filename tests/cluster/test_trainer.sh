#!/bin/bash
# A ddp-cifar100 job killed mid-way and started again resumes from its checkpoint: same epoch,
# optimizer state, sampler position (the training run itself is test_main_job.sh).
source "$(dirname "$0")/testlib.sh"
need_trainer
args=("${TRAIN_ARGS[@]}")
trainer_job "$WORK/job.sh"

# Kill a 6-epoch job once its second checkpoint exists, then start the same job again.
ckpt="$WORK/ckpt"
jobid=$("$RUN" sbatch --parsable --ddp-nodes=2 --ddp-gpus=2 -o "$WORK/first.out" "$WORK/job.sh" \
  "${args[@]}" --epochs 6 --checkpoint-dir "$ckpt")
wait_for_line "$WORK/first.out" '] Epoch 2/6 completed' 120 && [ -f "$ckpt/checkpoint.pt" ] ||
  fail "no checkpoint after epoch 2: $(cat "$WORK/first.out")"
sleep 0.5
"$RUN" scancel "$jobid"
# The ranks end after saving at their next step, which may finish an epoch first: count the
# epochs once the job is gone and its output complete.
wait_job_gone "$jobid" 60 || fail "the first job did not end within 60 s of scancel"
grep -q '] Epoch 2/6 completed' "$WORK/first.out" || fail "first job did not reach epoch 2: $(cat "$WORK/first.out")"
grep -q 'Training completed' "$WORK/first.out" && fail "the first job finished before it was killed"
done_before=$(grep -c '] Epoch [0-9]*/6 completed' "$WORK/first.out")
"$RUN" sbatch --ddp-nodes=2 --ddp-gpus=2 --wait -o "$WORK/second.out" "$WORK/job.sh" "${args[@]}" \
  --epochs 6 --checkpoint-dir "$ckpt" >/dev/null || fail "resumed job failed: $(cat "$WORK/second.out")"
second=$(cat "$WORK/second.out")
echo "$second"
expect_contains "$second" "Resuming from $ckpt/checkpoint.pt " "resume line"
# scancel's SIGTERM makes the ranks save a checkpoint at their next step: the second job goes on
# there, or after the last whole epoch when the signal came too late for a step.
resumed_at=$(resumed_after "$second")
[ -n "$resumed_at" ] && [ "$resumed_at" -ge 2 ] && [ "$resumed_at" -le "$done_before" ] ||
  fail "resumed after epoch '$resumed_at'"
grep -q "] Epoch $resumed_at/6 completed" <<<"$second" && fail "an epoch was trained twice"
expect_contains "$second" "Epoch 6/6 completed" "the resumed job finishes"
expect_contains "$second" "Training completed successfully." "resumed summary"
echo "PASS: killed after epoch $done_before, resumed after epoch $resumed_at, finished epoch 6"
