#!/bin/bash
# Job scripts with several steps: only the training step becomes a DDP step. A job submitted with
# --ddp-nodes=2 --ddp-gpus=2 runs a setup step, a per-node staging step, a monitor beside training,
# the training step, a full-shape step with --ddp=off and a one-node `srun --ddp` evaluation: every
# helper step is plain (no RANK, Slurm's own CPU binding), training gets the whole contract, the
# evaluation is a DDP step of its own shape. salloc behaves the same; a step that alone differs
# from the job's shape fails with the fix that applies to it; the cli_filter refuses --ddp-gpus
# beside a conflicting GPU request.
source "$(dirname "$0")/testlib.sh"

cat >"$WORK/show.sh" <<'SHOW'
#!/bin/bash
# One line per task: the step's name, then what the task got.
echo "step=$1 host=$(hostname) RANK=${RANK-none} WORLD_SIZE=${WORLD_SIZE-none} LOCAL_RANK=${LOCAL_RANK-none} MASTER_ADDR=${MASTER_ADDR-none} MASTER_PORT=${MASTER_PORT-none} DDP_CPUS=${DDP_CPUS-none} role=${SLURM_SPANK_DDP_STEP_ROLE-none} cpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)"
SHOW
chmod +x "$WORK/show.sh"

# Every line of step $2 in output $1; fails when the step printed nothing.
step_lines() {
  local lines
  lines=$(grep "^step=$2 " <<<"$1") || fail "step $2 printed nothing:
$1"
  printf '%s\n' "$lines"
}

expect_plain() {
  local out=$1 step=$2 tasks=$3 lines
  lines=$(step_lines "$out" "$step")
  [ "$(wc -l <<<"$lines")" = "$tasks" ] || fail "step $step: expected $tasks tasks: $lines"
  grep -qv ' RANK=none .* DDP_CPUS=none role=none ' <<<"$lines" &&
    fail "step $step should be plain (no RANK, no re-pinning, no role variable): $lines"
  return 0
}

expect_ddp() {
  local out=$1 step=$2 world=$3 lines ranks
  lines=$(step_lines "$out" "$step")
  [ "$(grep -c " WORLD_SIZE=$world .*MASTER_ADDR=n1 MASTER_PORT=[0-9]" <<<"$lines")" = "$world" ] ||
    fail "step $step: expected $world ranks with the contract: $lines"
  ranks=$(grep -o ' RANK=[0-9]*' <<<"$lines" | sort -u | wc -l)
  [ "$ranks" = "$world" ] || fail "step $step: expected ranks 0..$((world - 1)): $lines"
  grep -q 'role=none' <<<"$lines" || fail "step $step: srun's role variable reached the task"
  [ "$(grep -c 'role=none' <<<"$lines")" = "$world" ] || fail "step $step: role variable leaked: $lines"
}

# The job script as users write it (the 6-node Ethernet and Vega guides), plus --ddp=off and an
# evaluation step. The plain setup step runs once more with the inherited options removed, which
# is a step the plugin never sees: Slurm's own binding, to compare with.
cat >"$WORK/job.sh" <<JOB
#!/bin/bash
S=$WORK/show.sh
srun -N1 -n1 \$S setup; echo "rc setup=\$?"
env -u SLURM_SPANK__SLURM_SPANK_OPTION_spank_ddp_ddp_nodes \
    -u SLURM_SPANK__SLURM_SPANK_OPTION_spank_ddp_ddp_gpus srun -N1 -n1 \$S slurm_only
srun -N2 -n2 --ntasks-per-node=1 \$S stage; echo "rc stage=\$?"
srun --overlap -N2 -n2 --ntasks-per-node=1 bash -c "sleep 1; \$S monitor" & monitor=\$!
srun \$S train; echo "rc train=\$?"
wait \$monitor; echo "rc monitor=\$?"
srun --ddp=off \$S off; echo "rc off=\$?"
srun --ddp -N1 -n2 \$S eval; echo "rc eval=\$?"
srun --ddp-verbose -N1 -n1 true 2>&1 | sed 's/^/verbose: /'
JOB
chmod +x "$WORK/job.sh"
timeout 120 "$RUN" sbatch --wait --ddp-nodes=2 --ddp-gpus=2 -o "$WORK/out" "$WORK/job.sh" ||
  fail "the job failed: $(cat "$WORK/out")"
out=$(cat "$WORK/out")
echo "$out"
for step in setup stage train monitor off eval; do
  expect_contains "$out" "rc $step=0" "step $step exit code"
done
expect_plain "$out" setup 1
expect_plain "$out" stage 2
expect_plain "$out" monitor 2
expect_plain "$out" off 4
expect_ddp "$out" train 4
expect_ddp "$out" eval 2
[ "$(step_lines "$out" eval | grep -c 'host=n1')" = 2 ] || fail "eval should run on one node"
setup_cpus=$(step_lines "$out" setup | sed 's/.* cpus=//')
slurm_cpus=$(step_lines "$out" slurm_only | sed 's/.* cpus=//')
[ "$setup_cpus" = "$slurm_cpus" ] ||
  fail "a plain step lost Slurm's CPU binding: $setup_cpus, Slurm alone gives $slurm_cpus"
expect_contains "$out" "verbose: srun: spank_ddp: a plain step: it runs 1 task on 1 node, the job's DDP shape is 4 tasks on 2 nodes" \
  "--ddp-verbose says why a step is plain"

# salloc: the steps a user starts by hand inside the allocation follow the same rule.
out=$(timeout 120 "$RUN" salloc --ddp-nodes=2 --ddp-gpus=2 bash -c \
  "srun -N1 -n1 $WORK/show.sh setup && srun $WORK/show.sh train" 2>&1) || fail "salloc: $out"
expect_plain "$out" setup 1
expect_ddp "$out" train 4

# A step that alone differs from the job's shape (more tasks than the job holds) is still held to
# it, and the message names the step's fix, not the cli_filter's.
cat >"$WORK/bigger.sh" <<JOB
#!/bin/bash
srun -n8 --overcommit true
JOB
chmod +x "$WORK/bigger.sh"
timeout 120 "$RUN" sbatch --wait --ddp-nodes=2 --ddp-gpus=2 -o "$WORK/bigger.out" "$WORK/bigger.sh" &&
  fail "a step of 8 tasks in a 4-task DDP job ran: $(cat "$WORK/bigger.out")"
out=$(cat "$WORK/bigger.out")
expect_contains "$out" "this step alone differs: run it as a plain step with srun --ddp=off, or as a DDP step of its own shape with srun --ddp" \
  "step-only shape error"
case "$out" in *cli_filter*) fail "the job has its shape, yet the message advises the cli_filter: $out" ;; esac

# The cli_filter refuses a GPU request that contradicts --ddp-gpus, before anything is submitted.
jobs_before=$("$RUN" squeue -h -t all -o %i | sort)
out=$(run_expect_failure "--gres=gpu:1" "$RUN" sbatch --ddp-gpus=2 --gres=gpu:1 --wrap true)
expect_contains "$out" "--ddp-gpus=2 conflicts with --gres=gpu:1" "gres conflict"
out=$(run_expect_failure "--gpus-per-task=2" "$RUN" sbatch --ddp-gpus=2 --gpus-per-task=2 --wrap true)
expect_contains "$out" "conflicts with --gpus-per-task=2" "gpus-per-task conflict"
out=$(run_expect_failure "--gpus=3" "$RUN" sbatch --ddp-gpus=2 --gpus=3 --wrap true)
expect_contains "$out" "conflicts with --gpus=3" "gpus conflict"
jobs_after=$("$RUN" squeue -h -t all -o %i | sort)
[ -z "$(comm -13 <(echo "$jobs_before") <(echo "$jobs_after"))" ] ||
  fail "a refused request still submitted a job"
# A matching --gres is the same request, not a conflict.
out=$(timeout 60 "$RUN" srun --ddp-nodes=2 --ddp-gpus=2 --gres=gpu:2 "$WORK/show.sh" gres 2>&1) ||
  fail "--gres=gpu:2 with --ddp-gpus=2: $out"
expect_ddp "$out" gres 4
echo "PASS: helper steps plain, training and evaluation DDP, salloc alike, clear shape and GPU errors"
