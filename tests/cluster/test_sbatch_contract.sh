#!/bin/bash
# Show 1: `sbatch --ddp-nodes=2 --ddp-gpus=2 --wait job.sh` runs 2 nodes x 2 tasks, each task with
# the torchrun contract; the batch step itself gets no rank variables.
source "$(dirname "$0")/testlib.sh"

cat >"$WORK/job.sh" <<JOB
#!/bin/bash
echo "batch RANK=\${RANK-unset} WORLD_SIZE=\${WORLD_SIZE-unset} nodes=\$SLURM_JOB_NUM_NODES tasks=\$SLURM_NTASKS job=\$SLURM_JOB_ID"
srun bash -c '"$PROGRAMS/print_contract.sh"; env > "$WORK/env.\$SLURM_PROCID"'

JOB
chmod +x "$WORK/job.sh"

"$RUN" sbatch --ddp-nodes=2 --ddp-gpus=2 --wait -o "$WORK/job.out" "$WORK/job.sh" >/dev/null ||
  fail "sbatch failed: $(cat "$WORK/job.out" 2>/dev/null)"
out=$(cat "$WORK/job.out")
echo "$out"

expect_contains "$out" "batch RANK=unset WORLD_SIZE=unset nodes=2 tasks=4" "batch step"
mapfile -t lines < <(grep '^contract ' <<<"$out" | sort -t= -k3)
[ "${#lines[@]}" = 4 ] || fail "expected 4 task lines, got ${#lines[@]}"

declare -A ranks=()
for line in "${lines[@]}"; do
  rank=$(field "$line" RANK)
  host=$(field "$line" host)
  ranks[$rank]=1
  [ "$(field "$line" WORLD_SIZE)" = 4 ] || fail "WORLD_SIZE in: $line"
  [ "$(field "$line" LOCAL_WORLD_SIZE)" = 2 ] || fail "LOCAL_WORLD_SIZE in: $line"
  [ "$(field "$line" MASTER_ADDR)" = n1 ] || fail "MASTER_ADDR in: $line"
  [ "$(field "$line" SLURM_PROCID)" = "$rank" ] || fail "RANK differs from SLURM_PROCID: $line"
  node=$(( rank / 2 ))
  [ "$host" = "n$(( node + 1 ))" ] || fail "rank $rank on $host: $line"
  [ "$(field "$line" NODE_RANK)" = "$node" ] || fail "NODE_RANK in: $line"
  [ "$(field "$line" GROUP_RANK)" = "$node" ] || fail "GROUP_RANK in: $line"
  [ "$(field "$line" LOCAL_RANK)" = $(( rank % 2 )) ] || fail "LOCAL_RANK in: $line"
  # Slurm may give any two of the node's four GPUs; rank LOCAL_RANK drives the LOCAL_RANK-th.
  IFS=, read -r -a visible <<<"$(field "$line" CUDA_VISIBLE_DEVICES)"
  [ "${#visible[@]}" = 2 ] || fail "CUDA_VISIBLE_DEVICES in: $line"
  [ "$(field "$line" DDP_GPU)" = "${visible[$(( rank % 2 ))]}" ] || fail "DDP_GPU in: $line"
  [ "$(field "$line" DDP_BACKEND)" = nccl ] || fail "DDP_BACKEND in: $line"
  [ "$(field "$line" CUDA_DEVICE_ORDER)" = PCI_BUS_ID ] || fail "CUDA_DEVICE_ORDER in: $line"
done
[ "${!ranks[*]}" != "" ] && [ "$(printf '%s\n' "${!ranks[@]}" | sort -n | tr '\n' ' ')" = "0 1 2 3 " ] ||
  fail "ranks are not exactly 0..3: ${!ranks[*]}"
ports=$(for l in "${lines[@]}"; do field "$l" MASTER_PORT; done | sort -u)
[ "$(wc -l <<<"$ports")" = 1 ] || fail "tasks disagree on MASTER_PORT: $ports"
[ "$ports" -ge 20000 ] && [ "$ports" -le 29999 ] || fail "MASTER_PORT $ports outside 20000-29999"

# ddp-plan, given the same step facts, promises exactly what node n1's tasks got.
if [ -n "${DDP_PLAN_BIN:-}" ]; then
  job=$(sed -n 's/^batch .* job=\([0-9]*\).*/\1/p' <<<"$out")
  gpus=$(sed -n 's/^SLURM_STEP_GPUS=//p' "$WORK/env.0")
  "$RUN" --node n1 "$DDP_PLAN_BIN" --json --job-id "$job" --step-id 0 --nodes 2 --node-id 0 --nodelist 'n[1-2]' \
    --tasks 2 --gpus "$gpus" --cuda-visible-devices "$gpus" --cpus 2 --ddp-nodes 2 --ddp-gpus 2 \
    >"$WORK/plan.json" || fail "ddp-plan failed"
  "$PYTHON" "$PROGRAMS/compare_plan.py" "$WORK/plan.json" "$WORK" || fail "ddp-plan disagrees"
fi

# The same request through salloc, and through srun outside any job (the cli_filter makes both
# a 2x2 allocation).
for launcher in "salloc --ddp-nodes=2 --ddp-gpus=2 srun" "srun --ddp-nodes=2 --ddp-gpus=2"; do
  # shellcheck disable=SC2086 # the launcher is a word list on purpose
  got=$(timeout 60 "$RUN" $launcher "$PROGRAMS/print_contract.sh" 2>&1) || fail "$launcher: $got"
  [ "$(grep -c '^contract .*WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 .*MASTER_ADDR=n1' <<<"$got")" = 4 ] ||
    fail "$launcher did not give 4 ranks on 2 nodes: $got"
  [ "$(grep -o 'RANK=[0-9]' <<<"$got" | grep -v LOCAL | sort -u | wc -l)" -ge 4 ] || fail "ranks: $got"
done
echo "PASS: 4 ranks on 2 nodes, MASTER_ADDR=n1 MASTER_PORT=$ports; salloc and srun alike"
