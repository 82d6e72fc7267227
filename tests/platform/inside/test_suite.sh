#!/bin/bash
# Inside a platform root: the README's set-up and test commands, then what they ran against.
# One stage alone: --packages-only (the packages, nothing built), --build-only (the packages and
# the build, with only the unit tests labelled torch_api), --tests-only (the rest of the unit
# tests built, then every test), --package-only (the package check alone, with every cluster
# test, on that build).
# --platform-tests (alone, or with --tests-only or --package-only): only the tests that reach what differs
# between platforms: the unit and multi-process tests labelled torch_api (libddp's and the
# trainer's, against this LibTorch), and in the package check the cluster tests labelled
# slurm_series or torch_api (this Slurm series, this LibTorch). CI runs the stages apart, so that
# one platform builds while another's tests wait, and runs every other test once, on Debian 12.
set -euo pipefail
stage=all
platform_tests=0
bad=0
for a in "$@"; do
  case $a in
    --packages-only | --build-only | --tests-only | --package-only)
      [ "$stage" = all ] || bad=1
      stage=$a ;;
    --platform-tests) platform_tests=1 ;;
    *) bad=1 ;;
  esac
done
case $bad$stage$platform_tests in
  0all? | 0--packages-only0 | 0--build-only0 | 0--tests-only? | 0--package-only?) ;;
  *) echo "usage: $0 [--packages-only|--build-only|--tests-only|--package-only] [--platform-tests]" >&2; exit 2 ;;
esac
cd /src
export DEBIAN_FRONTEND=noninteractive
# Outside /src, which run.sh replaces on every run: a kept root rebuilds only what changed.
export BUILD_DIR=/var/tmp/ddp-build
export BUILD_DEBUG_INFO=0  # a quarter of the build's time; nothing here reads debug information
phase() { printf '\n== platform suite [%4ss] %s\n' "$SECONDS" "$*"; }

if [ "$stage" != --tests-only ] && [ "$stage" != --package-only ]; then
  phase "packages: scripts/setup.sh --no-build"
  bash scripts/setup.sh --no-build >/var/tmp/setup-packages.log 2>&1 ||
    { tail -40 /var/tmp/setup-packages.log; echo "platform: scripts/setup.sh failed" >&2; exit 1; }
  [ "$stage" != --packages-only ] || exit 0
  # --build-only: what --package-only runs, --platform-tests too: the product, and of the unit
  # tests only libddp's and the trainer's (--tests-only builds the rest).
  unit_tests=1
  [ "$stage" != --build-only ] || unit_tests=torch_api
  phase "build: BUILD_UNIT_TESTS=$unit_tests scripts/setup.sh"
  BUILD_UNIT_TESTS=$unit_tests bash scripts/setup.sh
  [ "$stage" != --build-only ] || exit 0
elif [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  echo "platform: $stage needs the build of a --build-only run first" >&2
  exit 1
elif [ "$stage" = --tests-only ] && ((!platform_tests)); then
  phase "build: scripts/setup.sh (the unit tests a --build-only left out)"
  bash scripts/setup.sh
fi
# The suite in two parts, so that the cluster tests run once: the unit and multi-process tests
# from the build tree, then the package check (tests/package/run.sh), which builds this platform's
# packages (the plugin for this release's Slurm series), installs them, runs every cluster test against the
# installed files (the sanitizer test with the build tree's ASan plugin), builds a program against
# the installed libddp, and removes them.
rc=0
unit=(-LE cluster)
package_args=()
if ((platform_tests)); then
  unit=(-L torch_api -LE cluster)
  package_args=(--cluster-tests='slurm_series|torch_api')
fi
if [ "$stage" = --package-only ] && ((!platform_tests)); then
  echo "not run: the unit and multi-process tests (--package-only)" >/tmp/ctest.log
else
  phase "test: ctest --test-dir $BUILD_DIR ${unit[*]} -j2 --output-on-failure"
  ctest --test-dir "$BUILD_DIR" "${unit[@]}" -j2 --output-on-failure 2>&1 | tee /tmp/ctest.log || rc=$?
fi
phase "test: tests/package/run.sh $BUILD_DIR ${package_args[*]} (the packages, and the cluster tests against them)"
prc=0
bash tests/package/run.sh "$BUILD_DIR" "${package_args[@]}" 2>&1 | tee /tmp/package.log || prc=$?
phase "done"
echo "platform: $(. /etc/os-release && echo "$PRETTY_NAME"), GCC $(gcc -dumpfullversion)," \
  "Slurm $(dpkg-query -W -f='${Version}' slurmd), LibTorch $(dpkg-query -W -f='${Version}' libtorch-dev)"
echo "unit and multi-process tests: $(grep -E '^([0-9]+% tests passed|not run)' /tmp/ctest.log || echo 'ctest printed no summary')"
echo "cluster tests against the packages: $(grep -E '^[0-9]+% tests passed' /tmp/package.log || echo 'ctest printed no summary')"
grep -E '== \[ *[0-9]+s\] (PASS|FAIL)' /tmp/package.log || echo "platform: the package check printed no verdict"
((rc == 0 && prc == 0))
