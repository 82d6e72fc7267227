#!/bin/bash
# Concurrent steps whose head node is the same get different MASTER_PORTs, and rendezvous there:
# 20 steps of one job, and two jobs sharing n1. Nothing is fixed at 29500.
source "$(dirname "$0")/testlib.sh"

# Each task prints its contract, then holds the step open so the steps really overlap.
cat >"$WORK/hold.sh" <<HOLD
#!/bin/bash
"$PROGRAMS/print_contract.sh"
sleep 3
HOLD
chmod +x "$WORK/hold.sh"

# 20 steps of one job at once, head node n1 for all: each prints its contract, then really meets
# its other rank at MASTER_PORT with libddp (a shared port would fail one step's rendezvous).
steps=20
worker=${DDP_TEST_WORKER_BIN:-}
[ -x "$worker" ] || { echo "SKIP: ddp_test_worker not built"; exit 77; }
# The launches are spread out a little (20 at the same instant overwhelm slurmd on a 2-core
# machine: "Unable to receive ok ack"), then every task waits until all 40 have started, so that
# all 20 steps are alive, and rendezvous, at the same time.
cat >"$WORK/meet.sh" <<MEET
#!/bin/bash
"$PROGRAMS/print_contract.sh"
echo "\$SLURM_STEP_ID.\$RANK" >>"$WORK/started"
for _ in \$(seq 600); do
  [ "\$(wc -l <"$WORK/started")" -ge $((2 * steps)) ] && break
  sleep 0.1
done
exec "$worker" meet
MEET
chmod +x "$WORK/meet.sh"
{
  echo '#!/bin/bash'
  for _ in $(seq $steps); do echo "srun --ddp --overlap -N2 -n2 $WORK/meet.sh & sleep 0.3"; done
  echo 'wait'
} >"$WORK/steps.sh"
"$RUN" sbatch -N2 --ntasks-per-node=1 --wait -o "$WORK/steps.out" "$WORK/steps.sh" >/dev/null ||
  fail "job with concurrent steps failed: $(cat "$WORK/steps.out")"
cat "$WORK/steps.out"
step_ports=$(grep '^contract ' "$WORK/steps.out" | grep 'host=n1' |
  sed 's/.*MASTER_PORT=\([0-9]*\).*SLURM_STEP_ID=\([0-9]*\).*/\2 \1/' | sort -u)
[ "$(wc -l <<<"$step_ports")" = $steps ] || fail "expected $steps steps on n1, got: $step_ports"
[ "$(cut -d' ' -f2 <<<"$step_ports" | sort -u | wc -l)" = $steps ] ||
  fail "concurrent steps share a port: $step_ports"
met=$(grep -c 'met 2 ranks' "$WORK/steps.out" || true)
[ "$met" = $((2 * steps)) ] || fail "$met of $((2 * steps)) ranks met their step's other rank"

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
echo "PASS: $steps concurrent steps on n1 got $steps ports and met there; jobs got $(tr '\n' ' ' <<<"$job_ports")"
