#!/bin/bash
# The failure watch at scale on this machine: the real ddp-watch as the head node of a step of
# N nodes, against N-1 simulated member nodes (bench/watch_sim.cpp: the real member logic and
# datagrams, one UDP socket each, on loopback). For each size and time-out it prints the head's
# CPU share and datagrams per second while nothing fails, how soon every member heard the head,
# when the verdict came after a lost node's last beat, and how long the end took to reach every
# other member; and the members' requests to slurmctld when the head is lost.
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
# Every rank (8 per node) of every member fails at once: one fail message per node, however many
# ranks; the datagrams each way and the head's CPU time until the end reached every member.
printf '\n%-6s %-7s %-14s %-15s %-16s %-9s %-12s\n' NODES RANKS "FAIL MESSAGES" "DGRAMS TO HEAD" "DGRAMS FROM HEAD" "HEAD CPU" "END TO ALL"
for n in ${SIZES[*]}; do
  json=$("$SIM" --watch "$WATCH" --nodes "$n" --timeout 10 --quiet 3 --all-fail 1 2>/dev/null) ||
    { echo "FAIL at $n nodes, every rank failing: $json" >&2; exit 1; }
  "${PYTHON:-/usr/bin/python3}" -c '
import json, sys
j = json.loads(sys.argv[1])
print("%-6d %-7d %-14d %-15d %-16d %-9s %-12s" % (j["nodes"], j["ranks_failed"], j["fail_messages_to_head"],
      j["fail_datagrams_to_head"], j["fail_datagrams_from_head"], "%.2f s" % j["fail_head_cpu_s"],
      "%.2f s" % j["fail_end_all_within_s"]))' "$json"
done
# The head stops (its node died, or it waits on slurmctld) while every member's ranks fail: the
# members that ask slurmctld themselves before the first request ended the step (2 s), in tiers by
# node index (member.hpp: alone_wait) and, side by side, all at once (the tier 0 s, as before).
printf '\n%-6s %-22s %-22s %-14s\n' NODES "REQUESTS (TIERS)" "REQUESTS (ALL AT ONCE)" "FIRST AFTER"
for n in ${SIZES[*]}; do
  tiers=$("$SIM" --watch "$WATCH" --nodes "$n" --timeout 45 --quiet 3 --head-lost 1 2>/dev/null) ||
    { echo "FAIL at $n nodes, the head lost: $tiers" >&2; exit 1; }
  flat=$("$SIM" --watch "$WATCH" --nodes "$n" --timeout 45 --quiet 3 --head-lost 1 --alone-tier-ms 0 2>/dev/null) ||
    { echo "FAIL at $n nodes, the head lost, no tiers: $flat" >&2; exit 1; }
  "${PYTHON:-/usr/bin/python3}" -c '
import json, sys
t, f = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print("%-6d %-22d %-22d %-14s" % (t["nodes"], t["slurmctld_requests"], f["slurmctld_requests"],
      "%.2f s" % t["first_request_after_s"]))' "$tiers" "$flat"
done
# One member's ranks fail 20 ms before every other's, its clock 50 ms ahead of the head's, every
# other clock up to 50 ms off, 1% of the datagrams lost each way: whether the verdict names that
# member's rank first, with the members' clock estimates (the beats' round trips) and without.
printf '\n%-6s %-26s %-26s\n' NODES "NAMES THE FIRST (ESTIMATE)" "NAMES THE FIRST (NONE)"
for n in ${SIZES[*]}; do
  skew=(--watch "$WATCH" --nodes "$n" --timeout 10 --quiet 6 --all-fail 1 --early-ms 20 --clock-offset-ms 50 --loss 0.01)
  with=$("$SIM" "${skew[@]}" 2>/dev/null) || { echo "FAIL at $n nodes, clocks off: $with" >&2; exit 1; }
  without=$("$SIM" "${skew[@]}" --no-clock-estimate 1 2>/dev/null || true)
  "${PYTHON:-/usr/bin/python3}" -c '
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print("%-6d %-26s %-26s" % (a["nodes"], a["verdict_names_first_counts_rest"], b["verdict_names_first_counts_rest"]))' "$with" "$without"
done
