#!/bin/bash
# The platform check for a Slurm series that no registry here ships: SchedMD's source (25.11 by
# default), built as a site builds it, under a prefix of its own outside the loader's search path
# (as /opt/slurm would be), on this Debian 12 machine. Then slurm-ddp is built against it as the
# admins.md tells such a site (cmake -DSLURM_ROOT=PREFIX), and every cluster test runs from
# that build tree on a test cluster of that Slurm's daemons and clients.
#
#   sudo tests/platform/slurm_source.sh                  all of it
#   sudo tests/platform/slurm_source.sh --packages-only  the Debian packages Slurm's build needs
#                                                        (CI installs them before any test runs:
#                                                        dpkg beside the package check fails)
#   sudo tests/platform/slurm_source.sh --build-only     Slurm and the project built, nothing run
#   sudo tests/platform/slurm_source.sh --tests-only     the cluster tests on a --build-only's build
#   ... --series-tests                                   (with --tests-only or alone) only the
#                                                        cluster tests that reach what differs
#                                                        between Slurm series (CTest label
#                                                        slurm_series; CI runs these)
#
# DDP_SLURM_SOURCE: the tarball (default ../shared/slurm/slurm-25.11.7.tar.xz beside the checkout,
# or beside the local checkout it was cloned from: SchedMD's sources are never part of the
# project). A missing one fails the check.
# DDP_TORCH_BUILD: the build tree (default build/, as scripts/setup.sh makes it) whose trainer,
# libddp worker and stand-in CUDA driver the cluster tests run: they reach no Slurm API.
# Everything goes under $DDP_PLATFORM_CACHE/slurm-VERSION (default /var/cache/slurm-ddp-platform),
# kept while the tarball and the recipe are unchanged; the project's build is made again each time.
# The test cluster runs in a private mount and UTS namespace (its /run is its own, its hostname the
# controller's, as in the other platforms' roots), so it never meets this machine's own lab.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CACHE=${DDP_PLATFORM_CACHE:-/var/cache/slurm-ddp-platform}
# Beside this checkout, or beside the one it was cloned from (CI clones into a folder of its own).
TARBALL=shared/slurm/slurm-25.11.7.tar.xz
origin=$(git -C "$REPO" remote get-url origin 2>/dev/null || true)
SOURCE=${DDP_SLURM_SOURCE:-$REPO/../$TARBALL}
if [ -z "${DDP_SLURM_SOURCE:-}" ] && [ ! -f "$SOURCE" ] && [ -d "$origin" ] && [ -f "$origin/../$TARBALL" ]; then
  SOURCE=$origin/../$TARBALL
fi
# What Slurm's configure needs beyond the project's own packages (scripts/setup.sh): MUNGE for
# auth/munge and cred/munge, Lua 5.4 for cli_filter/lua (the project's cli_filter), json-c for
# the JSON serializer scontrol and the controller load.
BUILD_PACKAGES=(libmunge-dev liblua5.4-dev libjson-c-dev)

step() { printf '\n== slurm source [%4ss] %s\n' "$SECONDS" "$*"; }
fail() { echo "slurm source: $*" >&2; exit 1; }
usage() { echo "usage: $0 [--packages-only|--build-only|--tests-only]" >&2; exit 2; }

stage=all
label=cluster
for a in "$@"; do
  case $a in
    --packages-only | --build-only | --tests-only)
      [ "$stage" = all ] || usage
      stage=$a
      ;;
    --series-tests) label=slurm_series ;;
    *) usage ;;
  esac
done
case $stage$label in --packages-onlyslurm_series | --build-onlyslurm_series) usage ;; esac
[ "$(id -u)" = 0 ] || fail "needs root (packages, the test cluster): sudo $0"
# First, so that CI, which installs the packages before anything else, fails at once without it.
[ -f "$SOURCE" ] ||
  fail "no Slurm source at $SOURCE: set DDP_SLURM_SOURCE to SchedMD's tarball (slurm-VERSION.tar.xz or .tar.bz2)"

install_packages() {
  local missing=() p
  for p in "${BUILD_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
  done
  ((${#missing[@]} == 0)) && return 0
  step "apt-get install ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null ||
    fail "cannot install ${missing[*]} (apt-get update first?)"
}
if [ "$stage" = --packages-only ]; then
  install_packages
  exit 0
fi

SOURCE=$(realpath "$SOURCE")
version=$(basename "$SOURCE")
version=${version#slurm-}
version=${version%.tar.*}
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || fail "cannot read a Slurm version from the name $SOURCE (slurm-25.11.7.tar.xz)"
work=$CACHE/slurm-$version
prefix=$work/prefix
build=$work/ddp-build
# The Debian 12 build whose LibTorch programs the cluster tests run (see torch_programs).
TORCH_BUILD=${DDP_TORCH_BUILD:-$REPO/build}
# The test cluster runs its jobs as nobody, who must reach the prefix and the build.
mkdir -p "$work"
chmod 755 "$CACHE" "$work"

# Drops plugin families from the generated Makefile's SUBDIRS (make expands it when the recursive
# rule runs, after the whole Makefile is read). A family no longer listed fails the check: the
# recipe would claim a cut that no longer happens.
leave_out_plugins() {
  local makefile=$1 family
  for family in "${unbuilt_plugins[@]}"; do
    sed -n '/^SUBDIRS =/,/[^\\]$/p' "$makefile" | grep -qw -- "$family" ||
      fail "$makefile lists no plugin family $family: update unbuilt_plugins for Slurm $version"
  done
  printf '\nSUBDIRS := $(filter-out %s,$(SUBDIRS))\n' "${unbuilt_plugins[*]}" >>"$makefile"
}

if [ "$stage" != --tests-only ]; then
  install_packages
  # The recipe: the tarball and how it is built. A changed one builds Slurm again.
  # Shared libraries only, at -O2 without -g: the static archives and the debug information were
  # two fifths of Slurm's build here, and no test links or debugs them.
  configure=(--prefix="$prefix" --sysconfdir="$prefix/etc" --disable-debug --disable-dependency-tracking
    --disable-static CFLAGS=-O2)
  # Plugin families that neither a 2-node test cluster nor the plugin loads: data_parser (the
  # OpenAPI serializers, a quarter of the plugins' code: only --json/--yaml output and slurmrestd
  # use them) and burst_buffer.
  unbuilt_plugins=(data_parser burst_buffer)
  recipe="$(sha256sum "$SOURCE" | cut -d' ' -f1) ${configure[*]} without ${unbuilt_plugins[*]}"
  if [ "$(cat "$prefix/.ddp-recipe" 2>/dev/null)" != "$recipe" ]; then
    rm -rf "$prefix" "$work/src"
    mkdir -p "$work/src"
    step "Slurm $version: unpack $SOURCE"
    tar -xf "$SOURCE" -C "$work/src" --strip-components=1
    step "Slurm $version: ./configure ${configure[*]}"
    (cd "$work/src" && ./configure "${configure[@]}" >"$work/configure.log" 2>&1) ||
      { tail -30 "$work/configure.log"; fail "Slurm's configure failed (log: $work/configure.log)"; }
    leave_out_plugins "$work/src/src/plugins/Makefile"
    step "Slurm $version: make -j$(nproc) && make install"
    (cd "$work/src" && make -j"$(nproc)" >"$work/make.log" 2>&1 && make install >"$work/install.log" 2>&1) ||
      { tail -30 "$work/make.log" "$work/install.log" 2>/dev/null; fail "Slurm's build failed (logs in $work)"; }
    rm -rf "$work/src"
    echo "$recipe" >"$prefix/.ddp-recipe"
  fi
  runuser -u nobody -- test -x "$prefix/bin/srun" ||
    fail "user nobody cannot run $prefix/bin/srun: every folder above it must be readable by all"

  step "slurm-ddp against Slurm $version: cmake -DSLURM_ROOT=$prefix"
  rm -rf "$build" "$work/built"
  # The programs the cluster tests run that reach no Slurm API (the trainer, its data maker, the
  # libddp worker, the stand-in CUDA driver) come from the Debian 12 build: they link LibTorch,
  # not libslurm, and would be compiled a second time for nothing.
  torch_programs=(
    DDP_TEST_CIFAR100_BIN=trainer/ddp-cifar100
    DDP_TEST_CIFAR_SYNTH_BIN=trainer/data/cifar-synth
    DDP_TEST_WORKER_BIN=tests/runtime/ddp_test_worker
    DDP_TEST_FAKE_LIBCUDA=tests/preflight/libfake_cuda_driver.so
  )
  cache_args=()
  for entry in "${torch_programs[@]}"; do
    [ -x "$TORCH_BUILD/${entry#*=}" ] ||
      fail "no $TORCH_BUILD/${entry#*=}, which the cluster tests run: build it first (scripts/setup.sh), or set DDP_TORCH_BUILD to a build tree that has it"
    cache_args+=("-D${entry%%=*}=$TORCH_BUILD/${entry#*=}")
  done
  # As a site builds it; the unit tests are the Debian 12 check's (they touch no Slurm API).
  cmake -S "$REPO" -B "$build" -DSLURM_ROOT="$prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -DNDEBUG" -DDDP_BUILD_UNIT_TESTS=OFF "${cache_args[@]}" \
    >"$work/cmake.log" 2>&1 || { tail -30 "$work/cmake.log"; fail "cmake failed (log: $work/cmake.log)"; }
  found=$(sed -n 's/^SLURM_INCLUDE_DIR:PATH=//p' "$build/CMakeCache.txt")
  [ "$found" = "$prefix/include" ] || fail "the build found Slurm's headers in $found, not in $prefix/include"
  # What links libslurm or is loaded by Slurm (ddp-preflight links the watch's requeue), what the
  # cluster tests run beside it, and the man pages the plugin's install takes.
  targets=(spank_ddp ddp-plan ddp-watch ddp-monitor ddp-report ddp-preflight fake_nvml)
  cmake --build "$build" --target help >"$work/targets.txt"
  for optional in man spank_ddp_asan; do
    grep -qE "^\.\.\. $optional( |\$)" "$work/targets.txt" && targets+=("$optional")
  done
  cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" >"$work/build.log" 2>&1 ||
    { grep -E -m 20 'error|Error' "$work/build.log"; tail -20 "$work/build.log"; fail "the build failed (log: $work/build.log)"; }
  # The failure watch must find this libslurm although the loader would not (the cluster tests
  # of --ddp-retries and of a suspended job fail when it does not), and so must the installed
  # programs that link it.
  soname=$(objdump -p "$prefix/lib/libslurm.so" | awk '$1 == "SONAME" { print $2 }')
  [ -n "$soname" ] || fail "cannot read the soname of $prefix/lib/libslurm.so"
  ldconfig -p >"$work/ldconfig.txt"
  if awk -v p="$prefix/" -v s="$soname" 'index($0, p) && index($0, s) { found = 1 } END { exit !found }' \
    "$work/ldconfig.txt" || [ -n "${LD_LIBRARY_PATH:-}" ]; then
    fail "the loader finds $prefix's $soname (ldconfig or LD_LIBRARY_PATH): this check would not test a Slurm outside its path"
  fi
  rm -rf "$work/installed"
  DESTDIR=$work/installed cmake --install "$build" --component plugin >/dev/null
  for program in ddp-plan ddp-report; do
    installed=$(find "$work/installed" -name "$program" -type f)
    "$installed" --help >/dev/null ||
      fail "the installed $program does not start (ldd: $(ldd "$installed" | grep 'not found' | tr -s ' \t' ' '))"
  done
  runuser -u nobody -- test -x "$build/watch/ddp-watch" ||
    fail "user nobody, whose jobs run the build's programs, cannot reach $build/watch/ddp-watch"
  touch "$work/built"
  [ "$stage" != --build-only ] || exit 0
fi

[ -e "$work/built" ] || fail "no finished build in $build: run $0 --build-only first"
# Then the tests labelled cgroup on cgroup-confined nodes (tests/cluster/confined.sh); with
# --series-tests those run there only.
skip=
[ "$label" = cluster ] || skip=cgroup
step "the cluster tests on Slurm $version ($prefix): ctest -L $label${skip:+ -LE $skip}, then -L cgroup on cgroup-confined nodes"
rc=0
# The lab's daemons live on in the namespace's /run: down.sh ends them also when ctest does not.
# Never on this machine's own /run: the namespace's is mounted first, or nothing runs.
# shellcheck disable=SC2016 # expanded by the inner bash
unshare --mount --uts --propagation private -- bash -c '
  set -e
  mount -t tmpfs -o mode=0755 tmpfs /run
  export LAB_SLURM_PREFIX=$1 REPO=$3
  trap "\"\$REPO/tests/cluster/down.sh\" >/dev/null 2>&1" EXIT
  hostname ctl
  ctest --test-dir "$2" -L "$4" ${5:+-LE "$5"} --output-on-failure
  "$REPO/tests/cluster/confined.sh" "$2"' \
  slurm-source "$prefix" "$build" "$REPO" "$label" "$skip" 2>&1 | tee "$work/ctest.log" || rc=$?
echo "slurm source: Slurm $("$prefix/sbin/slurmd" -V | cut -d' ' -f2) from $SOURCE," \
  "$(grep -E '^[0-9]+% tests passed' "$work/ctest.log" | paste -sd';' - || echo 'ctest printed no summary')"
exit "$rc"
