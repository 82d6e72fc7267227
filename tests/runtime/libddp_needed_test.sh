#!/bin/bash
# libddp.so is loaded by programs torchrun starts, on machines that may have no Slurm, hwloc or
# yaml-cpp: neither its NEEDED entries nor anything ldd resolves for it may name those libraries.
# Usage: libddp_needed_test.sh PATH/TO/libddp.so
set -euo pipefail
lib=${1:?usage: libddp_needed_test.sh PATH/TO/libddp.so}
forbidden='slurm|hwloc|yaml-cpp'

needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
# A library that needs nothing is not libddp (it needs at least Torch and libstdc++): the check
# below would pass without looking at anything.
grep -q 'libtorch' <<<"$needed" || { echo "FAIL: $lib: no libtorch among NEEDED: $needed"; exit 1; }
echo "NEEDED by $lib:"; sed 's/^/  /' <<<"$needed"
if bad=$(grep -E "$forbidden" <<<"$needed"); then
  echo "FAIL: $lib needs $bad; libddp links only the contract library and Torch (runtime/CMakeLists.txt)"
  exit 1
fi
closure=$(ldd "$lib")
if bad=$(grep -E "$forbidden" <<<"$closure"); then
  echo "FAIL: $lib loads, through its dependencies:"; echo "$bad"
  exit 1
fi
echo "OK: neither NEEDED nor the ldd closure of $lib names libslurm, hwloc or yaml-cpp"
