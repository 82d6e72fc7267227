#!/bin/bash
# Installs the Debian packages slurm-ddp needs (Debian 12, 13 or forky/sid) and builds it into build/.
#   sudo scripts/setup.sh            (idempotent; BUILD_DIR, BUILD_TYPE, BUILD_TARGETS,
#                                     BUILD_DEBUG_INFO=0, BUILD_OPTIMIZE=0 and
#                                     BUILD_UNIT_TESTS=0 may be set)
#   sudo scripts/setup.sh --cuda     Debian 13: against the CUDA build of LibTorch (NCCL, CUDA 12)
#   sudo scripts/setup.sh --no-build the packages only
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo}
BUILD_TARGETS=${BUILD_TARGETS:-all}
# 0: RelWithDebInfo's -O2 without its -g. Debug information is a quarter of a LibTorch source's
# compile time (sgd.cpp: 15.8 s against 21.1 s); the platform checks, which build, test and
# package on each platform and keep nothing, do without it.
BUILD_DEBUG_INFO=${BUILD_DEBUG_INFO:-1}
# 0: -O0 and no debug information, for a build that is compiled and linked but never run (the CUDA
# build check): LibTorch sources compile in three fifths of their -O2 time (process_group.cpp:
# 19.9 s against 34.0 s).
BUILD_OPTIMIZE=${BUILD_OPTIMIZE:-1}
# 0: without the unit and multi-process tests and bench/ (DDP_BUILD_UNIT_TESTS): the product and
# its cluster tests, all that a platform check that runs only those needs. torch_api: of the unit
# tests only libddp's and the trainer's (DDP_BUILD_TORCH_TESTS), all that a platform check with
# --platform-tests runs.
BUILD_UNIT_TESTS=${BUILD_UNIT_TESTS:-1}

cuda=0
build=1
for a in "$@"; do
  case $a in
    --cuda) cuda=1 ;;
    --no-build) build=0 ;;
    *) echo "usage: $0 [--cuda] [--no-build]" >&2; exit 2 ;;
  esac
done

PACKAGES=(
  build-essential cmake pkg-config git
  libslurm-dev slurmctld slurmd slurm-client munge   # Slurm: headers, libslurm, the lab
  libhwloc-dev hwloc libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev
  libcurl4-openssl-dev libarchive-dev libssl-dev     # ddp-cifar100 --download: HTTPS, tar.gz, MD5
  iproute2 util-linux procps                         # network namespaces for the test cluster
  chromium                                           # renders ddp-report's page in the tests
  scdoc rpm man-db                                   # man pages (made, and read by the package check); the .rpm
  file                                               # CPack's DEB generator refuses to run without it
)
# The Slurm series and the LibTorch are the release's: a SPANK plugin loads only into the Slurm
# series it was built for.
release=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
case $release in
  bookworm)   # Debian 12: Slurm 22.05, LibTorch 1.13 (CPU), GCC 12
    ((cuda == 0)) || { echo "setup: Debian 12 has no CUDA build of LibTorch; use Debian 13, or a PyTorch of your own (docs/admins.md: Build for your Slurm and your LibTorch)" >&2; exit 1; }
    # LibTorch and its Gloo for libddp; torchrun-compatible test program
    PACKAGES+=(libtorch-dev libgloo-dev python3-torch)
    ;;
  trixie)     # Debian 13: Slurm 24.11, LibTorch 2.6 (CPU, or CUDA 12.4 with NCCL 2.22), GCC 14
    if ((cuda)); then
      # contrib and non-free: libtorch-cuda-dev, libnccl-dev and the CUDA toolkit, whose nvcc
      # Torch's CMake config calls (enable_language(CUDA)).
      PACKAGES+=(libtorch-cuda-dev libgloo-cuda-dev libnccl-dev nvidia-cuda-toolkit python3-torch-cuda)
    else
      PACKAGES+=(libtorch-dev libgloo-dev python3-torch)
    fi
    ;;
  forky)      # Debian forky/sid: Slurm 26.05, LibTorch 2.14 (CPU), GCC 16
    ((cuda == 0)) || { echo "setup: --cuda is checked on Debian 13 (trixie) only; on forky/sid build against a PyTorch of your own (docs/admins.md: Build for your Slurm and your LibTorch)" >&2; exit 1; }
    PACKAGES+=(libtorch-dev libgloo-dev python3-torch)
    ;;
  *)
    echo "setup: Debian 12 (bookworm), 13 (trixie) or forky/sid expected, this is '${release:-unknown}';" \
      "install the packages above by hand, then: cmake -S . -B build && cmake --build build" >&2
    exit 1
    ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  if [ "$(id -u)" != 0 ]; then
    echo "setup: missing packages: ${missing[*]}; run as root (sudo $0) to install them" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt_options=(-y -qq)
  # Debian 13's recommendations double the download (GDAL, LLVM, graphviz, Slurm's database and
  # monitoring plugins; with --cuda NVIDIA's graphical profilers, gigabytes) and nothing here uses
  # them: tests/platform/run.sh builds and tests in a root that has only this list.
  [ "$release" = bookworm ] || apt_options+=(--no-install-recommends)
  update_rc=0
  update_out=$(apt-get update -qq 2>&1) || update_rc=$?
  [ -z "$update_out" ] || echo "$update_out" >&2
  if ((update_rc)); then
    # sid's Release file is valid for a week; a mirror that froze it (a snapshot, a registry proxy)
    # fails the update. Accepting that is the admin's choice, not this script's.
    if grep -qi 'expired' <<<"$update_out"; then
      echo "setup: a Release file above is past its Valid-Until date (a frozen mirror); to accept it:" \
        "echo 'Acquire::Check-Valid-Until \"false\";' >/etc/apt/apt.conf.d/99valid-until" >&2
    fi
    exit "$update_rc"
  fi
  apt-get install "${apt_options[@]}" "${missing[@]}"
fi

((build)) || exit 0
# Prefix /usr, as Debian packages it (multiarch libdir); tests/package/run.sh packages this tree.
flags=()
if [ "$BUILD_OPTIMIZE" = 0 ]; then
  flags+=("-DCMAKE_CXX_FLAGS_${BUILD_TYPE^^}=-O0")
elif [ "$BUILD_DEBUG_INFO" = 0 ]; then
  flags+=("-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -DNDEBUG")
fi
case $BUILD_UNIT_TESTS in
  0) flags+=(-DDDP_BUILD_UNIT_TESTS=OFF -DDDP_BUILD_TORCH_TESTS=OFF) ;;
  torch_api) flags+=(-DDDP_BUILD_UNIT_TESTS=OFF -DDDP_BUILD_TORCH_TESTS=ON) ;;
  *) flags+=(-DDDP_BUILD_UNIT_TESTS=ON) ;;
esac
cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DCMAKE_INSTALL_PREFIX=/usr "${flags[@]}"
# shellcheck disable=SC2086 # BUILD_TARGETS is a list of words
cmake --build "$BUILD_DIR" -j "$(nproc)" --target $BUILD_TARGETS
