#!/bin/bash
# The failure watch at scale on this machine: the real ddp-watch as the head node of a step of
# N nodes, against N-1 simulated member nodes (bench/watch_sim.cpp: the real member logic and
# datagrams, one UDP socket each, on loopback). For each size and time-out it prints the head's
# CPU share and datagrams per second while nothing fails, how soon every member heard the head,
# when the verdict came after a lost node's last beat, and how long the end took to reach every
# other member.
#
#   bench/watch_scale.sh [BUILD_DIR] [NODES...]      (default: build, 100 1000 2000)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
shift || true
SIZES=("${@:-100 1000 2000}")
SIM=$BUILD/bench/ddp-watch-sim
WATCH=$BUILD/watch/ddp-watch
[ -x "$SIM" ] && [ -x "$WATCH" ] || { echo "build ddp-watch-sim and ddp-watch first ($BUILD)" >&2; exit 2; }
# The head asks Slurm to end the step when a node is lost; there is no Slurm here.
export SLURM_CONF=/dev/null
printf '%-6s %-8s %-7s %-10s %-9s %-12s %-14s %-12s\n' NODES TIMEOUT BEAT "ALL HEARD" "HEAD CPU" "DGRAMS IN/S" "VERDICT AFTER" "END TO ALL"
for n in ${SIZES[*]}; do
  for timeout in 45 10; do
    json=$("$SIM" --watch "$WATCH" --nodes "$n" --timeout "$timeout" --quiet 20 2>/dev/null) ||
      { echo "FAIL at $n nodes, time-out $timeout: $json" >&2; exit 1; }
    "${PYTHON:-/usr/bin/python3}" -c '
import json, sys
j = json.loads(sys.argv[1])
print("%-6d %-8s %-7s %-10s %-9s %-12d %-14s %-12s" % (j["nodes"], "%d s" % j["timeout_s"],
      "%.1f s" % j["beat_interval_s"], "%.2f s" % j["all_heard_s"], "%.2f%%" % j["head_cpu_percent"],
      j["datagrams_to_head_per_s"], "%.2f s" % j["verdict_after_last_beat_s"],
      "%.0f ms" % (1000 * j["end_all_within_s"])))' "$json"
  done
done
