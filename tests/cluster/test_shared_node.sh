#!/bin/bash
# A node shared by several jobs, bound by task/affinity alone (CR_Core, no cgroup cpuset): there
# slurmstepd's own affinity is the whole node, so only Slurm's core ids say which CPUs a step
# holds. Concurrent --ddp jobs must run on disjoint CPUs, each exactly on what Slurm granted it
# (the job's CPU_IDs, and what the same job gets without --ddp); GPUs stay within each step; and
# where slurm.conf's layout is not the hardware's, tasks keep Slurm's binding and are told why.
# CTest runs it under task/affinity alone, and on cgroup-confined nodes (LAB_CGROUP=1: task/cgroup,
# ConstrainCores and ConstrainDevices), where each job's GPUs are also the only ones it may open.
source "$(dirname "$0")/testlib.sh"
# shellcheck source=lab-env.sh
source "$TESTS_DIR/lab-env.sh"

ncpu=$(nproc --all)
[ "$ncpu" -ge 2 ] || { echo "SKIP: a shared node needs 2 CPUs at least, this machine has $ncpu"; exit 77; }
# The strict check (the plugin pins each task itself, DDP_CPUS = Slurm's grant) needs the lab's
# advertised layout (1 socket, $ncpu cores, 1 thread) to be the hardware's: no SMT, and OS CPU i
# on core i, so that Slurm's CPU_IDs are OS CPU numbers.
layout_matches=yes
[ "$(lscpu -p=CORE | grep -vc '^#')" = "$(lscpu -p=CORE | grep -v '^#' | sort -u | wc -l)" ] ||
  layout_matches=no
while IFS=, read -r cpu core; do
  [ "$cpu" = "$core" ] || layout_matches=no
done < <(lscpu -p=CPU,CORE | grep -v '^#')

restore() { "$TESTS_DIR/up.sh" >/dev/null 2>&1 || true; }
trap 'restore; rm -rf "$WORK"' EXIT
lab() { LAB_CPUS=$1 "$TESTS_DIR/up.sh" >"$WORK/up.log" 2>&1 || fail "lab with LAB_CPUS=$1: $(tail -5 "$WORK/up.log")"; }

# Each task reports its CPUs, then waits until the test has seen every job running (so all of
# them hold their CPUs at once) and has read their CPU_IDs.
cat >"$WORK/show.sh" <<'SHOW'
#!/bin/bash
dir=$(dirname "$0")
echo "pin job=$SLURM_JOB_ID rank=${RANK-$SLURM_PROCID} allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status) DDP_CPUS=${DDP_CPUS-unset} gpus=${SLURM_STEP_GPUS-none} cvd=${CUDA_VISIBLE_DEVICES-unset} $("$GPU_ACCESS" "$LAB_GPU_DIR" | cut -d' ' -f4-)"
touch "$dir/ready.$SLURM_JOB_ID.$SLURM_PROCID"
for _ in $(seq 300); do [ -e "$dir/go" ] && exit 0; sleep 0.1; done
echo "timeout: not released" >&2
exit 1
SHOW
chmod +x "$WORK/show.sh"
export GPU_ACCESS=$PROGRAMS/gpu_access.sh LAB_GPU_DIR=$LAB_DIR/dev/n1

# cpu_ids JOB: the job's CPU_IDs on n1, expanded to one number a line.
expand() { tr ',' '\n' <<<"$1" | awk -F- 'NF { for (i = $1; i <= ($2 == "" ? $1 : $2); i++) print i }'; }
cpu_ids() {
  expand "$("$RUN" scontrol show job -d "$1" | sed -n 's/.* CPU_IDs=\([^ ]*\).*/\1/p' | head -1)"
}

# concurrent NAME JOBS TASKS SRUN_ARGS...: JOBS jobs at once on n1, each of TASKS tasks; leaves
# the task lines of each job in $WORK/NAME.JOB.lines, its CPU_IDs in $WORK/NAME.JOB.ids and all
# output (warnings included) in $WORK/NAME.out.
concurrent() {
  local name=$1 jobs=$2 tasks=$3 j i pids=()
  shift 3
  rm -f "$WORK"/ready.* "$WORK/go"
  for ((j = 0; j < jobs; j++)); do
    timeout 60 "$RUN" srun -N1 -w n1 "$@" "$WORK/show.sh" >"$WORK/$name.$j.raw" 2>&1 &
    pids+=($!)
  done
  for ((i = 0; i < 150; i++)); do
    [ "$(find "$WORK" -maxdepth 1 -name 'ready.*' | wc -l)" -ge $((jobs * tasks)) ] && break
    sleep 0.1
  done
  [ "$(find "$WORK" -maxdepth 1 -name 'ready.*' | wc -l)" -ge $((jobs * tasks)) ] ||
    { touch "$WORK/go"; wait; fail "$name: the $jobs jobs did not all run at once: $(cat "$WORK/$name".*.raw)"; }
  for ((j = 0; j < jobs; j++)); do
    wait_for_line "$WORK/$name.$j.raw" '^pin ' 10 || fail "$name: job $j printed nothing"
    job=$(field "$(grep -m1 '^pin ' "$WORK/$name.$j.raw")" job)
    cpu_ids "$job" >"$WORK/$name.$j.ids"
  done
  touch "$WORK/go"
  for pid in "${pids[@]}"; do wait "$pid" || fail "$name: srun failed: $(cat "$WORK/$name".*.raw)"; done
  for ((j = 0; j < jobs; j++)); do grep '^pin ' "$WORK/$name.$j.raw" >"$WORK/$name.$j.lines"; done
  cat "$WORK/$name".*.raw >"$WORK/$name.out"
  cat "$WORK/$name.out"
}

# check NAME JOBS PINNED: every job's tasks run inside its CPU_IDs and cover them, jobs and the
# tasks of a job are disjoint, and (PINNED=yes) each task's CPUs are its DDP_CPUS.
check() {
  local name=$1 jobs=$2 pinned=$3 j line allowed
  : >"$WORK/$name.all"
  for ((j = 0; j < jobs; j++)); do
    : >"$WORK/$name.$j.cpus"
    while read -r line; do
      allowed=$(field "$line" allowed)
      if [ "$pinned" = yes ]; then
        [ "$allowed" = "$(field "$line" DDP_CPUS)" ] || fail "$name: task not pinned as planned: $line"
      else
        [ "$(field "$line" DDP_CPUS)" = unset ] || fail "$name: task pinned by the plugin: $line"
      fi
      expand "$allowed" >>"$WORK/$name.$j.cpus"
    done <"$WORK/$name.$j.lines"
    sort -n "$WORK/$name.$j.cpus" >"$WORK/$name.$j.sorted"
    [ -z "$(sort -n "$WORK/$name.$j.sorted" | uniq -d)" ] ||
      fail "$name: tasks of job $j share CPUs: $(cat "$WORK/$name.$j.lines")"
    if [ "$layout_matches" = yes ]; then
      sort -n "$WORK/$name.$j.ids" | cmp -s - "$WORK/$name.$j.sorted" ||
        fail "$name: job $j runs on CPUs $(paste -sd, "$WORK/$name.$j.sorted"), Slurm granted CPU_IDs $(paste -sd, "$WORK/$name.$j.ids")"
    fi
    cat "$WORK/$name.$j.sorted" >>"$WORK/$name.all"
  done
  [ -z "$(sort -n "$WORK/$name.all" | uniq -d)" ] || fail "$name: concurrent jobs share CPUs: $(cat "$WORK/$name".*.lines)"
}

# same_as_plain NAME PLAIN JOBS: the --ddp jobs ran on the CPUs the plain jobs got from Slurm
# (as a set of per-job CPU sets: which job Slurm serves first is up to the race of the sruns).
same_as_plain() {
  local j a b
  a=$(for ((j = 0; j < $3; j++)); do paste -sd, "$WORK/$1.$j.sorted"; done | sort)
  b=$(for ((j = 0; j < $3; j++)); do paste -sd, "$WORK/$2.$j.sorted"; done | sort)
  [ "$a" = "$b" ] || fail "$1: the jobs ran on CPUs [$(echo $a)] but without --ddp on [$(echo $b)]"
}

half=$((ncpu / 2))
lab "$ncpu"
pinned=$layout_matches
echo "== $ncpu CPUs, layout as advertised: $layout_matches"

concurrent plain1 2 1 -n1 -c1 >/dev/null
check plain1 2 no
concurrent ddp1 2 1 --ddp -n1 -c1
check ddp1 2 "$pinned"
same_as_plain ddp1 plain1 2

concurrent ddp2 "$half" 1 --ddp -n1 -c2
check ddp2 "$half" "$pinned"

concurrent ntasks "$half" 2 --ddp --ntasks-per-node=2 -c1
check ntasks "$half" "$pinned"

concurrent none 2 1 --ddp --ddp-bind=none -n1 -c1
check none 2 no

# GPUs stay within each step: two 1-GPU jobs on one node get different GPUs, and every
# CUDA_VISIBLE_DEVICES names only the step's own (the lab's fake GPUs are not in hwloc's view,
# so the plan warns about them; the CPUs are still the grant's).
concurrent gpus 2 1 --ddp -n1 -c1 --gpus=1
check gpus 2 "$pinned"
g0=$(field "$(cat "$WORK/gpus.0.lines")" gpus)
g1=$(field "$(cat "$WORK/gpus.1.lines")" gpus)
[ "$g0" != none ] && [ "$g1" != none ] && [ "$g0" != "$g1" ] || fail "the two jobs' GPUs: '$g0' and '$g1'"
for j in 0 1; do
  line=$(cat "$WORK/gpus.$j.lines")
  if lab_confined; then
    # The job's one GPU is cuda:0 in its device cgroup, and the only one it may open.
    [ "$(field "$line" cvd)" = 0 ] && [ "$(field "$line" usable)" = "$(field "$line" gpus)" ] ||
      fail "under ConstrainDevices, a job's GPU must be its only one, as cuda:0: $line"
  else
    [ "$(field "$line" cvd)" = "$(field "$line" gpus)" ] || fail "CUDA_VISIBLE_DEVICES outside the step: $line"
  fi
done
if lab_confined; then
  # A node may not advertise more cores than its cpuset holds (up.sh refuses): the rest is moot.
  echo "PASS: concurrent --ddp jobs on one cgroup-confined node run exactly on the CPUs and GPUs Slurm granted each"
  exit 0
fi

# slurm.conf advertises more cores than the machine has (the lab's default): a job on a core id
# beyond the hardware keeps Slurm's binding, and its first task says why.
lab $((ncpu + 2))
concurrent over_plain $((ncpu + 1)) 1 -n1 -c1 >/dev/null
concurrent over $((ncpu + 1)) 1 --ddp -n1 -c1
# (Under task/cgroup with ConstrainCores=yes slurmstepd's cpuset is the grant itself, and the
# plugin pins within it: then no task is left to Slurm's binding and there is nothing to say.)
if [ "${LAB_TASK_PLUGIN:-task/affinity}" = task/affinity ] || grep -q 'DDP_CPUS=unset' "$WORK/over.out"; then
  expect_contains "$(cat "$WORK/over.out")" "but hwloc finds $(lscpu -p=CORE | grep -v '^#' | sort -u | wc -l) core(s)" "the fallback warning"
  expect_contains "$(cat "$WORK/over.out")" "each task keeps the CPUs Slurm bound it to" "the fallback warning"
fi
for ((j = 0; j <= ncpu; j++)); do
  for name in over over_plain; do
    : >"$WORK/$name.$j.cpus"
    while read -r line; do expand "$(field "$line" allowed)" >>"$WORK/$name.$j.cpus"; done <"$WORK/$name.$j.lines"
    sort -n "$WORK/$name.$j.cpus" >"$WORK/$name.$j.sorted"
  done
done
same_as_plain over over_plain $((ncpu + 1))
echo "PASS: concurrent --ddp jobs on one node run exactly on the CPUs and GPUs Slurm granted each"
