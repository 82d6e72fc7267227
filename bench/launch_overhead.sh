#!/bin/bash
# Launch overhead of spank_ddp: `srun -N2 -n4 true` on the test cluster without the plugin, with
# the plugin loaded but not asked for, with --ddp (the plugin plans and exports the contract,
# reading the node facts file), and with --ddp and node_facts_dir=off (hwloc loads the topology
# in every step, as before the node facts file), and with --ddp but --ddp-watch=off (what the
# failure watch, on by default, costs: two pipes, a helper started from local task 0, a line
# per task). Runs are interleaved (A B C D E A B C D E ...) so drift on the machine hits all
# alike; prints medians and ratios. Goal: --ddp within 2% of no plugin.
#
#   bench/launch_overhead.sh [RUNS]      (default 40; the test cluster must be up: tests/cluster/up.sh)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/tests/cluster/lab-env.sh"
RUN="$ROOT/tests/cluster/run.sh"
RUNS=${1:-40}
[[ $RUNS =~ ^[0-9]+$ ]] && ((RUNS >= 3)) || { echo "RUNS must be a number >= 3" >&2; exit 2; }

conf="$LAB_PLUGSTACK_DIR/ddp.conf"
[ -f "$conf" ] || { echo "the lab has no spank_ddp configured ($conf); run up.sh with DDP_SPANK_PLUGIN" >&2; exit 2; }
saved=$(mktemp)
hwloc_each_step=$(mktemp)
cp "$conf" "$saved"
# slurmstepd reads plugstack.conf at every step, so this takes effect at the next one.
sed -E 's/ node_facts_dir=[^ ]*//; s/^(required [^ ]*)/\1 node_facts_dir=off/' "$saved" >"$hwloc_each_step"
trap 'cp "$saved" "$conf"; rm -f "$saved" "$hwloc_each_step"' EXIT

# One timed srun, in milliseconds (srun and slurmstepd re-read plugstack.conf on every step).
timed() {
  local start end
  start=$(date +%s%N)
  "$RUN" srun "$@" >/dev/null
  end=$(date +%s%N)
  echo $(( (end - start) / 1000 ))
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

declare -a off=() idle=() ddp=() hwloc=() unwatched=()
"$RUN" srun -N2 -n4 true  # warm-up: first step after start-up pays for caches
for ((i = 0; i < RUNS; i++)); do
  rm -f "$conf"
  off+=("$(timed -N2 -n4 true)")
  cp "$saved" "$conf"
  idle+=("$(timed -N2 -n4 true)")
  ddp+=("$(timed --ddp -N2 -n4 true)")
  unwatched+=("$(timed --ddp --ddp-watch=off -N2 -n4 true)")
  cp "$hwloc_each_step" "$conf"
  hwloc+=("$(timed --ddp -N2 -n4 true)")
  cp "$saved" "$conf"
done

m_off=$(printf '%s\n' "${off[@]}" | median)
m_idle=$(printf '%s\n' "${idle[@]}" | median)
m_ddp=$(printf '%s\n' "${ddp[@]}" | median)
m_hwloc=$(printf '%s\n' "${hwloc[@]}" | median)
m_unwatched=$(printf '%s\n' "${unwatched[@]}" | median)
awk -v o="$m_off" -v i="$m_idle" -v d="$m_ddp" -v h="$m_hwloc" -v u="$m_unwatched" -v n="$RUNS" 'BEGIN {
  printf "srun -N2 -n4 true, median of %d interleaved runs each (microseconds)\n", n
  printf "  without plugin            %9.0f\n", o
  printf "  plugin loaded, no --ddp   %9.0f   ratio %.3f\n", i, i / o
  printf "  plugin with --ddp         %9.0f   ratio %.3f   (goal <= 1.02)\n", d, d / o
  printf "  --ddp, --ddp-watch=off    %9.0f   ratio %.3f   (the failure watch costs %.3f)\n", u, u / o, d / u
  printf "  --ddp, hwloc every step   %9.0f   ratio %.3f   (node_facts_dir=off)\n", h, h / o
}'
