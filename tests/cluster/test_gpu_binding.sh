#!/bin/bash
# GPUs bound per task (--gpus-per-task, --gpu-bind): Slurm then narrows SLURM_STEP_GPUS and
# CUDA_VISIBLE_DEVICES in each task to its own GPU (22.05 and 24.11, without ConstrainDevices:
# node-wide indices), or, with --gpu-bind=none on 22.05, unsets both. Every rank must still get
# the step's GPUs as the plan's (DDP_GPU = step GPU LOCAL_RANK, NCCL) and a CUDA_VISIBLE_DEVICES
# in which cuda:LOCAL_RANK is that GPU. GPUs 0,1 of n1 are held by another job, so the steps there
# get 2,3 and node-wide indices differ from positions; a 2-node batch job then has GPUs 2,3 on n1
# and 0,1 on n2, where both read alike.
# On cgroup-confined nodes (ConstrainDevices=yes, LAB_CGROUP=1) each rank may open the step's GPUs
# and no other, CUDA_VISIBLE_DEVICES numbers them from 0, and a per-task binding leaves rank 1 a
# cgroup without cuda:1: the step fails at once, saying so and how to ask instead.
source "$(dirname "$0")/testlib.sh"
# shellcheck source=lab-env.sh
source "$TESTS_DIR/lab-env.sh"

# On confined nodes, no more CPUs than the machine's (2 here), the holder and the 2-rank steps
# share the cores (--oversubscribe); the GPUs are never shared.
share=()
lab_confined && share=(-s)
"$RUN" srun "${share[@]}" -N1 -n1 -w n1 --gpus-per-node=2 --job-name=hold sleep 120 >/dev/null 2>&1 &
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

if lab_confined; then
  # The step's own GPUs, 2 and 3, are all a rank may open; CUDA numbers them 0 and 1.
  out=$(timeout 60 "$RUN" srun "${share[@]}" -N1 -n2 -w n1 --ddp --ddp-gpus=2 \
    "$PROGRAMS/gpu_access.sh" "$LAB_DIR/dev/n1" 2>&1) || fail "srun gpu_access: $out"
  [ "$(grep -c '^access .* usable=2,3 denied=0,1$' <<<"$out")" = 2 ] ||
    fail "each rank should open GPUs 2,3 and be refused 0,1: $out"
  echo "ConstrainDevices: each rank opens the step's GPUs 2,3 and is refused 0,1"
  unbound=("--gpus-per-node=2" "--gpus-per-task=1 --gpu-bind=none")
  per_task=("--gpus-per-task=1" "--gpus-per-node=2 --gpu-bind=single:1" "--gpus-per-node=2 --gpu-bind=map_gpu:3,2")
  visible=0,1
else
  unbound=("--gpus-per-node=2")
  per_task=("--gpus-per-task=1" "--gpus-per-node=2 --gpu-bind=single:1"
    "--gpus-per-task=1 --gpu-bind=none" "--gpus-per-node=2 --gpu-bind=map_gpu:3,2")
  visible=2,3
fi
# contract_of BINDING: the ranks' contract lines of a 2-rank step on n1; RC its exit status.
contract_of() {
  # shellcheck disable=SC2086 # the binding is words
  if OUT=$(timeout 60 "$RUN" srun "${share[@]}" -N1 -n2 -w n1 $1 --ddp --ddp-gpus=2 \
    "$PROGRAMS/print_contract.sh" 2>&1); then RC=0; else RC=$?; fi
}
for binding in "${unbound[@]}"; do
  contract_of "$binding"
  [ "$RC" = 0 ] || fail "srun $binding: $OUT"
  check "$OUT" "$visible" 2
  echo "$binding: each rank its own of GPUs 2,3, cuda:LOCAL_RANK (CUDA_VISIBLE_DEVICES=$visible)"
done
for binding in "${per_task[@]}"; do
  contract_of "$binding"
  if ! lab_confined; then
    [ "$RC" = 0 ] || fail "srun $binding: $OUT"
    check "$OUT" "$visible" 2
    echo "$binding: each rank its own of GPUs 2,3, cuda:LOCAL_RANK"
    continue
  fi
  [ "$RC" != 0 ] || fail "srun $binding: rank 1's cgroup has no cuda:1, yet the step succeeded: $OUT"
  expect_contains "$OUT" "local rank 1 cannot use cuda:LOCAL_RANK: Slurm bound its task to CUDA_VISIBLE_DEVICES=0" "srun $binding: why"
  expect_contains "$OUT" "Fix: give the step its GPUs without binding them per task" "srun $binding: the fix"
  grep -q '^contract .* LOCAL_RANK=1 ' <<<"$OUT" && fail "srun $binding: rank 1 ran: $OUT"
  echo "$binding: refused, naming rank 1's cgroup and the fix"
done

cat >"$WORK/job.sh" <<JOB
#!/bin/bash
srun $PROGRAMS/print_contract.sh
JOB
# Confined, the batch job binds nothing per task (above: that fails at once).
binding=--gpus-per-task=1
lab_confined && binding=--gpus-per-node=2
out=$(timeout 120 "$RUN" sbatch "${share[@]}" --wait --ddp-nodes=2 --ddp-gpus=2 $binding \
  -o "$WORK/job.out" "$WORK/job.sh" 2>&1) ||
  fail "sbatch $binding: $out $(cat "$WORK/job.out")"
check "$(grep "host=n1 " "$WORK/job.out")" "$(lab_confined && echo 0,1 || echo 2,3)" 2
check "$(grep "host=n2 " "$WORK/job.out")" 0,1 0
echo "sbatch --ddp-nodes=2 --ddp-gpus=2 $binding: GPUs 2,3 on n1, 0,1 on n2"
echo "PASS: GPUs bound per task still give every rank its GPU as cuda:LOCAL_RANK$(lab_confined && echo ", on cgroup-confined nodes")"
