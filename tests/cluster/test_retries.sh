#!/bin/bash
# --ddp-retries on four nodes, jobs of two that leave n4 out themselves (--exclude): a rank killed on one node, or a node cut off the
# network, requeues the job without that node, and ddp-cifar100 resumes from its checkpoint on the
# two others and finishes (the preflight's retry is in test_preflight.sh); a rank
# killed on every attempt is retried until the retries, or the partition's nodes, are used up, and
# the last attempt tells the story; a program that fails on every rank is not retried; and where
# Slurm refuses the requeue (--no-requeue, an salloc session) the output says why and how to
# resubmit.
source "$(dirname "$0")/testlib.sh"
need_trainer
id nobody >/dev/null 2>&1 || { echo "SKIP: no user nobody"; exit 77; }
# The job's own user asks for the requeue: an unprivileged one, as on a real cluster (slurmctld
# lets the owner requeue a batch job and change its excluded nodes while it is pending).
chown nobody:"$(id -gn nobody)" "$WORK"
as_user() { (cd "$WORK" && "$RUN" setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"); }
restore() { "$TESTS_DIR/up.sh" >/dev/null 2>&1 || true; }
jobs=()
AT_LINK=true
cleanup() {
  local j
  eval "$AT_LINK" 2>/dev/null || true
  for j in ${jobs[@]+"${jobs[@]}"}; do "$RUN" scancel "$j" 2>/dev/null || true; done
  restore
  rm -rf "$WORK"
}
trap cleanup EXIT
LAB_NODES=4 "$TESTS_DIR/up.sh" >"$WORK/up.log" 2>&1 || fail "lab with four nodes: $(tail -5 "$WORK/up.log")"

# The node the job's rank 1 runs on: its second node (one rank per node).
second_node() { "$RUN" scontrol show hostnames "$(job_field "$1" NodeList)" | sed -n 2p; }
# Every job leaves n4 out itself: its own --exclude must stay excluded after a retry.
ranged() { "$RUN" scontrol show hostlist "$1"; }
submit() { as_user sbatch --parsable --ddp-nodes=2 --ddp-gpus=1 --exclude=n4 "$@"; }
# wait_count FILE PATTERN N: true once FILE has N lines matching PATTERN (within 60 s).
wait_count() {
  local i n
  for ((i = 0; i < 300; i++)); do
    n=$(grep -c -- "$2" "$1" 2>/dev/null) || true
    [ "${n:-0}" -ge "$3" ] && return 0
    sleep 0.2
  done
  return 1
}

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

# A rank that kills itself on every attempt, on the job's second node.
cat >"$WORK/crash.sh" <<'JOB'
#!/bin/bash
srun bash -c 'echo "attempt ${SLURM_RESTART_COUNT:-0}: rank $RANK on $(hostname)"; sleep 1; [ "$RANK" = 1 ] && kill -KILL $$; sleep 60'
JOB
chmod +x "$WORK/crash.sh"
# crash RETRIES: the job's output once it has ended, after as many requeues as it asks for.
crash() {
  local id out i
  id=$(submit --requeue --open-mode=append --ddp-retries="$1" -o "$WORK/crash.$1.out" "$WORK/crash.sh")
  jobs+=("$id")
  for ((i = 0; i < 4; i++)); do
    wait_count "$WORK/crash.$1.out" "^spank_ddp: \(asking Slurm to requeue the job\|not retried\)" $((i + 1)) ||
      fail "no retry decision after attempt $((i + 1)): $(cat "$WORK/crash.$1.out")"
    # The decision's outcome: the job requeued, or a line that says why not.
    for _ in $(seq 150); do
      grep -q "^spank_ddp: not retried" "$WORK/crash.$1.out" && break
      [ "$(job_field "$id" Restarts)" = $((i + 1)) ] && break
      sleep 0.2
    done
    out=$(cat "$WORK/crash.$1.out")
    grep -q "^spank_ddp: not retried" <<<"$out" && break
    [ "$(job_field "$id" Restarts)" = $((i + 1)) ] || fail "Slurm did not requeue job $id: $out"
    start_requeued_job "$id"
    wait_for_line "$WORK/crash.$1.out" "^attempt $((i + 1)): rank 1" 60 || fail "attempt $((i + 2)) did not start: $out"
  done
  wait_job_gone "$id" 60 || fail "job $id did not end: $(cat "$WORK/crash.$1.out")"
  cat "$WORK/crash.$1.out"
}

# 3. One retry, used up: the second attempt says so, and which nodes the job excludes.
out=$(crash 1)
first=$(sed -n 's/^attempt 0: rank 1 on //p' <<<"$out")
second=$(sed -n 's/^attempt 1: rank 1 on //p' <<<"$out")
[ -n "$first" ] && [ -n "$second" ] && [ "$first" != "$second" ] || fail "rank 1 ran on '$first', then on '$second': $out"
expect_contains "$out" "spank_ddp: asking Slurm to requeue the job for attempt 2 of 2, without $first" "the first retry"
expect_contains "$out" "spank_ddp: not retried: attempt 2 failed, and the job was requeued 1 times already (--ddp-retries=1): rank 1 on $second was killed by signal 9 (SIGKILL)" "retries used up"
expect_contains "$out" "spank_ddp: job" "the exclusions listed"
expect_contains "$out" " excludes $(ranged "$first,n4"); to leave out $second as well, resubmit with --exclude=$(ranged "$first,$second,n4")" "the exclusions listed"
echo "ok: retries used up after $first, then $second"

# 4. Two retries, but without both failed nodes (and n4) the partition has one node for a job of two.
out=$(crash 2)
expect_contains "$out" "spank_ddp: asking Slurm to requeue the job for attempt 3 of 3, without" "the second retry decided"
expect_contains "$out" "spank_ddp: not retried: without n[" "the partition guard"
expect_contains "$out" ", partition debug has 1 of the 2 nodes the job needs; resubmit once the nodes are repaired" "the partition guard"
[ "$(grep -c '^spank_ddp: asking Slurm to requeue the job' <<<"$out")" = 2 ] || fail "expected two retry decisions: $out"
echo "ok: the second retry was refused: the partition would have one node left"

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

# 6. Where Slurm refuses: a job submitted with --no-requeue, and an salloc session.
norequeue=$(submit --no-requeue --ddp-retries=1 -o "$WORK/norequeue.out" "$WORK/crash.sh")
jobs+=("$norequeue")
wait_job_gone "$norequeue" 60 || fail "the --no-requeue job did not end: $(cat "$WORK/norequeue.out")"
out=$(cat "$WORK/norequeue.out")
expect_contains "$out" "spank_ddp: not retried: job $norequeue may not be requeued (sbatch --no-requeue" "--no-requeue"
expect_contains "$out" "or resubmit with --exclude=n" "--no-requeue"
out=$(as_user timeout 60 salloc -N2 --ddp-nodes=2 --ddp-gpus=1 --ddp-retries=1 \
  srun bash -c 'sleep 1; [ "$RANK" = 1 ] && kill -KILL $$; sleep 60' 2>&1 </dev/null) &&
  fail "the salloc step succeeded: $out"
expect_contains "$out" "Slurm requeues batch jobs only" "salloc"
echo "ok: --no-requeue and salloc are told why, and how to resubmit"

# Requeues, a cut link and killed ranks leave every node idle: none drained or down.
for _ in $(seq 150); do
  states=$("$RUN" sinfo -h -N -o '%N %T' | sort -u)
  ! grep -qv ' idle$' <<<"$states" && break
  sleep 0.2
done
! grep -qv ' idle$' <<<"$states" || fail "nodes not idle after the jobs: $states"
echo "PASS: --ddp-retries"
