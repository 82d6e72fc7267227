#!/bin/bash
# gpu_access.sh DIR: which of the node's fake GPUs (DIR/nvidia*) this task may open. A device
# cgroup (ConstrainDevices=yes) refuses the others with EPERM; one it allows opens, or says ENXIO
# (no driver behind the lab's char devices).
usable=() denied=()
for dev in "$1"/nvidia*; do
  k=${dev##*/nvidia}
  if err=$( (exec 3<"$dev") 2>&1); then usable+=("$k")
  elif [[ $err == *"not permitted"* ]]; then denied+=("$k")
  else usable+=("$k"); fi
done
echo "access host=$(hostname) LOCAL_RANK=${LOCAL_RANK-unset} usable=$(IFS=,; echo "${usable[*]}") denied=$(IFS=,; echo "${denied[*]:-none}")"
