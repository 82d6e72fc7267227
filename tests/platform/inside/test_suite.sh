#!/bin/bash
# Inside a platform root: the README's set-up and test commands, then what they ran against.
set -euo pipefail
cd /src
export DEBIAN_FRONTEND=noninteractive
# Outside /src, which run.sh replaces on every run: a kept root rebuilds only what changed.
export BUILD_DIR=/var/tmp/ddp-build
bash scripts/setup.sh
rc=0
ctest --test-dir "$BUILD_DIR" --output-on-failure 2>&1 | tee /tmp/ctest.log || rc=$?
echo
echo "platform: $(. /etc/os-release && echo "$PRETTY_NAME")," \
  "Slurm $(dpkg-query -W -f='${Version}' slurmd), LibTorch $(dpkg-query -W -f='${Version}' libtorch-dev)"
grep -E '^[0-9]+% tests passed' /tmp/ctest.log || echo "ctest printed no summary"
exit "$rc"
