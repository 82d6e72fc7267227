#!/bin/bash
# libddp.so is loaded by programs torchrun starts, on machines that may have no Slurm, hwloc or
# yaml-cpp: neither its NEEDED entries nor anything ldd resolves for it may name those libraries,
# except what LibTorch itself brings (Debian 13's libtorch_cpu loads hwloc through Open MPI).
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
# What the Torch libraries libddp needs load anyway, with or without libddp.
torch_paths=$(awk '$1 ~ /^lib(torch|c10)/ && $3 ~ /^\// { print $3 }' <<<"$closure")
[ -n "$torch_paths" ] || { echo "FAIL: ldd resolves no Torch library of $lib:"; echo "$closure"; exit 1; }
# shellcheck disable=SC2086 # one path per word
torch_closure=$(ldd $torch_paths | awk '$2 == "=>" { print $1 }' | sort -u)
own=$(awk '$2 == "=>" { print $1 }' <<<"$closure" | sort -u | comm -23 - <(echo "$torch_closure"))
if bad=$(grep -E "$forbidden" <<<"$own"); then
  echo "FAIL: $lib loads, through its own dependencies (not Torch's):"; echo "$bad"
  exit 1
fi
torch_brings=$(grep -E "$forbidden" <<<"$torch_closure" | tr '\n' ' ' || true)
echo "OK: neither NEEDED nor the ldd closure of $lib names libslurm, hwloc or yaml-cpp${torch_brings:+ (beyond what LibTorch loads itself: $torch_brings)}"
