#!/bin/bash
# Show 3: concurrent steps whose head node is the same get different MASTER_PORTs: two steps of one
# job, and two jobs sharing n1. Nothing is fixed at 29500.
source "$(dirname "$0")/testlib.sh"

# Each task prints its contract, then holds the step open so the steps really overlap.
cat >"$WORK/hold.sh" <<HOLD
#!/bin/bash
"$PROGRAMS/print_contract.sh"
sleep 3
HOLD
chmod +x "$WORK/hold.sh"

cat >"$WORK/steps.sh" <<JOB
#!/bin/bash
srun --ddp --overlap -N2 -n2 "$WORK/hold.sh" &
srun --ddp --overlap -N2 -n2 "$WORK/hold.sh" &
srun --ddp --overlap -N2 -n2 "$WORK/hold.sh" &
wait
JOB
"$RUN" sbatch -N2 --ntasks-per-node=1 --wait -o "$WORK/steps.out" "$WORK/steps.sh" >/dev/null ||
  fail "job with concurrent steps failed: $(cat "$WORK/steps.out")"
cat "$WORK/steps.out"
step_ports=$(grep '^contract ' "$WORK/steps.out" | grep 'host=n1' |
  sed 's/.*MASTER_PORT=\([0-9]*\).*SLURM_STEP_ID=\([0-9]*\).*/\2 \1/' | sort -u)
[ "$(wc -l <<<"$step_ports")" = 3 ] || fail "expected 3 steps on n1, got: $step_ports"
[ "$(cut -d' ' -f2 <<<"$step_ports" | sort -u | wc -l)" = 3 ] ||
  fail "concurrent steps share a port: $step_ports"

# Two jobs at once, both with n1 as head node (each takes one CPU per node of eight).
for j in a b; do
  "$RUN" sbatch --ddp-nodes=2 --ddp-gpus=1 -w n[1-2] --wait -o "$WORK/job_$j.out" \
    --wrap "srun $WORK/hold.sh" >/dev/null &
done
wait
cat "$WORK"/job_*.out
job_ports=$(cat "$WORK"/job_*.out | grep '^contract ' | grep 'MASTER_ADDR=n1' |
  sed 's/.*MASTER_PORT=\([0-9]*\).*/\1/' | sort -u)
[ "$(wc -l <<<"$job_ports")" = 2 ] || fail "two jobs on head node n1 share a port: $job_ports"
echo "PASS: steps on n1 got ports $(cut -d' ' -f2 <<<"$step_ports" | tr '\n' ' ')and jobs got $(tr '\n' ' ' <<<"$job_ports")"
