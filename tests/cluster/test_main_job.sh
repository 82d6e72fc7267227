#!/bin/bash
# The README's main job: real DDP training over both nodes from one sbatch line, learning far
# above chance (10 classes: 0.10).
source "$(dirname "$0")/testlib.sh"
"$PYTHON" -c "import torch.distributed" 2>/dev/null || { echo "SKIP: python3-torch missing"; exit 77; }
out=$("$TESTS_DIR/../../scripts/main-job.sh" --epochs 3 2>&1) || fail "main job failed: $out"
echo "$out"
expect_contains "$out" "Head node: n1 (10.77.0.11)" "head node and its address"
expect_contains "$out" "Number of nodes: 2" "summary"
expect_contains "$out" "Total ranks: 4" "summary"
expect_contains "$out" "Training completed successfully." "summary"
acc=$(sed -n 's/^Epoch 3\/3: .*accuracy \([0-9.]*\)$/\1/p' <<<"$out")
awk -v a="$acc" 'BEGIN { exit !(a > 0.4) }' || fail "accuracy $acc is not far above chance (0.10)"
echo "PASS: 2-node training reached accuracy $acc"
