#!/bin/bash
# Bad input fails before anything runs, naming the option, the value and what is allowed; a step
# whose allocation lacks the asked shape fails with what was asked, what was given and the fix.
source "$(dirname "$0")/testlib.sh"

# Job ids, not a count: finished jobs of earlier tests may age out (MinJobAge) meanwhile.
jobs_before=$("$RUN" squeue -h -t all -o %i | sort)

out=$(run_expect_failure "sbatch --ddp-nodes=0" "$RUN" sbatch --ddp-nodes=0 --wrap true)
expect_contains "$out" "--ddp-nodes='0' is out of range; allowed: 1..100000" "zero nodes"
out=$(run_expect_failure "sbatch --ddp-nodes=-2" "$RUN" sbatch --ddp-nodes=-2 --wrap true)
expect_contains "$out" "--ddp-nodes='-2' is not a whole number" "negative nodes"
out=$(run_expect_failure "salloc --ddp-gpus=two" "$RUN" salloc --ddp-gpus=two true)
expect_contains "$out" "--ddp-gpus='two' is not a whole number; give a number in 1..64" "text gpus"
out=$(run_expect_failure "srun --ddp-gpus=1000" "$RUN" srun --ddp-gpus=1000 true)
expect_contains "$out" "--ddp-gpus='1000' is out of range; allowed: 1..64" "absurd gpus"
out=$(run_expect_failure "srun --ddp-nodes=huge" "$RUN" srun --ddp-nodes=99999999999999999999999 true)
expect_contains "$out" "is too large; allowed: 1..100000" "overflowing nodes"
out=$(run_expect_failure "srun --ddp-backend=mpi" "$RUN" srun --ddp-backend=mpi true)
expect_contains "$out" "--ddp-backend='mpi' is not a backend; allowed: nccl (GPUs) or gloo (CPUs)" "backend"
out=$(run_expect_failure "srun --ddp-port=70000" "$RUN" srun --ddp-port=70000 true)
expect_contains "$out" "--ddp-port (or 'auto')='70000' is out of range; allowed: 1..65535" "port"
out=$(run_expect_failure "srun --ddp-port=0" "$RUN" srun --ddp-port=0 true)
expect_contains "$out" "allowed: 1..65535" "port zero"
out=$(run_expect_failure "srun --ddp-profile=../x" "$RUN" srun --ddp-profile=../../etc/passwd true)
expect_contains "$out" "(a name, not a path)" "profile path"
out=$(run_expect_failure "srun --ddp-bind=spread" "$RUN" srun --ddp-bind=spread true)
expect_contains "$out" "--ddp-bind='spread' is not a binding" "bind"

# The cli_filter refuses contradicting flags instead of silently picking one.
out=$(run_expect_failure "sbatch -N3 --ddp-nodes=2" "$RUN" sbatch -N3 --ddp-nodes=2 --wrap true)
expect_contains "$out" "--ddp-nodes=2 conflicts with --nodes=3" "conflicting node counts"

jobs_after=$("$RUN" squeue -h -t all -o %i | sort)
new_jobs=$(comm -13 <(echo "$jobs_before") <(echo "$jobs_after"))
[ -z "$new_jobs" ] || fail "a rejected command still submitted a job: $new_jobs"

# What the cli_filter must not refuse: leading zeros are the same count (as the plugin reads it),
# and a --gpus-per-node of the same count, typed, is the same request (Slurm then judges the type,
# which the lab's GPUs do not have).
out=$("$RUN" sbatch --test-only --ddp-nodes=0000000001 --ddp-gpus=2 --wrap true 2>&1) ||
  fail "--ddp-nodes=0000000001 was refused: $out"
expect_contains "$out" "using 2 processors on nodes n1" "leading zeros"
out=$("$RUN" sbatch --test-only --ddp-nodes=1 --ddp-gpus=2 --gpus-per-node=gpu:a100:2 --wrap true 2>&1 || true)
[[ $out != *"conflicts with"* ]] || fail "a typed --gpus-per-node of the same count was refused: $out"
# Slurm's own refusal of a type no node has, in the words of its release (22.05's, 24.11's).
[[ $out == *"Invalid generic resource"* || $out == *"Requested node configuration is not available"* ]] ||
  fail "the type did not reach Slurm: $out"
# A job submitted from inside a DDP allocation takes only the --ddp-* options given to it, not
# the allocation's (Slurm hands those to the steps through the environment).
out=$("$RUN" salloc --ddp-nodes=2 --ddp-gpus=2 sbatch --test-only --wrap true 2>&1)
expect_contains "$out" "using 1 processors on nodes" "a job from inside a job"

# Inside an allocation the shape is fixed: the plugin fails the step and says why.
# A problem every node finds alike is said once per step (node 0's first task), one of a node's
# own once per node: not once per task.
out=$(run_expect_failure "step on fewer nodes than asked" \
  "$RUN" salloc -N2 -n4 srun -N2 -n4 --ddp-nodes=3 true)
expect_contains "$out" "--ddp-nodes=3 asked for 3 nodes, but this step runs on 2 nodes" "shape: nodes"
expect_contains "$out" "--nodes=3 --ntasks-per-node=G --gpus-per-node=G" "shape: fix"
[ "$(grep -c 'asked for 3 nodes' <<<"$out")" = 1 ] || fail "a step-wide error was said more than once: $out"
out=$(run_expect_failure "step without GPUs" "$RUN" salloc -N1 -n2 srun -n2 --ddp-gpus=2 true)
expect_contains "$out" "--ddp-gpus=2 asked for 2 GPUs per node, but Slurm gave this step 0 GPUs on node n1" \
  "shape: gpus"
[ "$(grep -c 'asked for 2 GPUs per node' <<<"$out")" = 1 ] || fail "a node's error was said by every task: $out"
out=$(run_expect_failure "nccl without GPUs" "$RUN" srun -N1 -n2 --ddp-backend=nccl true)
expect_contains "$out" "the nccl backend needs one GPU per task" "nccl without GPUs"

# The nodes are still healthy after all of that.
"$RUN" srun -N2 -n2 true || fail "the cluster no longer runs steps"
echo "PASS: every bad value and shape was refused with a clear message"
