#!/bin/bash
# The job is requeued mid-training (as Slurm does on a node failure or a preemption): the same job
# starts again and resumes from its last checkpoint instead of from epoch 1, and finishes.
source "$(dirname "$0")/testlib.sh"
need_trainer
trainer_job "$WORK/job.sh"
ckpt="$WORK/ckpt"
# --open-mode=append: the second run's output follows the first's in the same file.
jobid=$("$RUN" sbatch --parsable --requeue --open-mode=append --ddp-nodes=2 --ddp-gpus=2 \
  -o "$WORK/out" "$WORK/job.sh" "${TRAIN_ARGS[@]}" --epochs 6 --checkpoint-dir "$ckpt")
trap '"$RUN" scancel "$jobid" 2>/dev/null || true; rm -rf "$WORK"' EXIT
wait_for_line "$WORK/out" '] Epoch 2/6 completed' 120 || fail "epoch 2 did not finish: $(cat "$WORK/out")"
"$RUN" scontrol requeue "$jobid"
start=$(now)
start_requeued_job "$jobid"
wait_for_line "$WORK/out" 'Resuming from ' 240 || fail "the requeued job did not resume: $(cat "$WORK/out")"
restarted=$(elapsed "$start")
wait_job_gone "$jobid" 240 || fail "the requeued job did not finish: $(cat "$WORK/out")"
out=$(cat "$WORK/out")
echo "$out"
restarts=$("$RUN" scontrol show job "$jobid" | sed -n 's/.*Restarts=\([0-9]*\).*/\1/p')
[ "$restarts" = 1 ] || fail "expected 1 restart, Slurm counts '$restarts'"
# torchrun's restart count follows Slurm's; the run id stays the job's step.
read -r count run_id <"$WORK/torchelastic.0"
[ "$count" = 1 ] && [ "$run_id" = "$jobid.0" ] ||
  fail "the requeued ranks got TORCHELASTIC_RESTART_COUNT=$count TORCHELASTIC_RUN_ID=$run_id"
before=$(sed -n '/Resuming from/q;p' <<<"$out" | grep -c '] Epoch [0-9]*/6 completed')
resumed_at=$(resumed_after "$out")
[ -n "$resumed_at" ] && [ "$resumed_at" -ge 2 ] && [ "$resumed_at" -le "$before" ] ||
  fail "resumed after epoch $resumed_at, but the first run finished $before"
after=$(sed -n '/Resuming from/,$p' <<<"$out")
grep -q "] Epoch $resumed_at/6 completed" <<<"$after" && fail "epoch $resumed_at was trained twice"
grep -q '] Epoch 1/6 completed' <<<"$after" && fail "the requeued job started from epoch 1"
expect_contains "$after" "Epoch 6/6 completed" "the requeued job finishes"
expect_contains "$after" "Training completed successfully." "summary"
echo "PASS: requeued after epoch $before, started again ${restarted} s later, resumed after epoch $resumed_at, finished"
