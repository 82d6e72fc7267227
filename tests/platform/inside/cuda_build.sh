#!/bin/bash
# Inside a Debian 13 root: the CUDA build check. libddp and ddp-cifar100 are built by the README's
# set-up (scripts/setup.sh --cuda) against libtorch-cuda-dev 2.6, libnccl-dev 2.22 and
# nvidia-cuda-toolkit 12.4, with every CUDA/NCCL path compiled in, and the NCCL symbols they
# reference are printed. Build and link only: no GPU is needed, none is used. With
# --packages-only: the packages, nothing built.
set -euo pipefail
cd /src
export DEBIAN_FRONTEND=noninteractive
export BUILD_DIR=/var/tmp/ddp-build-cuda
# Compiled and linked, never run: -O0 and no debug information (scripts/setup.sh), two fifths
# less time than -O2 for each LibTorch source.
export BUILD_OPTIMIZE=0
fail() { echo "cuda check: $*" >&2; exit 1; }
phase() { printf '\n== cuda check [%4ss] %s\n' "$SECONDS" "$*"; }

# cuDNN. libtorch-cuda-2.6 depends on nvidia-cudnn, which is no library but an installer: its
# postinst downloads cuDNN from NVIDIA, and this machine reaches only Debian's registry, so apt
# fails. Two stand-ins, both for this check only:
# - apt: an empty package of that name (what equivs builds, made here with dpkg-deb alone), so
#   apt installs the real LibTorch, NCCL and CUDA packages and nothing that downloads.
# - the linker: libtorch_cuda.so NEEDs libcudnn.so.9, and linking an executable resolves the
#   symbols of the libraries it links, so ld must see a libcudnn.so.9. A link-time stand-in that
#   defines exactly the cuDNN symbols libtorch_cuda.so imports (with their version node) is found
#   through -rpath-link only: it is never installed, never on a run path, and what our binaries
#   record is the same as with the real cuDNN (checked below: neither names libcudnn nor the
#   stand-in's folder). Every other symbol is resolved against the real libraries.
# On a machine with internet access none of this is needed: nvidia-cudnn downloads cuDNN.
if ! dpkg-query -W -f='${Status}' nvidia-cudnn 2>/dev/null | grep -q 'install ok installed'; then
  phase "nvidia-cudnn: an empty stand-in package (its installer would download cuDNN)"
  pkg=/var/tmp/nvidia-cudnn-standin
  rm -rf "$pkg" && mkdir -p "$pkg/DEBIAN"
  cat >"$pkg/DEBIAN/control" <<'EOF'
Package: nvidia-cudnn
Version: 9.0.0.312~cuda12+ddp.standin
Architecture: all
Maintainer: slurm-ddp platform check <root@localhost>
Provides: libcudnn.so.9, libcudnn-dev
Description: stand-in for NVIDIA's cuDNN installer (slurm-ddp CUDA build check only)
 Satisfies libtorch-cuda-2.6's dependency without downloading cuDNN. Empty.
EOF
  dpkg-deb --build "$pkg" /var/tmp/nvidia-cudnn-standin.deb >/dev/null
  dpkg -i /var/tmp/nvidia-cudnn-standin.deb >/dev/null
fi

phase "packages: scripts/setup.sh --cuda (libtorch-cuda-dev, libnccl-dev, nvidia-cuda-toolkit)"
# The packages first: the link-time cuDNN below is made from the installed libtorch_cuda.so before
# CMake first runs.
bash scripts/setup.sh --cuda --no-build >/var/tmp/setup-cuda.log 2>&1 ||
  { tail -40 /var/tmp/setup-cuda.log; fail "scripts/setup.sh --cuda failed (log above)"; }
[ "${1:-}" != --packages-only ] || exit 0

phase "link-time cuDNN stand-in from the symbols libtorch_cuda.so imports"
libtorch_cuda=$(ls /usr/lib/x86_64-linux-gnu/libtorch_cuda.so.* | head -1)
stub=/var/tmp/cudnn-link-only
rm -rf "$stub" && mkdir -p "$stub"
nm -D --undefined-only --with-symbol-versions "$libtorch_cuda" |
  sed -n 's/^ *U \([A-Za-z_][A-Za-z0-9_]*\)@libcudnn\.so\.9$/\1/p' | sort -u >"$stub/symbols"
[ -s "$stub/symbols" ] || fail "$libtorch_cuda imports no cuDNN symbol: has Debian's LibTorch changed?"
sed 's/.*/void &(void) {}/' "$stub/symbols" >"$stub/cudnn.c"
{ echo 'libcudnn.so.9 { global:'; sed 's/$/;/' "$stub/symbols"; echo 'local: *; };'; } >"$stub/cudnn.map"
gcc -shared -fPIC -o "$stub/libcudnn.so.9" -Wl,-soname,libcudnn.so.9 \
  -Wl,--version-script,"$stub/cudnn.map" "$stub/cudnn.c"
echo "$(wc -l <"$stub/symbols") cuDNN symbols"

phase "configure and build libddp, ddp-cifar100 and ddp-preflight (scripts/setup.sh --cuda)"
# CMake takes LDFLAGS as its initial linker flags, at the first configure (the stand-in's folder
# is the same on every run, so a kept root rebuilds only what changed).
grep -q -- "-rpath-link,$stub" "$BUILD_DIR/CMakeCache.txt" 2>/dev/null || rm -rf "$BUILD_DIR"
LDFLAGS="-Wl,-rpath-link,$stub" BUILD_TARGETS="ddp ddp-cifar100 ddp-preflight" bash scripts/setup.sh --cuda

phase "what was built"
lib=$(readlink -f "$BUILD_DIR/runtime/libddp.so")
exe=$BUILD_DIR/trainer/ddp-cifar100
# The NCCL paths are compiled in: Torch's CMake config defined USE_C10D_NCCL for our sources, and
# libddp calls the NCCL process group.
grep -rq -- '-DUSE_C10D_NCCL' "$BUILD_DIR/runtime/CMakeFiles/ddp.dir/flags.make" ||
  fail "USE_C10D_NCCL is not defined for libddp: Torch's CMake config did not enable NCCL"
echo "USE_C10D_NCCL: defined for libddp ($(grep -o -- '-DUSE_C10D_NCCL' "$BUILD_DIR/runtime/CMakeFiles/ddp.dir/flags.make" | head -1))"
for f in "$lib" "$exe"; do
  echo
  echo "$(basename "$f"): NEEDED $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -E 'torch|c10|cud|nccl' | tr '\n' ' ')"
  # Whole outputs in variables: grep -q ends early, and under pipefail the writer's SIGPIPE would
  # fail the check.
  dynamic=$(readelf -d "$f")
  if grep -E 'RPATH|RUNPATH' <<<"$dynamic" | grep -q "$stub"; then fail "$f keeps the link-time stand-in's folder"; fi
  if grep -q 'NEEDED.*libcudnn' <<<"$dynamic"; then fail "$f needs libcudnn itself"; fi
  echo "$(basename "$f"): NCCL symbols it references (nm -D --undefined-only | c++filt | grep -i nccl):"
  nm -D --undefined-only "$f" | c++filt | grep -i nccl | sed 's/^ *U /  /' ||
    echo "  (none of its own: it creates its process group through libddp)"
done
# The trainer reaches NCCL through libddp's process group, and that through libtorch_cuda.
echo
echo "NCCL functions libtorch_cuda.so (which libddp's c10d::ProcessGroupNCCL lives in) calls:"
nm -D --undefined-only --with-symbol-versions "$libtorch_cuda" | sed -n 's/^ *U \(nccl[A-Za-z]*\).*/\1/p' |
  sort -u | tr '\n' ' ' | fold -s -w 100 | sed 's/^/  /'
echo
grep -q 'c10d::ProcessGroupNCCL::ProcessGroupNCCL' <<<"$(nm -D --undefined-only "$lib" | c++filt)" ||
  fail "libddp does not reference c10d::ProcessGroupNCCL: the NCCL path is not compiled in"
# A group ends in order (shutdown) or, after an error or a lost peer, is aborted: PyTorch >= 2.4
# warns at exit otherwise, and an orderly end can wait for a lost peer forever.
for end in shutdown abort; do
  grep -q "c10d::ProcessGroupNCCL::$end()" <<<"$(nm -D --undefined-only "$lib" | c++filt)" ||
    fail "libddp does not call c10d::ProcessGroupNCCL::$end(): NCCL groups would not end in order"
done
grep -q 'NEEDED.*libtorch_cuda' <<<"$(readelf -d "$lib")" || fail "libddp does not need libtorch_cuda"
grep -q 'NEEDED.*libddp' <<<"$(readelf -d "$BUILD_DIR/preflight/ddp-preflight")" ||
  fail "ddp-preflight does not need libddp"
grep -q 'NEEDED.*libddp' <<<"$(readelf -d "$exe")" || fail "ddp-cifar100 does not need libddp"

echo
echo "cuda check: $(. /etc/os-release && echo "$PRETTY_NAME"):" \
  "libtorch-cuda-dev $(dpkg-query -W -f='${Version}' libtorch-cuda-dev)," \
  "libnccl-dev $(dpkg-query -W -f='${Version}' libnccl-dev)," \
  "nvidia-cuda-toolkit $(dpkg-query -W -f='${Version}' nvidia-cuda-toolkit)," \
  "GCC $(gcc -dumpfullversion): libddp, ddp-cifar100 and ddp-preflight built with NCCL"
