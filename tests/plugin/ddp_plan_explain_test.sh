#!/bin/bash
# `ddp-plan --explain` says per GPU how it was matched, on a recorded DGX-2 (16 V100s): Slurm's
# index, its place in hwloc's bus-id order, the bus id, CUDA_VISIBLE_DEVICES and the CUDA device;
# and says so when Slurm names a GPU hwloc cannot see.
set -euo pipefail
plan=$1 data=$2
xml=$data/topologies/nvidiaDGX2.xml
expect() {
  grep -qF -- "$2" <<<"$1" || { printf 'FAIL: expected "%s" in:\n%s\n' "$2" "$1"; exit 1; }
}
out=$("$plan" --topology "$xml" --gpus 2,3 --tasks 2 --cuda-visible-devices 2 --explain 2>&1)
expect "$out" "local rank 0: Slurm GPU 2 (entry 0 of SLURM_STEP_GPUS) = hwloc GPU 2 of 16, bus id 0000:39:00.0"
expect "$out" "local rank 1: Slurm GPU 3 (entry 1 of SLURM_STEP_GPUS) = hwloc GPU 3 of 16, bus id 0000:3b:00.0"
expect "$out" "CUDA_VISIBLE_DEVICES=2,3 (widened by the plan from 2 to the step's GPUs), cuda:1"
expect "$out" "numbering node-wide: CUDA_VISIBLE_DEVICES is SLURM_STEP_GPUS"
# ConstrainDevices=yes: the step's list counts its cgroup from 0, and stays as Slurm set it.
out=$("$plan" --topology "$xml" --gpus 2,3 --tasks 2 --step-visible-devices 0,1 --explain 2>&1)
expect "$out" "numbering cgroup-local: CUDA_VISIBLE_DEVICES counts the step's GPUs from 0"
expect "$out" "local rank 1: Slurm GPU 3 (entry 1 of SLURM_STEP_GPUS) = hwloc GPU 3 of 16"
expect "$out" "CUDA_VISIBLE_DEVICES=0,1 (as Slurm set it), cuda:1"
# ... and a task bound to its own GPU there has no cuda:1.
if out=$("$plan" --topology "$xml" --gpus 2,3 --tasks 2 --step-visible-devices 0,1 \
  --cuda-visible-devices 0 2>&1); then
  printf 'FAIL: a rank without cuda:LOCAL_RANK was planned:\n%s\n' "$out"; exit 1
fi
expect "$out" "local rank 1 cannot use cuda:LOCAL_RANK"
out=$("$plan" --topology "$xml" --gpus 0,17 --tasks 2 --explain 2>&1)
expect "$out" "Slurm GPU 17 (entry 1 of SLURM_STEP_GPUS) = not matched to hwloc"
expect "$out" "hwloc finds 16 GPU(s)"
out=$("$plan" --topology "$xml" --tasks 2 --explain 2>&1)
expect "$out" "local rank 0: no GPU (the step has none)"
echo "PASS: ddp-plan --explain names each GPU's match"
