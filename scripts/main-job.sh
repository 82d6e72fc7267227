#!/bin/bash
# The main job: a real 2-node DDP training on the built-in test cluster, launched by the plugin
# from one sbatch line (no torchrun). Brings the cluster up if needed; leaves it up for more jobs
# (tests/cluster/down.sh stops it).
#   sudo scripts/main-job.sh [extra training args]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
# The build tree's plugin and the shipped cli_filter, unless the caller names others (an installed
# package, for example).
export DDP_SPANK_PLUGIN=${DDP_SPANK_PLUGIN:-$BUILD_DIR/plugin/spank_ddp.so}
export DDP_CLI_FILTER=${DDP_CLI_FILTER:-$ROOT/configs/cli_filter.lua}
[ -f "$DDP_SPANK_PLUGIN" ] || { echo "no $DDP_SPANK_PLUGIN: build first (sudo scripts/setup.sh)" >&2; exit 1; }
"$ROOT/tests/cluster/up.sh"

# Debian's python3-torch, even when another python3 comes first on PATH (sbatch passes it on).
export PYTHON=${PYTHON:-/usr/bin/python3}
out=$(mktemp /tmp/ddp-main-job.XXXXXX.out)
cd "$ROOT"
echo "+ sbatch --ddp-nodes=2 --ddp-gpus=2 --wait examples/lab-python-ddp.sbatch"
status=0
"$ROOT/tests/cluster/run.sh" sbatch --ddp-nodes=2 --ddp-gpus=2 --wait -o "$out" \
  examples/lab-python-ddp.sbatch "$@" || status=$?
cat "$out"
echo "(job output: $out)"
exit "$status"
