#!/bin/bash
# A time limit coming, as examples/requeue-cifar100.sbatch meets it: the batch shell gets SIGUSR1
# mid-epoch (what --signal=B:USR1@120 sends two minutes before the limit), passes it to srun, every
# rank stops at the same step and rank 0 saves the checkpoint there, the script requeues the job,
# and the job resumes at that step of that epoch, not at the epoch's start, and finishes with every
# epoch trained once.
source "$(dirname "$0")/testlib.sh"
need_trainer
# More images than need_trainer's: an epoch of several seconds, so that the signal lands in one.
"$SYNTH" --out "$WORK/big" --train 6144 --test 256 --classes 10 --seed 3 >/dev/null
ckpt=$WORK/ckpt
jobid=$(DDP_CIFAR100=$BIN "$RUN" sbatch --parsable --ddp-nodes=2 --ddp-gpus=2 -o "$WORK/out" \
  "$TESTS_DIR/../../examples/requeue-cifar100.sbatch" --data-dir "$WORK/big" --width 0.1 \
  --batch-size 64 --base-lr 0.05 --seed 1 --epochs 3 --checkpoint-dir "$ckpt")
trap '"$RUN" scancel "$jobid" 2>/dev/null || true; rm -rf "$WORK"' EXIT
wait_for_line "$WORK/out" '] Epoch 1/3 completed' 240 || fail "epoch 1 did not finish: $(cat "$WORK/out")"
sleep 3  # into epoch 2, past its first steps
"$RUN" scancel --batch --signal=USR1 "$jobid" || fail "scancel --batch --signal=USR1"
wait_for_line "$WORK/out" 'Stopped by SIGUSR1 in epoch 2/3 at step ' 120 ||
  fail "the ranks did not stop at a step: $(cat "$WORK/out")"
read -r step steps < <(sed -n 's/.*Stopped by SIGUSR1 in epoch 2\/3 at step \([0-9]*\) of \([0-9]*\).*/\1 \2/p' "$WORK/out")
((step > 0 && step < steps)) || fail "stopped at step $step of $steps: not inside the epoch"
wait_for_line "$WORK/out" "^requeueing job $jobid" 60 || fail "the script did not requeue the job: $(cat "$WORK/out")"
start_requeued_job "$jobid"
wait_for_line "$WORK/out" "Resuming from $ckpt/checkpoint.pt in epoch 2 at step $step\$" 240 ||
  fail "the requeued job did not resume at step $step of epoch 2: $(cat "$WORK/out")"
wait_job_gone "$jobid" 300 || fail "the requeued job did not finish: $(cat "$WORK/out")"
out=$(cat "$WORK/out")
echo "$out"
for e in 1 2 3; do
  [ "$(grep -c "] Epoch $e/3 completed" <<<"$out")" = 1 ] || fail "epoch $e was not completed exactly once"
done
after=$(sed -n '/Resuming from/,$p' <<<"$out")
grep -q '] Epoch 1/3 completed' <<<"$after" && fail "the requeued job trained epoch 1 again"
expect_contains "$after" "Training completed successfully." "the requeued job's summary"
restarts=$("$RUN" scontrol show job "$jobid" | sed -n 's/.*Restarts=\([0-9]*\).*/\1/p')
[ "$restarts" = 1 ] || fail "expected 1 restart, Slurm counts '$restarts'"
echo "PASS: SIGUSR1 in the batch shell stopped every rank at step $step of $steps in epoch 2; requeued, resumed there, finished"
