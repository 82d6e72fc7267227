#!/bin/bash
# A live topology load (slurmstepd's, and ddp-plan's, which loads exactly as the plugin does)
# enables no GPU-driver or display component of hwloc, and still enables PCI discovery, from
# which the GPUs are found. hwloc prints its final component list when HWLOC_COMPONENTS_VERBOSE=1.
set -euo pipefail
plan=$1
out=$(HWLOC_COMPONENTS_VERBOSE=1 "$plan" --tasks 1 2>&1 >/dev/null)
final=$(grep 'Final list of enabled discovery components' <<<"$out") ||
  { echo "FAIL: hwloc printed no component list:"; echo "$out"; exit 1; }
echo "$final"
for component in opencl cuda nvml rsmi levelzero gl; do
  if grep -Eq "[:,]${component}\(" <<<"$final"; then
    echo "FAIL: the live load enables hwloc's '$component' component"
    exit 1
  fi
done
grep -Eq '[:,]pci\(' <<<"$final" || { echo "FAIL: PCI discovery is off, GPUs would vanish"; exit 1; }
echo "PASS: no GPU-driver or display component in a live load"
