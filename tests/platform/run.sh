#!/bin/bash
# Builds slurm-ddp and runs its whole test suite (unit tests and the real 2-node Slurm cluster) on
# another Debian release, in a root made with debootstrap from the Debian registry:
#
#   sudo tests/platform/run.sh trixie          Debian 13: Slurm 24.11, LibTorch 2.6 (CPU)
#   sudo tests/platform/run.sh trixie --cuda   the CUDA build check: libddp and ddp-cifar100
#                                              against libtorch-cuda-dev 2.6, NCCL 2.22, CUDA 12.4
#
# The sources are this checkout's tracked and unignored files, copied into the root, so what runs is
# what a clean clone holds. The root is kept under $DDP_PLATFORM_CACHE (default
# /var/cache/slurm-ddp-platform) and reused while its recipe is unchanged; DDP_PLATFORM_FRESH=1
# makes it again. Nothing of the root touches this machine's /run, /tmp, hostname or mounts: it
# runs in a private mount and UTS namespace (tests/platform/enter.sh).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CACHE=${DDP_PLATFORM_CACHE:-/var/cache/slurm-ddp-platform}
MIRROR=${DDP_PLATFORM_MIRROR:-http://deb.debian.org/debian}

step() { printf '\n== platform [%4ss] %s\n' "$SECONDS" "$*"; }
fail() { echo "platform: $*" >&2; exit 1; }
usage() { echo "usage: $0 trixie [--cuda]" >&2; exit 2; }

(($# >= 1)) || usage
platform=$1
shift
cuda=0
for a in "$@"; do
  case $a in
    --cuda) cuda=1 ;;
    *) usage ;;
  esac
done
case $platform in
  trixie) suite=trixie ;;
  *) fail "unknown platform '$platform'; known: trixie" ;;
esac
[ "$(id -u)" = 0 ] || fail "needs root (debootstrap, chroot, the test cluster): sudo $0 $platform"
if ! command -v debootstrap >/dev/null; then
  step "install debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null ||
    fail "debootstrap is missing and could not be installed: apt-get install debootstrap"
fi

root=$CACHE/$suite
# The recipe: what makes the root. A changed recipe makes a fresh root.
recipe="debootstrap --variant=minbase --components=main,contrib,non-free $suite $MIRROR"
if [ "${DDP_PLATFORM_FRESH:-0}" = 1 ] || [ "$(cat "$root/etc/ddp-platform-recipe" 2>/dev/null)" != "$recipe" ]; then
  step "make a $suite root in $root ($recipe)"
  mkdir -p "$CACHE"
  rm -rf "$root" "$root.tmp"
  # shellcheck disable=SC2086 # the recipe is words
  ${recipe%% *} ${recipe#* } "$root.tmp" >"$CACHE/$suite.debootstrap.log" 2>&1 ||
    { tail -20 "$CACHE/$suite.debootstrap.log"; fail "debootstrap failed (log: $CACHE/$suite.debootstrap.log)"; }
  # Packages install their services; none may start in the root while apt runs.
  printf '#!/bin/sh\nexit 101\n' >"$root.tmp/usr/sbin/policy-rc.d"
  chmod 755 "$root.tmp/usr/sbin/policy-rc.d"
  echo "$recipe" >"$root.tmp/etc/ddp-platform-recipe"
  mv "$root.tmp" "$root"
fi

step "copy the sources (tracked and unignored files of $REPO) to $root/src"
rm -rf "$root/src"
mkdir -p "$root/src"
git -C "$REPO" ls-files -z --cached --others --exclude-standard |
  (cd "$REPO" && tar --null --ignore-failed-read -T - -cf -) | tar -C "$root/src" -xf -

if ((cuda)); then
  inner="bash tests/platform/inside/cuda_build.sh"
else
  inner="bash tests/platform/inside/test_suite.sh"
fi
step "enter the $suite root: $inner"
rc=0
unshare --mount --uts --propagation private -- bash "$HERE/enter.sh" "$root" "$inner" || rc=$?
step "done: exit $rc"
exit "$rc"
