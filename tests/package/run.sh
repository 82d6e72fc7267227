#!/bin/bash
# The package check: builds the .deb from an existing build tree (cpack), installs it on this
# machine (dpkg -i), runs the cluster integration tests against the INSTALLED plugin, profiles,
# cli_filter and ddp-plan, brings the test cluster up once more from the installed plugstack.conf.d
# snippet as it is, builds tests/package/consumer against the installed libddp (CMake
# find_package and pkg-config) and runs it, then removes the package (dpkg -r, then --purge) and
# checks that nothing it installed is left. With rpmbuild present it also builds the .rpm and
# checks its contents.
#
# It leaves the machine as it found it, also on failure or Ctrl-C: the package is purged, packages
# apt pulled in for it are removed again, the test cluster is taken down.
#
#   sudo tests/package/run.sh [BUILD_DIR]   (default build/, configured by scripts/setup.sh)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=$(realpath "${1:-$ROOT/build}")
PKG=slurm-ddp
ARCH_LIBDIR=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)

step() { printf '\n== [%3ss] %s\n' "$SECONDS" "$*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || fail "needs root (dpkg -i, the test cluster): sudo $0"
[ -f "$BUILD_DIR/CMakeCache.txt" ] || fail "$BUILD_DIR is no build tree; run scripts/setup.sh first"
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$BUILD_DIR/CMakeCache.txt")
[ "$prefix" = /usr ] ||
  fail "$BUILD_DIR is configured for CMAKE_INSTALL_PREFIX=$prefix; a Debian package installs into /usr: cmake -DCMAKE_INSTALL_PREFIX=/usr $BUILD_DIR (scripts/setup.sh does)"
if status=$(dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null) && [ -n "$status" ] &&
  [ "$status" != "unknown ok not-installed" ]; then
  fail "$PKG is on this machine already ($status); this test installs and removes it, so remove it first: dpkg --purge $PKG"
fi

WORK=$(mktemp -d /tmp/ddp-package.XXXXXX)
chmod 755 "$WORK"
dpkg-query -W -f='${Package}:${Architecture} ${Status}\n' | awk '$NF == "installed" { print $1 }' |
  sort >"$WORK/packages.before"

cleanup() {
  local rc=$? added
  trap - EXIT INT TERM
  set +e
  "$ROOT/tests/cluster/down.sh" >/dev/null 2>&1
  if [ -n "$(dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null)" ]; then
    dpkg --purge "$PKG" >/dev/null 2>&1 || echo "WARNING: dpkg --purge $PKG failed" >&2
  fi
  # Packages that apt-get install -f added for ours (none where scripts/setup.sh ran).
  dpkg-query -W -f='${Package}:${Architecture} ${Status}\n' | awk '$NF == "installed" { print $1 }' |
    sort >"$WORK/packages.after"
  added=$(comm -13 "$WORK/packages.before" "$WORK/packages.after")
  if [ -n "$added" ]; then
    echo "removing the packages installed for $PKG: $added"
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq $added >/dev/null
  fi
  rm -rf "$WORK"
  if ((rc == 0)); then
    printf '\n== [%3ss] PASS: the package installs, works from its installed files, and leaves nothing behind\n' "$SECONDS"
  else
    printf '\n== [%3ss] FAIL (exit %s); the package and the test cluster were removed\n' "$SECONDS" "$rc" >&2
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------------------------ build (cpack) --

step "build $BUILD_DIR and package it (cpack -G DEB)"
cmake --build "$BUILD_DIR" -j "$(nproc)" >"$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log"; fail "build"; }
rm -f "$BUILD_DIR"/packages/*.deb "$BUILD_DIR"/packages/*.rpm
(cd "$BUILD_DIR" && cpack -G DEB) >"$WORK/cpack.log" 2>&1 || { cat "$WORK/cpack.log"; fail "cpack -G DEB"; }
deb=$(ls "$BUILD_DIR"/packages/"$PKG"_*.deb)
echo "$deb"
dpkg-deb -f "$deb" Package Version Architecture Depends Recommends
depends=$(dpkg-deb -f "$deb" Depends)
for dep in libslurm38 slurm-wlm-basic-plugins libhwloc15 libyaml-cpp0.7; do
  [[ $depends == *"$dep"* ]] || fail "Depends lacks $dep: $depends"
done
if [ -f "$BUILD_DIR/runtime/libddp.so" ]; then
  for dep in libtorch1.13 libspdlog1.10; do
    [[ $depends == *"$dep"* ]] || fail "Depends lacks $dep (libddp needs it): $depends"
  done
fi
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles >"$WORK/conffiles.deb" ||
  fail "the .deb has no conffiles"
echo "conffiles: $(tr '\n' ' ' <"$WORK/conffiles.deb")"
# Everything under /etc is a conffile, and every conffile is in the package.
dpkg-deb --fsys-tarfile "$deb" | tar -t | sed 's|^\./|/|' | grep '^/etc/.*[^/]$' | sort >"$WORK/etc.deb"
diff <(sort "$WORK/conffiles.deb") "$WORK/etc.deb" || fail "conffiles differ from the files under /etc"

if command -v rpmbuild >/dev/null; then
  step "RPM (cpack -G RPM): contents, %config files, requirements"
  (cd "$BUILD_DIR" && cpack -G RPM) >"$WORK/cpack-rpm.log" 2>&1 || { cat "$WORK/cpack-rpm.log"; fail "cpack -G RPM"; }
  rpm_file=$(ls "$BUILD_DIR"/packages/"$PKG"-*.rpm)
  echo "$rpm_file"
  rpm -qp --configfiles "$rpm_file" | sort >"$WORK/config.rpm"
  diff "$WORK/etc.deb" "$WORK/config.rpm" || fail "the RPM's %config files differ from the .deb's conffiles"
  # The RPM owns its files and its own directories, never Slurm's or the system's.
  rpm_paths=$(rpm -qpl "$rpm_file")
  for d in /etc /etc/slurm /etc/slurm/plugstack.conf.d /usr /usr/lib "$ARCH_LIBDIR" "$ARCH_LIBDIR/slurm-wlm" \
    /usr/include /usr/share/man/man1; do
    ! grep -qx "$d" <<<"$rpm_paths" || fail "the RPM owns the directory $d"
  done
  requires=$(rpm -qp --requires "$rpm_file" | grep -v '^rpmlib' | sort -u)
  grep -q '^slurm >= ' <<<"$requires" || fail "the RPM does not require slurm: $requires"
  grep -q '^libslurm\.so' <<<"$requires" || fail "the RPM does not require libslurm: $requires"
  echo "RPM: $(wc -l <<<"$rpm_paths") paths; requires: $(tr '\n' ' ' <<<"$requires")"
else
  echo "(no rpmbuild here: the RPM is not built)"
fi

# --------------------------------------------------------------------------------- install --

step "install: dpkg -i (apt-get install -f for missing dependencies)"
if ! dpkg -i "$deb" >"$WORK/dpkg.log" 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -f -y -qq >>"$WORK/dpkg.log" 2>&1 ||
    { cat "$WORK/dpkg.log"; fail "installing $deb"; }
fi
[ "$(dpkg-query -W -f='${Status}' "$PKG")" = "install ok installed" ] || { cat "$WORK/dpkg.log"; fail "not installed"; }
dpkg -L "$PKG" | sort >"$WORK/installed"
dpkg-query -W -f='${Conffiles}\n' "$PKG" | awk 'NF { print $1 }' | sort >"$WORK/conffiles"

installed() { grep -E -m 1 "$1" "$WORK/installed" || true; }
plugin=$(installed '/spank_ddp\.so$')
snippet=$(installed '/plugstack\.conf\.d/ddp\.conf$')
cli_filter=$(installed '/ddp/cli_filter\.lua$')
profile_dir=$(dirname "$(installed '/ddp/profiles/vega\.yaml$')")
plan_bin=$(installed '/bin/ddp-plan$')
report_bin=$(installed '/bin/ddp-report$')
sampler=$(installed '/libexec/slurm-ddp/ddp-monitor$')
for f in "$plugin" "$snippet" "$cli_filter" "$profile_dir" "$plan_bin" "$report_bin" "$sampler"; do
  [ -n "$f" ] && [ -e "$f" ] || fail "the package lacks one of spank_ddp.so, ddp.conf, cli_filter.lua, profiles, ddp-plan, ddp-report, ddp-monitor"
done
grep -qE '/man1/ddp-report\.1\.gz$' "$WORK/installed" || fail "ddp-report is installed without its man page"
printf '%s\n' "plugin      $plugin" "snippet     $snippet" "cli_filter  $cli_filter" \
  "profiles    $profile_dir" "ddp-plan    $plan_bin"
[[ $plugin == "$ARCH_LIBDIR/slurm-wlm/spank_ddp.so" ]] || echo "note: plugin not in Debian's Slurm plugin directory"
line=$(grep -E '^(required|optional)' "$snippet")
[[ $line == "required $plugin "* ]] || fail "$snippet does not load the installed plugin: $line"
[[ " $line " == *" profile_dir=$profile_dir "* ]] || fail "$snippet does not name the installed profiles: $line"
for f in "$ARCH_LIBDIR/libddp.so.0" /usr/include/ddp/context.hpp /usr/include/ddp/rendezvous.hpp /usr/bin/ddp-preflight \
  "$ARCH_LIBDIR/cmake/slurm-ddp/slurm-ddp-config.cmake" \
  "$ARCH_LIBDIR/pkgconfig/slurm-ddp.pc"; do
  [ ! -f "$BUILD_DIR/runtime/libddp.so" ] || grep -qx "$f" "$WORK/installed" || fail "the package lacks $f"
done
"$plan_bin" --version
"$plan_bin" --plugstack "profile_dir=$profile_dir" --check-profile vega >/dev/null ||
  fail "ddp-plan cannot load the installed profile vega"
trainer=$(installed '/bin/ddp-cifar100$')
if [ -n "$trainer" ]; then
  "$trainer" --help >/dev/null || fail "ddp-cifar100 --help"
  grep -qE '/man1/ddp-cifar100\.1\.gz$' "$WORK/installed" || fail "ddp-cifar100 is installed without its man page"
fi
# Man pages: installed, found by man, and free of groff warnings (as lintian checks them).
for page in $(grep -E '/man/man[0-9]/.*\.gz$' "$WORK/installed"); do
  name=$(basename "$page" .gz)
  man -w "${name%.*}" >/dev/null || fail "man does not find ${name%.*}"
  warnings=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$page" 2>&1 >/dev/null)
  [ -z "$warnings" ] || fail "groff warnings in $page: $warnings"
  echo "man page $name: ok"
done
grep -qE '/man8/spank-ddp\.8\.gz$' "$WORK/installed" || fail "the package has no spank-ddp(8)"

# ------------------------------------------------------------- cluster tests, installed files --

step "cluster tests against the installed plugin, cli_filter, profiles and ddp-plan"
CT="$BUILD_DIR/package-cluster-tests"
# Configured only (nothing is built there): the tests take every file they load from the package,
# except the trainer test's synthetic data generator and the concurrent-steps test's libddp worker
# (neither is packaged), from BUILD_DIR.
trainer_args=()
worker=$(find "$BUILD_DIR/tests/runtime" -name ddp_test_worker -type f -perm -u+x -print -quit 2>/dev/null || true)
[ -z "$worker" ] || trainer_args+=(-DDDP_TEST_WORKER_BIN="$worker")
preflight=$(installed '/bin/ddp-preflight$')
[ -z "$preflight" ] || trainer_args+=(-DDDP_TEST_PREFLIGHT_BIN="$preflight")
trainer=$(installed '/bin/ddp-cifar100$')
synth=$(find "$BUILD_DIR/trainer" -name cifar-synth -type f -perm -u+x -print -quit 2>/dev/null || true)
if [ -n "$trainer" ] && [ -n "$synth" ]; then
  trainer_args+=(-DDDP_TEST_CIFAR100_BIN="$trainer" -DDDP_TEST_CIFAR_SYNTH_BIN="$synth")
fi
# The monitor test: the installed ddp-report, the sampler the installed plugin finds by itself
# (DDP_TEST_MONITOR_BIN empty: no monitor= argument), and the build tree's fake NVML (not packaged).
monitor_args=(-DDDP_TEST_MONITOR_BIN= -DDDP_TEST_REPORT_BIN="$report_bin")
fake_nvml=$(find "$BUILD_DIR/tests/monitor" -name libnvidia-ml.so.1 -type f -print -quit 2>/dev/null || true)
monitor_args+=(-DDDP_TEST_FAKE_NVML_DIR="$(dirname "${fake_nvml:-/nonexistent/x}")")
cmake -S "$ROOT" -B "$CT" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr -DDDP_BUILD_MAN=OFF \
  -DDDP_TEST_PLUGIN="$plugin" -DDDP_TEST_CLI_FILTER="$cli_filter" -DDDP_TEST_PROFILE_DIR="$profile_dir" \
  -DDDP_TEST_PLAN_BIN="$plan_bin" "${monitor_args[@]}" "${trainer_args[@]}" >"$WORK/configure.log" 2>&1 ||
  { cat "$WORK/configure.log"; fail "configure $CT"; }
grep -q "DDP_SPANK_PLUGIN=$plugin" "$CT/tests/cluster/CTestTestfile.cmake" || fail "the cluster tests do not use $plugin"
ctest --test-dir "$CT" -R '^cluster\.' --output-on-failure || fail "cluster tests against the installed package"

step "the test cluster from the installed plugstack.conf.d snippet and cli_filter, as they are"
DDP_PLUGSTACK_SNIPPET="$snippet" DDP_CLI_FILTER="$cli_filter" "$ROOT/tests/cluster/up.sh" >"$WORK/up.log" 2>&1 ||
  { cat "$WORK/up.log"; fail "up.sh with the installed snippet"; }
cat >"$WORK/job.sh" <<'EOF'
#!/bin/bash
srun bash -c 'echo "task host=$(hostname) RANK=$RANK WORLD_SIZE=$WORLD_SIZE LOCAL_RANK=$LOCAL_RANK MASTER_ADDR=$MASTER_ADDR MASTER_PORT=$MASTER_PORT DDP_PROFILE=$DDP_PROFILE DDP_LAUNCHER=${DDP_LAUNCHER// /_}"'
EOF
chmod 755 "$WORK/job.sh"
"$ROOT/tests/cluster/run.sh" sbatch --ddp-nodes=2 --ddp-gpus=2 --ddp-profile=ethernet --wait \
  -o "$WORK/job.out" "$WORK/job.sh" >/dev/null || { cat "$WORK/job.out" 2>/dev/null; fail "sbatch --ddp-nodes=2 --ddp-gpus=2"; }
cat "$WORK/job.out"
[ "$(grep -c '^task .* WORLD_SIZE=4 .* DDP_PROFILE=ethernet DDP_LAUNCHER=spank_ddp' "$WORK/job.out")" = 4 ] ||
  fail "expected 4 tasks with WORLD_SIZE=4 and the installed profile ethernet"
[ "$(sed -n 's/.* RANK=\([0-9]*\) .*/\1/p' "$WORK/job.out" | sort | tr '\n' ' ')" = "0 1 2 3 " ] || fail "ranks"
port=$(sed -n 's/.* MASTER_PORT=\([0-9]*\) .*/\1/p' "$WORK/job.out" | sort -u)
[[ $port =~ ^[0-9]+$ ]] && ((port >= 20000 && port <= 29999)) || fail "MASTER_PORT=$port is not one port in the snippet's port_range=20000-29999"
out=$("$ROOT/tests/cluster/run.sh" sbatch --ddp-nodes=0 "$WORK/job.sh" 2>&1) && fail "sbatch --ddp-nodes=0 was accepted"
[[ $out == *"--ddp-nodes='0' is out of range"* ]] || fail "no option error from the installed plugin: $out"
"$ROOT/tests/cluster/down.sh" >/dev/null

# ------------------------------------------------------------ a program against the runtime --

if [ -f "$BUILD_DIR/runtime/libddp.so" ]; then
  step "tests/package/consumer: find_package(slurm-ddp) and pkg-config against the installed libddp"
  cmake -S "$ROOT/tests/package/consumer" -B "$WORK/consumer" >"$WORK/consumer.log" 2>&1 &&
    cmake --build "$WORK/consumer" >>"$WORK/consumer.log" 2>&1 || { cat "$WORK/consumer.log"; fail "building the consumer"; }
  # (/lib is /usr/lib on a merged-/usr system: compare real paths)
  uses=$(ldd "$WORK/consumer/ddp-consumer" | awk '$1 == "libddp.so.0" { print $3 }')
  [ -n "$uses" ] && [ "$(realpath "$uses")" = "$(realpath "$ARCH_LIBDIR/libddp.so.0")" ] ||
    fail "the consumer does not use the installed libddp.so.0 but '$uses'"
  # shellcheck disable=SC2046
  g++ -std=c++17 -o "$WORK/ddp-consumer-pc" "$ROOT/tests/package/consumer/main.cpp" \
    $(pkg-config --cflags --libs slurm-ddp) || fail "building the consumer with pkg-config"
  torchrun_env=(RANK=1 LOCAL_RANK=1 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 GROUP_RANK=0
    MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 TORCHELASTIC_RUN_ID=package-test)
  # PyTorch's own DistributedSampler gives the expected shard, where python3-torch is installed.
  expected=$(/usr/bin/python3 -c '
from torch.utils.data.distributed import DistributedSampler
s = DistributedSampler(range(10), num_replicas=4, rank=1, shuffle=True, seed=7)
s.set_epoch(3)
print(",".join(str(i) for i in s))' 2>/dev/null) || expected=
  for bin in "$WORK/consumer/ddp-consumer" "$WORK/ddp-consumer-pc"; do
    out=$(env -i PATH=/usr/bin:/bin "${torchrun_env[@]}" "$bin") || fail "$bin failed: $out"
    echo "$(basename "$bin"): $out"
    [[ $out == "contract=torchrun rank=1/4 local=1/2 node=0 master=127.0.0.1:29500 indices="* ]] ||
      fail "unexpected contract from $bin: $out"
    [ -z "$expected" ] || [ "${out##*indices=}" = "$expected" ] ||
      fail "shard ${out##*indices=} differs from PyTorch's DistributedSampler: $expected"
  done
  [ -n "$expected" ] && echo "shard matches PyTorch's DistributedSampler: $expected"
  out=$(env -i PATH=/usr/bin:/bin RANK=0 "$WORK/consumer/ddp-consumer" 2>&1) && fail "an incomplete contract was accepted"
  echo "incomplete contract refused: $out"
fi

# ---------------------------------------------------------------------------------- removal --

step "dpkg -r keeps only the conffiles, dpkg --purge leaves nothing"
# A path from dpkg -L may stay only as a directory that holds files that are not ours (each of
# ours is checked itself) or, when empty, that another package owns.
leftovers() {
  local path
  while read -r path; do
    [ -e "$path" ] || [ -L "$path" ] || continue
    if [ -d "$path" ] && [ ! -L "$path" ]; then
      [ -n "$(ls -A "$path")" ] && continue
      dpkg -S "$path" >/dev/null 2>&1 && continue
    fi
    echo "$path"
  done
}
dpkg -r "$PKG" >"$WORK/remove.log" 2>&1 || { cat "$WORK/remove.log"; fail "dpkg -r"; }
left=$(grep -vxF -f "$WORK/conffiles" "$WORK/installed" | leftovers)
[ -z "$left" ] || fail "dpkg -r left files behind: $left"
while read -r f; do [ -f "$f" ] || fail "dpkg -r removed the conffile $f"; done <"$WORK/conffiles"
echo "after dpkg -r: of $(wc -l <"$WORK/installed") paths only the $(wc -l <"$WORK/conffiles") conffiles (and shared directories) are left"
dpkg --purge "$PKG" >>"$WORK/remove.log" 2>&1 || { cat "$WORK/remove.log"; fail "dpkg --purge"; }
left=$(leftovers <"$WORK/installed")
[ -z "$left" ] || fail "dpkg --purge left files behind: $left"
[ -z "$(dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null)" ] || fail "dpkg still knows $PKG"
echo "after dpkg --purge: nothing of $PKG is left"
