#!/usr/bin/env bash
# Stops the test cluster: only the processes up.sh started (by recorded pid)
# and the jobs running in the lab's namespaces, then removes the namespaces.
# Logs stay in $LAB_DIR/log. Running it when nothing is up is fine.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lab-env.sh
. "$HERE/lab-env.sh"

lab_require_root
lab_check_dir
[[ -d $LAB_DIR ]] || exit 0
lab_lock
lab_teardown
