#!/bin/bash
# Prints the task's view of the contract on one line, for the integration tests to parse.
echo "contract host=$(hostname) RANK=${RANK-unset} LOCAL_RANK=${LOCAL_RANK-unset}" \
  "WORLD_SIZE=${WORLD_SIZE-unset} LOCAL_WORLD_SIZE=${LOCAL_WORLD_SIZE-unset}" \
  "NODE_RANK=${NODE_RANK-unset} GROUP_RANK=${GROUP_RANK-unset}" \
  "MASTER_ADDR=${MASTER_ADDR-unset} MASTER_PORT=${MASTER_PORT-unset}" \
  "OMP_NUM_THREADS=${OMP_NUM_THREADS-unset} CUDA_DEVICE_ORDER=${CUDA_DEVICE_ORDER-unset}" \
  "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-unset} DDP_GPU=${DDP_GPU-unset}" \
  "DDP_BACKEND=${DDP_BACKEND-unset} DDP_PORT_SOURCE=${DDP_PORT_SOURCE-unset}" \
  "SLURM_PROCID=${SLURM_PROCID-unset} SLURM_STEP_ID=${SLURM_STEP_ID-unset}"
