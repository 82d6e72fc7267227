#!/bin/bash
# The main job: ddp-cifar100 trains the reference CIFAR-100 WideResNet recipe over 2 nodes x 2
# ranks of the built-in test cluster, launched by the plugin from one sbatch line (no torchrun).
# The lab has no real GPUs, so it trains on CPU with Gloo, on synthetic CIFAR-format data with
# learnable classes (no internet needed), at a small width. Brings the cluster up if needed and
# leaves it up for more jobs (tests/cluster/down.sh stops it).
#   sudo scripts/main-job.sh [extra ddp-cifar100 options]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
# The build tree's plugin and the shipped cli_filter, unless the caller names others (an installed
# package, for example).
export DDP_SPANK_PLUGIN=${DDP_SPANK_PLUGIN:-$BUILD_DIR/plugin/spank_ddp.so}
export DDP_CLI_FILTER=${DDP_CLI_FILTER:-$ROOT/configs/cli_filter.lua}
export DDP_CIFAR100=${DDP_CIFAR100:-$BUILD_DIR/trainer/ddp-cifar100}
SYNTH=${DDP_CIFAR_SYNTH:-$BUILD_DIR/trainer/data/cifar-synth}
for f in "$DDP_SPANK_PLUGIN" "$DDP_CIFAR100" "$SYNTH"; do
  [ -e "$f" ] || { echo "no $f: build first (sudo scripts/setup.sh)" >&2; exit 1; }
done
"$ROOT/tests/cluster/up.sh"

data=${DDP_LAB_DATA:-/var/tmp/ddp-lab-cifar}
[ -f "$data/cifar-100-binary/train.bin" ] ||
  "$SYNTH" --out "$data" --train 2048 --test 512 --classes 10 --seed 3
out=$(mktemp /tmp/ddp-main-job.XXXXXX.out)
chmod 644 "$out"
cd "$ROOT"
args=(--data-dir "$data" --width 0.1 --batch-size 64 --base-lr 0.05 --epochs 3 "$@")
echo "+ sbatch --ddp-nodes=2 --ddp-gpus=2 --wait examples/lab-cifar100.sbatch ${args[*]}"
status=0
"$ROOT/tests/cluster/run.sh" sbatch --ddp-nodes=2 --ddp-gpus=2 --wait -o "$out" \
  examples/lab-cifar100.sbatch "${args[@]}" || status=$?
cat "$out"
echo "(job output: $out)"
exit "$status"
