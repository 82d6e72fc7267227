#!/bin/bash
# Show 2: a real torchrun-compatible program (Debian's python3-torch, Gloo) runs across both nodes
# under plain srun: once inside an sbatch --ddp-nodes job, once with srun --ddp directly.
source "$(dirname "$0")/testlib.sh"
"$PYTHON" -c "import torch.distributed" 2>/dev/null || { echo "SKIP: python3-torch missing"; exit 77; }

check() {  # check OUTPUT WORLD
  local out=$1 world=$2 expected=$(( $2 * ($2 + 1) / 2 ))
  local n
  n=$(grep -c "^allreduce .* world=$world .* sum=$expected expected=$expected" <<<"$out" || true)
  [ "$n" = "$world" ] || fail "expected $world ranks with sum=$expected, got $n:
$out"
  grep -q "host=n1" <<<"$out" && grep -q "host=n2" <<<"$out" || fail "not on both nodes: $out"
  grep -q "gathered=$(seq -s, 0 $(( world - 1 )))" <<<"$out" || fail "all_gather order: $out"
}

cat >"$WORK/job.sh" <<JOB
#!/bin/bash
srun $PYTHON "$PROGRAMS/gloo_allreduce.py"
JOB
"$RUN" sbatch --ddp-nodes=2 --ddp-gpus=2 --wait -o "$WORK/job.out" "$WORK/job.sh" >/dev/null ||
  fail "sbatch job failed: $(cat "$WORK/job.out")"
out=$(cat "$WORK/job.out")
echo "$out"
check "$out" 4

out=$(timeout 120 "$RUN" srun --ddp -N2 --ntasks-per-node=1 "$PYTHON" "$PROGRAMS/gloo_allreduce.py" 2>&1) ||
  fail "srun --ddp failed: $out"
echo "$out"
check "$out" 2
echo "PASS: gloo all_reduce across n1 and n2 with 4 and 2 ranks"
