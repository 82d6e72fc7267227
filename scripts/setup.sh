#!/bin/bash
# Installs the Debian 12 packages slurm-ddp needs and builds it into build/.
#   sudo scripts/setup.sh            (idempotent; BUILD_DIR and BUILD_TYPE may be set)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo}

PACKAGES=(
  build-essential cmake pkg-config git
  libslurm-dev slurmctld slurmd slurm-client munge   # Slurm 22.05: headers, libslurm, the lab
  libhwloc-dev hwloc libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev
  libspdlog-dev libgloo-dev                          # runtime: logging, Gloo collectives
  libtorch-dev python3-torch                         # LibTorch 1.13 (CPU) for libddp; torchrun-compatible test program
  libcurl4-openssl-dev libarchive-dev libssl-dev     # ddp-cifar100 --download: HTTPS, tar.gz, MD5
  zlib1g-dev                                         # ddp-report --png
  iproute2 util-linux procps                         # network namespaces for the test cluster
  file                                               # the monitor test names the PNG it checks
  scdoc rpm                                          # man pages; the package check also builds the .rpm
)

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
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}"
fi

# Prefix /usr, as Debian packages it (multiarch libdir); tests/package/run.sh packages this tree.
cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DCMAKE_INSTALL_PREFIX=/usr
cmake --build "$BUILD_DIR" -j "$(nproc)"
