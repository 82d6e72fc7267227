#!/bin/bash
# --ddp-retries on four nodes, jobs of two that leave n4 out themselves (--exclude): a rank killed
# on one node, or a node cut off the network, requeues the job without that node, and ddp-cifar100
# resumes from its checkpoint on the two others and finishes; a program that fails on every rank is
# not retried. What differs between Slurm series (the requeue's limits, --no-requeue, salloc) is
# test_retries.sh.
source "$(dirname "$0")/retries_steps.sh"
need_trainer

# 1. ddp-cifar100, rank 1 killed in epoch 2 of the first attempt: the second attempt runs without
# that node, resumes from the checkpoint and finishes.
trainer_job "$WORK/train.sh"
train=$(submit --requeue --open-mode=append --ddp-retries=1 -o "$WORK/train.out" "$WORK/train.sh" \
  "${TRAIN_ARGS[@]}" --epochs 4 --checkpoint-dir "$WORK/ckpt")
jobs+=("$train")
wait_for_line "$WORK/train.out" '] Epoch 1/4 completed' 120 || fail "epoch 1 did not finish: $(cat "$WORK/train.out")"
bad=$(second_node "$train")
kill -KILL "$(cat "$WORK/pid.1")"
wait_restarts "$train" 1 || fail "not requeued: $(cat "$WORK/train.out")"
start_requeued_job "$train"
wait_for_line "$WORK/train.out" 'Resuming from ' 120 || fail "the second attempt did not resume: $(cat "$WORK/train.out")"
[ "$(job_field "$train" Restarts)" = 1 ] || fail "Restarts=$(job_field "$train" Restarts), expected 1"
[ "$(job_field "$train" ExcNodeList)" = "$(ranged "$bad,n4")" ] ||
  fail "ExcNodeList=$(job_field "$train" ExcNodeList), expected $bad and the job's own n4"
nodes=$(job_field "$train" NodeList)
"$RUN" scontrol show hostnames "$nodes" | grep -qx "$bad" && fail "the second attempt runs on $bad again ($nodes)"
wait_job_gone "$train" 180 || fail "the second attempt did not finish: $(cat "$WORK/train.out")"
out=$(cat "$WORK/train.out")
grep '^spank_ddp' <<<"$out" || true
expect_contains "$out" "spank_ddp: asking Slurm to requeue the job for attempt 2 of 2, without $bad (rank 1 on $bad was killed by signal 9 (SIGKILL))" "the retry named"
expect_contains "$out" "spank_ddp: job $train is requeued without $(ranged "$bad,n4");" "the requeue's outcome"
expect_contains "$out" "Training completed successfully." "the second attempt finishes"
grep -q '] Epoch 1/4 completed' <<<"$(sed -n '/Resuming from/,$p' <<<"$out")" && fail "the second attempt started from epoch 1"
echo "ok: rank 1 killed on $bad; the job ran again on $nodes from its checkpoint and finished"

# 2. The network of the job's second node cut in epoch 2: the failure watch (10 s here) names the
# silent node, and the job goes on without it. The link comes back once the job is requeued, so
# that Slurm can finish the first attempt on that node before SlurmdTimeout.
rm -rf "$WORK/ckpt"
cut=$(submit --requeue --open-mode=append --ddp-retries=1 --ddp-watch=10 -o "$WORK/cut.out" \
  "$WORK/train.sh" "${TRAIN_ARGS[@]}" --epochs 4 --checkpoint-dir "$WORK/ckpt")
jobs+=("$cut")
wait_for_line "$WORK/cut.out" '] Epoch 1/4 completed' 120 || fail "epoch 1 did not finish: $(cat "$WORK/cut.out")"
lost=$(second_node "$cut")
ip -n "ddplab-$lost" link set eth0 down
AT_LINK="ip -n ddplab-$lost link set eth0 up"
wait_restarts "$cut" 1 || { eval "$AT_LINK"; fail "not requeued after $lost went silent: $(cat "$WORK/cut.out")"; }
eval "$AT_LINK"
start_requeued_job "$cut"
wait_for_line "$WORK/cut.out" 'Resuming from ' 120 || fail "the second attempt did not resume: $(cat "$WORK/cut.out")"
[ "$(job_field "$cut" ExcNodeList)" = "$(ranged "$lost,n4")" ] ||
  fail "ExcNodeList=$(job_field "$cut" ExcNodeList), expected $lost and the job's own n4"
wait_job_gone "$cut" 180 || fail "the second attempt did not finish: $(cat "$WORK/cut.out")"
out=$(cat "$WORK/cut.out")
grep -v '^Epoch\|^Validation\|hwloc finds' <<<"$out" || true
expect_contains "$out" "spank_ddp: asking Slurm to requeue the job for attempt 2 of 2, without $lost (node $lost (ranks 1) has not answered the failure watch for " "the silent node"
expect_contains "$out" "Training completed successfully." "the second attempt finishes"
echo "ok: $lost cut off the network; the job went on without it from its checkpoint"

# 5. A program that fails on every rank names no node: not retried.
printf '#!/bin/bash\nsrun bash -c "sleep 1; exit 3"\n' >"$WORK/raise.sh"
chmod +x "$WORK/raise.sh"
raise=$(submit --requeue --ddp-retries=1 -o "$WORK/raise.out" "$WORK/raise.sh")
jobs+=("$raise")
wait_job_gone "$raise" 60 || fail "the failing job did not end: $(cat "$WORK/raise.out")"
out=$(cat "$WORK/raise.out")
expect_contains "$out" "exited with code 3, a failure of the program that names no node; another attempt would fail the same way" "not retried"
expect_contains "$out" "spank_ddp: not retried (--ddp-retries=1): rank " "not retried"
grep -q "requeu" <<<"$out" && fail "a program's failure was retried: $out"
echo "ok: a failure on every rank was not retried"

nodes_idle
echo "PASS: --ddp-retries: the trainer resumed after a killed rank and a lost node; a program's failure not retried"
