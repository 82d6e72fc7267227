# Sourced by test_retries.sh and test_retries_training.sh: a lab of four nodes, jobs of two that
# leave n4 out themselves (--exclude) and are submitted by user nobody (slurmctld lets the owner
# requeue a batch job and change its excluded nodes while it is pending), and what both check.
source "$(dirname "$0")/testlib.sh"
id nobody >/dev/null 2>&1 || { echo "SKIP: no user nobody"; exit 77; }
# The job's own user asks for the requeue: an unprivileged one, as on a real cluster (slurmctld
# lets the owner requeue a batch job and change its excluded nodes while it is pending).
chown nobody:"$(id -gn nobody)" "$WORK"
as_user() { (cd "$WORK" && "$RUN" setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"); }
restore() { "$TESTS_DIR/up.sh" >/dev/null 2>&1 || true; }
jobs=()
AT_LINK=true
cleanup() {
  local j
  eval "$AT_LINK" 2>/dev/null || true
  for j in ${jobs[@]+"${jobs[@]}"}; do "$RUN" scancel "$j" 2>/dev/null || true; done
  restore
  rm -rf "$WORK"
}
trap cleanup EXIT
LAB_NODES=4 "$TESTS_DIR/up.sh" >"$WORK/up.log" 2>&1 || fail "lab with four nodes: $(tail -5 "$WORK/up.log")"

# The node the job's rank 1 runs on: its second node (one rank per node).
second_node() { "$RUN" scontrol show hostnames "$(job_field "$1" NodeList)" | sed -n 2p; }
# Every job leaves n4 out itself: its own --exclude must stay excluded after a retry.
ranged() { "$RUN" scontrol show hostlist "$1"; }
submit() { as_user sbatch --parsable --ddp-nodes=2 --ddp-gpus=1 --exclude=n4 "$@"; }
# wait_count FILE PATTERN N: true once FILE has N lines matching PATTERN (within 60 s).
wait_count() {
  local i n
  for ((i = 0; i < 300; i++)); do
    n=$(grep -c -- "$2" "$1" 2>/dev/null) || true
    [ "${n:-0}" -ge "$3" ] && return 0
    sleep 0.2
  done
  return 1
}

# nodes_idle: requeues, a cut link and killed ranks leave every node idle: none drained or down.
nodes_idle() {
  local states
  for _ in $(seq 150); do
    states=$("$RUN" sinfo -h -N -o '%N %T' | sort -u)
    ! grep -qv ' idle$' <<<"$states" && return 0
    sleep 0.2
  done
  fail "nodes not idle after the jobs: $states"
}
