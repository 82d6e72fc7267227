#!/bin/bash
# Step time with gradient buckets overlapped with backward vs all-reduce after backward, and the
# share of each step spent waiting on communication, measured side by side in one run on this
# machine: RANKS processes on Gloo over loopback (torchrun-style environment).
#   bench/grad_overlap.sh [RANKS=2] [STEPS=30] [WIDTH=1024] [DEPTH=6] [BUCKET_BYTES=4194304]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BENCH_BIN:-$ROOT/build/bench/ddp-bench-grad-sync}
[ -x "$BIN" ] || { echo "build first: scripts/setup.sh (missing $BIN)" >&2; exit 1; }
RANKS=${1:-2}
shift || true
port=$(( 20000 + RANDOM % 9000 ))
pids=()
for ((r = 0; r < RANKS; r++)); do
  env -i PATH=/usr/bin:/bin RANK=$r LOCAL_RANK=$r WORLD_SIZE="$RANKS" LOCAL_WORLD_SIZE="$RANKS" \
    MASTER_ADDR=127.0.0.1 MASTER_PORT=$port GLOO_SOCKET_IFNAME=lo OMP_NUM_THREADS=1 \
    "$BIN" "$@" &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
exit "$status"
