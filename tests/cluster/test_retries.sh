#!/bin/bash
# --ddp-retries on four nodes, jobs of two that leave n4 out themselves (--exclude): what reaches
# slurmctld (the requeue, the excluded nodes, the partition's nodes) on every Slurm series. A rank
# killed on every attempt is retried until the retries, or the partition's nodes, are used up, and
# the last attempt tells the story; where Slurm refuses the requeue (--no-requeue, an salloc
# session) the output says why and how to resubmit. ddp-cifar100 resuming from its checkpoint
# after a killed rank or a node cut off, and a program that fails on every rank, are
# test_retries_training.sh (the preflight's retry is in test_preflight.sh).
source "$(dirname "$0")/retries_steps.sh"

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

nodes_idle
echo "PASS: --ddp-retries: used up, the partition guard, --no-requeue and salloc"
