#!/bin/bash
# What each GPU lever of ddp-cifar100 is worth, measured side by side in one run on one GPU: the
# training step captured in a CUDA graph (--cuda-graph) and the fused batch norm + ReLU + dropout +
# residual kernels (--gpu-fusion), each on and off, at each precision, on the same synthetic data,
# model and batch. Prints images/s (mean of the epochs after the first, which pays for cuDNN's
# autotuning and the capture), the TFLOP/s by the trainer's count with its share of the GPU's peak,
# and each run's validation accuracy by epoch.
#   bench/gpu_levers.sh [EPOCHS=3] [BATCH=256]
# Environment: PRECISIONS (default "fp16 bf16"), TRAIN_SAMPLES (default 25600), TEST_SAMPLES
#   (2560), CONFIGS (graph,fusion pairs; default "off,off on,off off,on on,on"), BUILD_DIR,
#   PEAK_TFLOPS, LOG_DIR (keep each run's output there).
# The multi-tensor SGD and the host-sync-free input pipeline have no switch: they are in every run.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD_DIR:-$ROOT/build}
TRAINER=$BUILD/trainer/ddp-cifar100
SYNTH=$BUILD/trainer/data/cifar-synth
for f in "$TRAINER" "$SYNTH"; do [ -x "$f" ] || { echo "build first (missing $f)" >&2; exit 1; }; done
nvidia-smi -L >/dev/null 2>&1 || { echo "gpu_levers: no GPU (nvidia-smi -L failed)" >&2; exit 1; }
EPOCHS=${1:-3} BATCH=${2:-256}
PRECISIONS=${PRECISIONS:-fp16 bf16}
CONFIGS=${CONFIGS:-off,off on,off off,on on,on}
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
# shellcheck source=bench/peak.sh
source "$ROOT/bench/peak.sh"

work=$(mktemp -d /tmp/ddp-levers.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$SYNTH" --out "$work/data" --train "${TRAIN_SAMPLES:-25600}" --test "${TEST_SAMPLES:-2560}" \
  --seed 1 >/dev/null
[ -z "${LOG_DIR:-}" ] || mkdir -p "$LOG_DIR"

printf '%-5s %-10s %-10s %12s %9s %7s  %s\n' precision "cuda-graph" "gpu-fusion" "images/s" \
  "TFLOP/s" "% peak" "validation accuracy by epoch"
for precision in $PRECISIONS; do
  peak=${PEAK_TFLOPS:-$(peak_of "$gpu_name" "$precision")}
  for config in $CONFIGS; do
    graph=${config%,*} fusion=${config#*,}
    log=$work/run.log
    env -i PATH="$PATH" HOME="$work" ${LD_LIBRARY_PATH:+LD_LIBRARY_PATH="$LD_LIBRARY_PATH"} \
      RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 \
      MASTER_PORT=$(( 20000 + RANDOM % 9000 )) \
      "$TRAINER" --data-dir "$work/data" --batch-size "$BATCH" --epochs "$EPOCHS" \
      --base-lr 0.02 --precision "$precision" --cuda-graph "$graph" --gpu-fusion "$fusion" \
      >"$log" 2>&1 || { echo "failed: $precision graph $graph fusion $fusion" >&2; tail -n 20 "$log" >&2; continue; }
    [ -z "${LOG_DIR:-}" ] || cp "$log" "$LOG_DIR/levers-$precision-graph-$graph-fusion-$fusion.log"
    gflop=$(sed -n 's/^Model: .* \([0-9.]*\) GFLOP per trained image$/\1/p' "$log")
    ips=$(grep 'Epoch Throughput' "$log" | awk 'NR > 1 { s += $3; n++ } END { print (n ? s / n : 0) }')
    curve=$(sed -n 's/^Validation Loss: .*, Validation Accuracy: \([0-9.]*\)$/\1/p' "$log" | paste -sd' ')
    awk -v p="$precision" -v g="$graph" -v f="$fusion" -v i="$ips" -v gf="$gflop" -v pk="$peak" \
      -v c="$curve" 'BEGIN {
      t = i * gf / 1000
      printf "%-9s %-10s %-10s %12.1f %9.1f %7s  [%s]\n", p, g, f, i, t,
             pk == "" ? "-" : sprintf("%.1f%%", 100 * t / pk), c
    }'
  done
done
echo "GPU: $gpu_name; global batch $BATCH, ${TRAIN_SAMPLES:-25600} images, epochs 2..$EPOCHS"
