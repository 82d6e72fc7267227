#!/bin/bash
# The README's main job: ddp-cifar100 from one sbatch line over both nodes, on CPU with Gloo,
# accuracy far above chance (10 learnable classes: 0.10), a summary that reports 2 nodes.
source "$(dirname "$0")/testlib.sh"
[ -x "${DDP_CIFAR100_BIN:-}" ] || { echo "SKIP: ddp-cifar100 not built"; exit 77; }
out=$(DDP_CIFAR100="$DDP_CIFAR100_BIN" DDP_CIFAR_SYNTH="$DDP_CIFAR_SYNTH_BIN" \
  DDP_LAB_DATA="$WORK/data" "$TESTS_DIR/../../scripts/main-job.sh" 2>&1) || fail "main job failed: $out"
echo "$out"
expect_contains "$out" "Head node: n1 (10.77.0.11)" "head node and its address"
expect_contains "$out" "Training started with 4 processes across 2 nodes." "start line"
expect_contains "$out" "Epoch 3/3 completed in " "epoch line"
expect_contains "$out" "Epoch Throughput: " "throughput line"
expect_contains "$out" "Number of nodes: 2" "summary: nodes"
expect_contains "$out" "Training completed successfully." "summary"
# Every rank ended its process group in order (PyTorch >= 2.4 warns when NCCL's is not).
case "$out" in *destroy_process_group*|*"has NOT been destroyed"*) fail "a rank did not shut its process group down: $out" ;; esac
acc=$(sed -n 's/^Validation Loss: .*, Validation Accuracy: \([0-9.]*\)$/\1/p' <<<"$out" | tail -1)
awk -v a="$acc" 'BEGIN { exit !(a > 0.4) }' || fail "accuracy $acc is not far above chance (0.10)"
echo "PASS: 2-node ddp-cifar100 reached accuracy $acc"
