#!/bin/bash
# libddp's rendezvous and ddp-preflight's exchange from 64 to 8,192 ranks on this machine: the real
# Rendezvous::meet of every rank, rank 0 (its TCPStore server) in a process of its own and the
# others threads of a few processes (bench/rendezvous_sim.cpp), 8 to a simulated node. For each
# world size it prints the time to a completed rendezvous (from every rank's start at once, as a
# job's ranks start on their own nodes: each process loads LibTorch and starts its ranks' threads
# before that), rank 0's open descriptors and CPU
# seconds, the time of ddp-preflight's exchange after it (checks to rank 0, orders back, links to
# rank 0, the verdict to all: preflight/exchange.cpp), and the bytes of error text per
# rank when one rank never comes (the rendezvous then waits its time-out: here a few times the
# time a complete one took); last the growth exponent of the rendezvous time from 512 ranks to
# the largest. Then libddp's peer watch on every rank (the simulator's --watch): rank 0's
# descriptors with every watch connected (what a job's rank 0 holds), the requests per second its
# store answers while nothing fails, and the time until every rank's watch named a rank that was
# killed (every rank asks, as after a failed collective) or stopped (nobody asks: the watch finds
# the silence after DDP_PEER_TIMEOUT, 10 s here). Exits 1 when a goal is missed:
#   8,192 ranks meet within 10 s; their preflight exchange takes at most 30 s; the error text of
#   one missing rank among 8,192 is under 2 KB on every rank; the time grows no faster than
#   R log R from 512 ranks on; rank 0 holds at most R + 64 descriptors; every rank names a killed
#   rank among 8,192 within 15 s, and a stopped one within DDP_PEER_TIMEOUT + 10 s.
#
#   bench/scale.sh [MAX_RANKS] [BUILD_DIR]      (default: 8192, build)
#
# With DDP_SCALE_ROOT=DIR, a root tests/platform/run.sh made (/var/cache/slurm-ddp-platform/sid),
# the simulator of BUILD_DIR inside that root runs there instead (as root: a private mount
# namespace and chroot), with that release's LibTorch and store server (sid: 2.14, one connection
# per client), on this machine's cores:
#   DDP_SCALE_ROOT=/var/cache/slurm-ddp-platform/sid bench/scale.sh 8192 /var/tmp/ddp-build
# Each simulated node's LOCAL_RANK 0 relays its node's store requests as libddp does
# (runtime/src/store_relay.hpp; relayed=1 in the line), unless DDP_STORE_RELAY=0.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MAX=${1:-8192}
BUILD=${2:-$ROOT/build}
SIM=$BUILD/bench/ddp-rendezvous-sim
PY=${PYTHON:-/usr/bin/python3}
PEER_TIMEOUT=10
IN_ROOT=${DDP_SCALE_ROOT:-}
[ -z "$IN_ROOT" ] || [[ $BUILD == /* ]] ||
  { echo "with DDP_SCALE_ROOT, BUILD_DIR is a path inside that root, from its /: not $BUILD" >&2; exit 2; }
[ -x "$IN_ROOT$SIM" ] || { echo "build ddp-rendezvous-sim first: cmake --build $BUILD --target ddp-rendezvous-sim${IN_ROOT:+ (inside $IN_ROOT)}" >&2; exit 2; }
case ${DDP_STORE_RELAY:-} in
  '') RELAY=() ;;
  1) RELAY=(--relay) ;;
  0) RELAY=(--no-relay) ;;
  *) echo "DDP_STORE_RELAY=$DDP_STORE_RELAY: use 1, 0, or unset it (libddp's default)" >&2; exit 2 ;;
esac
sim() {
  set -- "$@" "${RELAY[@]}"
  if [ -z "$IN_ROOT" ]; then "$SIM" "$@"; return; fi
  # The mounts end with the namespace: nothing of this machine's changes.
  unshare --mount --propagation private -- bash -c \
    'root=$1; shift; mount -t proc proc "$root/proc" && mount --rbind /dev "$root/dev" && exec chroot "$root" "$@"' \
    _ "$IN_ROOT" "$SIM" "$@"
}
# Thousands of threads: small stacks (glibc sizes a thread's stack by this limit). The simulator
# raises its open-file limit to the hard limit itself, and says what to raise when that is too low.
ulimit -s 512
ERRORS=$(mktemp)
trap 'rm -f "$ERRORS"' EXIT

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }

declare -A seconds
missed=()
largest=0
for R in 64 512 4096 8192; do
  [ "$R" -le "$MAX" ] || continue
  met=$(sim --ranks "$R" --timeout 300 2>"$ERRORS") || { cat "$ERRORS" >&2; echo "FAIL: the rendezvous of $R ranks: $met" >&2; exit 1; }
  t=$(field rendezvous_s "$met")
  fds=$(field rank0_fds "$met")
  cpu=$(field rank0_cpu_s "$met")
  relayed=$(field relayed "$met")
  wait_s=$("$PY" -c "import math,sys; print(max(5, math.ceil(3 * float(sys.argv[1]) + 3)))" "$t")
  checked=$(sim --ranks "$R" --preflight --timeout 300 2>"$ERRORS") ||
    { cat "$ERRORS" >&2; echo "FAIL: the preflight exchange of $R ranks: $checked" >&2; exit 1; }
  exchange=$(field preflight_exchange_s "$checked")
  missing=$((R / 2 + 3))
  failed=$(sim --ranks "$R" --missing "$missing" --timeout "$wait_s" 2>"$ERRORS") ||
    { cat "$ERRORS" >&2; echo "FAIL: $R ranks, rank $missing missing: $failed" >&2; exit 1; }
  bytes=$(field error_bytes_per_rank "$failed")
  # With the heartbeat rank 0 needs about twice the descriptors (LibTorch 1.13): a machine whose
  # hard limit cannot be raised (no CAP_SYS_RESOURCE) measures it only up to its limit.
  death=- silence=- requests=- setup=-
  killed=$(sim --ranks "$R" --watch kill --peer-timeout "$PEER_TIMEOUT" --timeout 600 2>"$ERRORS")
  case $? in
    0)
      stopped=$(sim --ranks "$R" --watch stop --peer-timeout "$PEER_TIMEOUT" --timeout 600 2>"$ERRORS") ||
        { cat "$ERRORS" >&2; echo "FAIL: $R ranks, one stopped: $stopped" >&2; exit 1; }
      death=$(field verdict_s "$killed")
      silence=$(field verdict_s "$stopped")
      fds=$(field rank0_fds "$stopped")
      requests=$(field rank0_requests_per_s "$stopped")
      setup=$(field watch_setup_s "$stopped") ;;
    2) missed+=("the heartbeat of $R ranks was not measured: $(cat "$ERRORS")") ;;
    *) cat "$ERRORS" >&2; echo "FAIL: $R ranks, one killed: $killed" >&2; exit 1 ;;
  esac
  echo "ranks=$R relayed=$relayed rendezvous_s=$t death_verdict_s=$death silence_verdict_s=$silence preflight_exchange_s=$exchange rank0_fds=$fds rank0_requests_per_s=$requests error_bytes_per_rank=$bytes rank0_cpu_s=$cpu watch_setup_s=$setup"
  seconds[$R]=$t
  largest=$R
  [ "$fds" -le $((R + 64)) ] || missed+=("rank 0 holds $fds descriptors at $R ranks, more than R + 64 = $((R + 64))")
  if [ "$R" -eq 8192 ]; then
    "$PY" -c "import sys; sys.exit(float(sys.argv[1]) > 10)" "$t" || missed+=("8192 ranks took $t s to meet, more than 10 s")
    "$PY" -c "import sys; sys.exit(float(sys.argv[1]) > 30)" "$exchange" ||
      missed+=("the preflight exchange of 8192 ranks took $exchange s, more than 30 s")
    [ "$bytes" -lt 2048 ] || missed+=("the error text of one missing rank among 8192 is $bytes bytes, not under 2 KB")
    if [ "$death" != - ]; then
      "$PY" -c "import sys; sys.exit(float(sys.argv[1]) > 15)" "$death" ||
        missed+=("every rank named a killed rank among 8192 after $death s, more than 15 s")
      "$PY" -c "import sys; sys.exit(float(sys.argv[1]) > float(sys.argv[2]) + 10)" "$silence" "$PEER_TIMEOUT" ||
        missed+=("every rank named a stopped rank among 8192 after $silence s, more than DDP_PEER_TIMEOUT ($PEER_TIMEOUT s) + 10 s")
    fi
  fi
done
if [ "$largest" -gt 512 ]; then
  # R log R from 512 to the largest R has the exponent log(R2 log R2 / (R1 log R1)) / log(R2 / R1).
  read -r exponent bound < <("$PY" -c '
import math, sys
r1, t1, r2, t2 = 512, float(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
ratio = math.log(r2 / r1)
print("%.2f %.2f" % (math.log(max(t2, 1e-3) / max(t1, 1e-3)) / ratio,
                     math.log(r2 * math.log(r2) / (r1 * math.log(r1))) / ratio))' "${seconds[512]}" "$largest" "${seconds[$largest]}")
  echo "growth exponent of rendezvous_s from 512 to $largest ranks: $exponent (R log R: $bound)"
  "$PY" -c "import sys; sys.exit(float(sys.argv[1]) > float(sys.argv[2]))" "$exponent" "$bound" ||
    missed+=("the rendezvous time grows with exponent $exponent from 512 to $largest ranks, faster than R log R ($bound)")
fi
for m in "${missed[@]}"; do echo "GOAL MISSED: $m"; done
[ ${#missed[@]} -eq 0 ]
