#!/bin/bash
# Inside a platform root: the README's set-up and test commands, then what they ran against.
set -euo pipefail
cd /src
export DEBIAN_FRONTEND=noninteractive
# Outside /src, which run.sh replaces on every run: a kept root rebuilds only what changed.
export BUILD_DIR=/var/tmp/ddp-build
phase() { printf '\n== platform suite [%4ss] %s\n' "$SECONDS" "$*"; }

phase "packages: scripts/setup.sh --no-build"
bash scripts/setup.sh --no-build >/var/tmp/setup-packages.log 2>&1 ||
  { tail -40 /var/tmp/setup-packages.log; echo "platform: scripts/setup.sh failed" >&2; exit 1; }
phase "build: scripts/setup.sh"
bash scripts/setup.sh
phase "test: ctest --test-dir $BUILD_DIR --output-on-failure"
rc=0
ctest --test-dir "$BUILD_DIR" --output-on-failure 2>&1 | tee /tmp/ctest.log || rc=$?
phase "done"
echo "platform: $(. /etc/os-release && echo "$PRETTY_NAME"), GCC $(gcc -dumpfullversion)," \
  "Slurm $(dpkg-query -W -f='${Version}' slurmd), LibTorch $(dpkg-query -W -f='${Version}' libtorch-dev)"
grep -E '^[0-9]+% tests passed' /tmp/ctest.log || echo "platform: ctest printed no summary"
exit "$rc"
