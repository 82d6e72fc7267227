#!/bin/bash
# GPUs bound per task (--gpus-per-task, --gpu-bind): Slurm then narrows SLURM_STEP_GPUS and
# CUDA_VISIBLE_DEVICES in each task to its own GPU (22.05 and 24.11, without ConstrainDevices:
# node-wide indices), or, with --gpu-bind=none on 22.05, unsets both. Every rank must still get
# the step's GPUs as the plan's (DDP_GPU = step GPU LOCAL_RANK, NCCL) and a CUDA_VISIBLE_DEVICES
# in which cuda:LOCAL_RANK is that GPU. GPUs 0,1 of n1 are held by another job, so the steps there
# get 2,3 and node-wide indices differ from positions; a 2-node batch job then has GPUs 2,3 on n1
# and 0,1 on n2, where both read alike.
source "$(dirname "$0")/testlib.sh"

"$RUN" srun -N1 -n1 -w n1 --gpus-per-node=2 --job-name=hold sleep 120 >/dev/null 2>&1 &
hold=$!
trap 'kill "$hold" 2>/dev/null; wait "$hold" 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 50); do
  "$RUN" squeue -h -n hold -t R -o %i | grep -q . && break
  sleep 0.2
done
"$RUN" squeue -h -n hold -t R -o %i | grep -q . || fail "the job holding GPUs 0,1 did not start"

# check OUTPUT VISIBLE FIRST_GPU: each of the two ranks' lines.
check() {
  local out=$1 visible=$2 first=$3 local_rank line
  for local_rank in 0 1; do
    line=$(grep "^contract .* LOCAL_RANK=$local_rank " <<<"$out") ||
      fail "no rank $local_rank: $out"
    [ "$(field "$line" CUDA_VISIBLE_DEVICES)" = "$visible" ] &&
      [ "$(field "$line" DDP_GPU)" = "$((first + local_rank))" ] &&
      [ "$(field "$line" DDP_BACKEND)" = nccl ] || fail "local rank $local_rank got: $line"
  done
}

for binding in "--gpus-per-task=1" "--gpus-per-node=2 --gpu-bind=single:1" \
  "--gpus-per-task=1 --gpu-bind=none" "--gpus-per-node=2 --gpu-bind=map_gpu:3,2"; do
  # shellcheck disable=SC2086 # the binding is words
  out=$(timeout 60 "$RUN" srun -N1 -n2 -w n1 $binding --ddp --ddp-gpus=2 \
    "$PROGRAMS/print_contract.sh" 2>&1) || fail "srun $binding: $out"
  check "$out" 2,3 2
  echo "$binding: each rank its own of GPUs 2,3, cuda:LOCAL_RANK"
done

cat >"$WORK/job.sh" <<JOB
#!/bin/bash
srun $PROGRAMS/print_contract.sh
JOB
out=$(timeout 120 "$RUN" sbatch --wait --ddp-nodes=2 --ddp-gpus=2 --gpus-per-task=1 \
  -o "$WORK/job.out" "$WORK/job.sh" 2>&1) ||
  fail "sbatch --gpus-per-task=1: $out $(cat "$WORK/job.out")"
check "$(grep "host=n1 " "$WORK/job.out")" 2,3 2
check "$(grep "host=n2 " "$WORK/job.out")" 0,1 0
echo "sbatch --ddp-nodes=2 --ddp-gpus=2 --gpus-per-task=1: GPUs 2,3 on n1, 0,1 on n2"
echo "PASS: GPUs bound per task still give every rank its GPU as cuda:LOCAL_RANK"
