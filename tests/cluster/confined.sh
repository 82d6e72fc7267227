#!/usr/bin/env bash
# Runs the cluster tests labelled `cgroup` on cgroup-confined nodes (LAB_CGROUP=1: proctrack/
# cgroup, task/cgroup,task/affinity, ConstrainCores and ConstrainDevices; cgroups.sh), from a
# configured build tree:
#   sudo tests/cluster/confined.sh [BUILD_DIR] [CTEST_ARGS...]
# Where this machine's cgroups cannot hold such nodes it says why and succeeds: the rest of the
# suite runs on plain nodes. The lab is left down (the next up.sh starts plain nodes again).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lab-env.sh
. "$HERE/lab-env.sh"
build=${1:-$HERE/../../build}
shift || true
lab_require_root
if why=$(lab_cgroup_unusable); then
    echo "cgroup-confined nodes: not run here: $why"
    exit 0
fi
rc=0
LAB_CGROUP=1 ctest --test-dir "$build" -L '^cluster$' -L '^cgroup$' --output-on-failure "$@" || rc=$?
"$HERE/down.sh" >/dev/null 2>&1 || true
exit "$rc"
