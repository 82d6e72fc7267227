#!/bin/bash
# Builds slurm-ddp and tests it on another Debian release, in a root made with debootstrap from the
# Debian registry:
#
#   sudo tests/platform/run.sh trixie          Debian 13: Slurm 24.11, LibTorch 2.6 (CPU), GCC 14:
#                                              the README's set-up, the unit tests, and the
#                                              package check with every 2-node Slurm cluster
#                                              test against the installed packages
#   sudo tests/platform/run.sh trixie --cuda   the CUDA build check: libddp and ddp-cifar100
#                                              against libtorch-cuda-dev 2.6, NCCL 2.22, CUDA 12.4
#                                              (build and link only: no GPU needed)
#   sudo tests/platform/run.sh sid             Debian forky/sid: Slurm 26.05, LibTorch 2.14 (CPU),
#                                              GCC 16: the same as for trixie
#   sudo tests/platform/run.sh trixie|sid [--cuda] --packages-only
#                                              that check's root and packages, nothing built or
#                                              run: CI makes them beside the Debian 12 build
#   sudo tests/platform/run.sh trixie|sid --build-only, then --tests-only
#                                              the suite in two stages: the packages and the
#                                              build (of the unit tests only the torch_api
#                                              ones), then the rest built and every test (CI
#                                              builds one platform while another's tests run)
#   sudo tests/platform/run.sh trixie|sid --package-only
#                                              after --build-only: the package check alone,
#                                              with every cluster test
#   ... --platform-tests                       (alone, with --tests-only or --package-only) only
#                                              the tests that reach what differs between
#                                              platforms: the unit and multi-process tests
#                                              labelled torch_api, the cluster tests labelled
#                                              slurm_series or torch_api (CI runs these; every
#                                              other test runs once, on Debian 12)
#
# The sources are this checkout's tracked and unignored files, copied into the root, so what runs is
# what a clean clone holds. Each root is kept under $DDP_PLATFORM_CACHE (default
# /var/cache/slurm-ddp-platform) and reused while its recipe is unchanged: a minbase root made by
# debootstrap ($suite-base), copied into one root per check ($suite for the suite, $suite-cuda for
# the CUDA build: libtorch-cuda-dev and libtorch-dev cannot be installed together).
# DDP_PLATFORM_FRESH=1 makes them again (CI does: nothing cached). The packages apt downloads are
# kept in one folder both roots share. Nothing of a root touches this machine's /run, /tmp,
# hostname or mounts: it runs in a private mount and UTS namespace (enter.sh), so its test cluster
# is its own and needs no lock against the host's.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CACHE=${DDP_PLATFORM_CACHE:-/var/cache/slurm-ddp-platform}
MIRROR=${DDP_PLATFORM_MIRROR:-http://deb.debian.org/debian}

step() { printf '\n== platform [%4ss] %s\n' "$SECONDS" "$*"; }
fail() { echo "platform: $*" >&2; exit 1; }
usage() { echo "usage: $0 trixie|sid [--cuda] [--packages-only|--build-only|--tests-only|--package-only] [--platform-tests]" >&2; exit 2; }

(($# >= 1)) || usage
platform=$1
shift
cuda=0
only=
platform_tests=
for a in "$@"; do
  case $a in
    --cuda) cuda=1 ;;
    --platform-tests) platform_tests=" $a" ;;
    --packages-only | --build-only | --tests-only | --package-only)
      [ -z "$only" ] || usage
      only=" $a"
      ;;
    *) usage ;;
  esac
done
case $cuda$only in
  "1 --build-only" | "1 --tests-only" | "1 --package-only") fail "the CUDA check is a build alone: run it without$only" ;;
esac
case $cuda$only$platform_tests in
  1*" --platform-tests" | *--packages-only*" --platform-tests" | *--build-only*" --platform-tests")
    fail "--platform-tests selects tests: with trixie|sid alone, --tests-only or --package-only" ;;
esac
apt_conf=
case $platform in
  trixie) suite=trixie ;;
  sid)
    suite=sid
    ((cuda == 0)) || fail "the CUDA build check runs on trixie (sid has no CUDA build of LibTorch 2.14)"
    # The registry serves sid's Release file past its Valid-Until date (a week after it was
    # signed); apt refuses such a file unless told to accept it. The signature is still checked.
    apt_conf='Acquire::Check-Valid-Until "false";'
    ;;
  *) fail "unknown platform '$platform'; known: trixie, sid" ;;
esac
[ "$(id -u)" = 0 ] || fail "needs root (debootstrap, chroot, the test cluster): sudo $0 $platform"
[ -d "$REPO/.git" ] || [ -f "$REPO/.git" ] || fail "$REPO is not a git checkout: the sources copied are git's"
mkdir -p "$CACHE"

if ((cuda)); then
  root=$CACHE/$suite-cuda
  inner="bash tests/platform/inside/cuda_build.sh$only"
else
  root=$CACHE/$suite
  inner="bash tests/platform/inside/test_suite.sh$only$platform_tests"
fi
enter() {
  step "enter the $suite root: $inner"
  rc=0
  unshare --mount --uts --propagation private -- bash "$HERE/enter.sh" "$root" "$CACHE/$suite-debs" "$inner" || rc=$?
  step "done: exit $rc"
  exit "$rc"
}
if [ "$only" = " --tests-only" ] || [ "$only" = " --package-only" ]; then
  # The root, its build and its sources are the --build-only run's, as they are: sources copied
  # again would be newer than the build made from them.
  [ -f "$root/var/tmp/ddp-build/CMakeCache.txt" ] ||
    fail "no build in $root: run tests/platform/run.sh $platform --build-only first"
  enter
fi

# debootstrap as Debian ships it, without installing it on this machine: unpacked from its package.
debootstrap=(debootstrap)
if ! command -v debootstrap >/dev/null; then
  tools=$CACHE/tools
  if [ ! -x "$tools/usr/sbin/debootstrap" ]; then
    step "fetch debootstrap (apt-get download; unpacked in $tools, not installed)"
    rm -rf "$tools" && mkdir -p "$tools/deb"
    (cd "$tools/deb" && apt-get download -qq -o APT::Sandbox::User=root debootstrap) ||
      fail "cannot download debootstrap: apt-get update, or apt-get install debootstrap"
    dpkg -x "$tools"/deb/debootstrap_*.deb "$tools"
  fi
  debootstrap=(env DEBOOTSTRAP_DIR="$tools/usr/share/debootstrap" "$tools/usr/sbin/debootstrap")
fi

fresh=${DDP_PLATFORM_FRESH:-0}
base=$CACHE/$suite-base
# No documentation in the roots (the CUDA toolkit alone brings thousands of man pages, each one
# for man-db to index) but this project's own man pages (packaging/man), which the package check
# reads with man.
nodoc='path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-include /usr/share/man/man1/ddp-*
path-include /usr/share/man/man8/spank-ddp.*
path-exclude /usr/share/locale/*'
# Nor does dpkg sync each file it unpacks (as Docker's Debian images do): a root is a throwaway
# (CI makes each afresh; DDP_PLATFORM_FRESH=1 makes a kept one again should a crash leave it
# broken), and the syncs of the CUDA toolkit's thousands of files hold the disk that the Debian 12
# build beside them reads and writes.
unsafe_io='force-unsafe-io'
# The recipe: what makes the base root. A changed recipe makes every root again.
options=(--variant=minbase --components=main,contrib,non-free)
recipe="debootstrap ${options[*]} $suite ROOT $MIRROR; dpkg: $(echo "$nodoc" | tr '\n' ','),$unsafe_io${apt_conf:+; apt: $apt_conf}"
if [ "$fresh" = 1 ] || [ "$(cat "$base/etc/ddp-platform-recipe" 2>/dev/null)" != "$recipe" ]; then
  step "make a $suite root in $base (debootstrap ${options[*]} $suite ROOT $MIRROR)"
  rm -rf "$base" "$base.tmp"
  "${debootstrap[@]}" "${options[@]}" "$suite" "$base.tmp" "$MIRROR" >"$CACHE/$suite.debootstrap.log" 2>&1 ||
    { tail -20 "$CACHE/$suite.debootstrap.log"; fail "debootstrap failed (log: $CACHE/$suite.debootstrap.log)"; }
  # Packages install their services; none may start in the root while apt runs.
  printf '#!/bin/sh\nexit 101\n' >"$base.tmp/usr/sbin/policy-rc.d"
  chmod 755 "$base.tmp/usr/sbin/policy-rc.d"
  # apt keeps what it downloads (in the folder the roots share, enter.sh).
  rm -f "$base.tmp/etc/apt/apt.conf.d/docker-clean"
  echo "$nodoc" >"$base.tmp/etc/dpkg/dpkg.cfg.d/ddp-platform-nodoc"
  echo "$unsafe_io" >"$base.tmp/etc/dpkg/dpkg.cfg.d/ddp-platform-unsafe-io"
  [ -z "$apt_conf" ] || echo "$apt_conf" >"$base.tmp/etc/apt/apt.conf.d/ddp-platform"
  rm -f "$base.tmp"/var/cache/apt/archives/*.deb
  echo "$recipe" >"$base.tmp/etc/ddp-platform-recipe"
  mv "$base.tmp" "$base"
fi

# A root is the base plus what its check installed; it is made again with the base.
if [ "$fresh" = 1 ] || [ ! -e "$root/etc/ddp-platform-recipe" ] || [ "$base/etc/ddp-platform-recipe" -nt "$root/etc/ddp-platform-root" ]; then
  step "copy the base root to $root"
  rm -rf "$root" "$root.tmp"
  cp -a "$base" "$root.tmp"
  touch "$root.tmp/etc/ddp-platform-root"
  mv "$root.tmp" "$root"
fi
mkdir -p "$CACHE/$suite-debs"

step "copy the sources (tracked and unignored files of $REPO) to $root/src"
rm -rf "$root/src"
mkdir -p "$root/src"
git -C "$REPO" ls-files -z --cached --others --exclude-standard |
  (cd "$REPO" && tar --null --ignore-failed-read -T - -cf -) | tar -C "$root/src" -xf -

enter
