#!/bin/bash
# Slurm after 24.11 drains the node when a plugin's slurm_spank_init fails in slurmstepd,
# unless the plugin exports slurm_spank_init_failure_mode = ESPANK_JOB_FAILURE
# (plugin/spank/init_failure_mode.cpp says why ours does). Checked in the built plugin itself: the
# symbol must survive the version script and C++ linkage as a dynamic data symbol, with that
# value. Against an older spank.h, which has no such symbol, the plugin must not export one.
#   init_failure_mode_test.sh PLUGIN CXX SLURM_INCLUDE_DIR
set -euo pipefail
plugin=$1 cxx=$2 include=$3
symbol=slurm_spank_init_failure_mode
line=$(nm -D --defined-only "$plugin" | awk -v s="$symbol" '$3 == s' || true)
if ! grep -q "$symbol" "$include/slurm/spank.h"; then
  [ -z "$line" ] || { echo "FAIL: $include/slurm/spank.h has no $symbol, yet the plugin exports one: $line"; exit 1; }
  echo "PASS: this spank.h has no $symbol, and the plugin exports none"
  exit 0
fi
[ -n "$line" ] || { echo "FAIL: spank.h declares $symbol, but $plugin does not export it"; exit 1; }
read -r address kind _ <<<"$line"
[[ $kind == [DdBb] ]] || { echo "FAIL: $symbol is no data symbol in $plugin: $line"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include <cstdio>\n#include <slurm/spank.h>\nint main() { std::printf("%%d %%d\\n", int(ESPANK_JOB_FAILURE), int(ESPANK_NODE_FAILURE)); }\n' \
  >"$tmp/values.cpp"
"$cxx" -I"$include" -o "$tmp/values" "$tmp/values.cpp"
read -r job_failure node_failure < <("$tmp/values")
# The int at the symbol's address, as the loader maps it (x86-64: little-endian). A symbol in .bss
# is 0.
value=0
if [[ $kind == [Dd] ]]; then
  word=$(objdump -s --start-address="0x$address" --stop-address="$(printf '0x%x' $((16#$address + 4)))" "$plugin" |
    awk '/^ [0-9a-f]+ [0-9a-f]{8}/ { print $2; exit }')
  [ -n "$word" ] || { echo "FAIL: cannot read $symbol at 0x$address in $plugin"; exit 1; }
  value=$((16#${word:6:2}${word:4:2}${word:2:2}${word:0:2}))
fi
echo "$symbol = $value (ESPANK_JOB_FAILURE = $job_failure, ESPANK_NODE_FAILURE = $node_failure)"
((value == job_failure)) || { echo "FAIL: a failed init would not fail the job alone"; exit 1; }
echo "PASS: a failed slurm_spank_init fails the job and leaves the node in service"
