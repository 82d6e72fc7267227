#!/bin/bash
# The package check. From an existing build tree it builds every package (cmake --target packages:
# the plugin package slurm-spank-ddp, the runtime libddp with its -dev package, the trainer; the
# .rpm files too where rpmbuild exists) and checks what each holds and depends on. Then, on this
# machine:
#   1. the plugin package ALONE: its dependencies reach no Torch package; dpkg -i; the test
#      cluster comes up from its installed plugstack.conf.d snippet and cli_filter, as they are;
#   2. the runtime, -dev, trainer and preflight packages: dpkg -i; the cluster integration tests run against
#      the INSTALLED plugin, profiles, cli_filter, ddp-plan and trainer; tests/package/consumer is
#      built against the installed libddp (CMake find_package and pkg-config) and run;
#   3. dpkg -r keeps only the plugin's conffiles, dpkg --purge leaves nothing.
# Nothing here names a Slurm or LibTorch version or soname: they are read from the build and from
# dpkg, so the check runs on every platform the project builds on (Debian 12: Slurm 22.05,
# LibTorch 1.13; Debian 13: Slurm 24.11, LibTorch 2.6; forky/sid: Slurm 26.05, LibTorch 2.14).
#
# It leaves the machine as it found it, also on failure or Ctrl-C: the packages are purged,
# packages apt pulled in for them are removed again, the test cluster is taken down.
#
#   sudo tests/package/run.sh [BUILD_DIR] [--cluster-tests=LABELS] [--cluster-skip=REGEX]
#     BUILD_DIR: default build/, configured by scripts/setup.sh
#     LABELS: only the cluster tests with a CTest label that matches this regular expression
#       (default: every cluster test); CI gives Debian 12 `extended` (the README's `ctest` ran the
#       others from the build tree) and the other platforms `slurm_series|torch_api`
#     REGEX: leaves out the cluster tests whose names match (CI: those it runs on cgroup-confined
#       nodes next, tests/cluster/confined.sh, and on plain ones on the other platforms)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
build_arg=
cluster_labels=
cluster_skip=
usage() { echo "usage: $0 [BUILD_DIR] [--cluster-tests=LABELS] [--cluster-skip=REGEX]" >&2; exit 2; }
for a in "$@"; do
  case $a in
    --cluster-tests=?*) cluster_labels=${a#--cluster-tests=} ;;
    --cluster-skip=?*) cluster_skip=${a#--cluster-skip=} ;;
    -*) usage ;;
    *) [ -z "$build_arg" ] || usage
       build_arg=$a ;;
  esac
done
BUILD_DIR=$(realpath "${build_arg:-$ROOT/build}")
PLUGIN_PKG=slurm-spank-ddp
OLD_PKG=slurm-ddp  # the one package before the split
LEFT_MARK=/var/lib/slurm-ddp-package-test.installed  # there while this test's packages are on the machine
ARCH_LIBDIR=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)

step() { printf '\n== [%3ss] %s\n' "$SECONDS" "$*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
is_installed() { dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -qv 'not-installed'; }
field() { dpkg-deb -f "$1" "$2"; }

[ "$(id -u)" = 0 ] || fail "needs root (dpkg -i, the test cluster): sudo $0"
[ -f "$BUILD_DIR/CMakeCache.txt" ] || fail "$BUILD_DIR is no build tree; run scripts/setup.sh first"
cache() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD_DIR/CMakeCache.txt"; }
prefix=$(cache CMAKE_INSTALL_PREFIX)
[ "$prefix" = /usr ] ||
  fail "$BUILD_DIR is configured for CMAKE_INSTALL_PREFIX=$prefix; a Debian package installs into /usr: cmake -DCMAKE_INSTALL_PREFIX=/usr $BUILD_DIR (scripts/setup.sh does)"
have_runtime=0
[ -f "$BUILD_DIR/runtime/libddp.so" ] && have_runtime=1

WORK=$(mktemp -d /tmp/ddp-package.XXXXXX)
chmod 755 "$WORK"
dpkg-query -W -f='${Package}:${Architecture} ${Status}\n' | awk '$NF == "installed" { print $1 }' |
  sort >"$WORK/packages.before"
OURS=()  # the package names, once read from the .deb files

cleanup() {
  local rc=$? added p
  trap - EXIT INT TERM
  set +e
  "$ROOT/tests/cluster/down.sh" >/dev/null 2>&1
  for p in "${OURS[@]}"; do
    if [ -n "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" ]; then
      dpkg --purge "$p" >/dev/null 2>&1 || echo "WARNING: dpkg --purge $p failed" >&2
    fi
  done
  # Packages that apt-get install -f added for ours (none where scripts/setup.sh ran).
  dpkg-query -W -f='${Package}:${Architecture} ${Status}\n' | awk '$NF == "installed" { print $1 }' |
    sort >"$WORK/packages.after"
  added=$(comm -13 "$WORK/packages.before" "$WORK/packages.after")
  if [ -n "$added" ]; then
    echo "removing the packages installed for ours: $added"
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq $added >/dev/null
  fi
  rm -rf "$WORK"
  rm -f "$LEFT_MARK"
  if ((rc == 0)); then
    printf '\n== [%3ss] PASS: the packages install, work from their installed files, and leave nothing behind\n' "$SECONDS"
  else
    printf '\n== [%3ss] FAIL (exit %s); the packages and the test cluster were removed\n' "$SECONDS" "$rc" >&2
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------------ build (cmake --target packages) --

step "build $BUILD_DIR and its packages (cmake --build --target packages)"
cmake --build "$BUILD_DIR" -j "$(nproc)" >"$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log"; fail "build"; }
cmake --build "$BUILD_DIR" --target packages >"$WORK/cpack.log" 2>&1 || { cat "$WORK/cpack.log"; fail "packaging"; }
plugin_deb=$(ls "$BUILD_DIR"/packages/"$PLUGIN_PKG"_*.deb)
runtime_debs=()
for deb in "$BUILD_DIR"/packages/*.deb; do
  [ "$deb" = "$plugin_deb" ] || runtime_debs+=("$deb")
done
for deb in "$plugin_deb" "${runtime_debs[@]}"; do
  OURS+=("$(field "$deb" Package)")
done
echo "packages: ${OURS[*]}"
# A run that was cut off (machine stopped, SIGKILL) before its cleanup leaves its packages behind,
# with its mark: those it removes now. Packages installed any other way are someone's: never touched.
if [ -f "$LEFT_MARK" ]; then
  left=()
  for p in "${OURS[@]}" "$OLD_PKG"; do is_installed "$p" && left+=("$p"); done
  if ((${#left[@]})); then
    echo "an earlier run of this test was cut off ($(cat "$LEFT_MARK")); purging what it installed: ${left[*]}"
    dpkg --purge "${left[@]}" >"$WORK/left.log" 2>&1 || { cat "$WORK/left.log"; fail "dpkg --purge ${left[*]}"; }
  fi
  "$ROOT/tests/cluster/down.sh" >/dev/null 2>&1 || true
  rm -f "$LEFT_MARK"
fi
for p in "${OURS[@]}" "$OLD_PKG"; do
  ! is_installed "$p" || {
    OURS=()  # not ours to purge on the way out
    fail "$p is on this machine already; this test installs and removes the packages, so remove it first: dpkg --purge $p"
  }
done
if ((have_runtime)); then
  ((${#runtime_debs[@]} == 4)) || fail "expected 4 packages beside the plugin's (runtime, -dev, trainer, preflight): ${runtime_debs[*]}"
else
  ((${#runtime_debs[@]} == 0)) || fail "no libddp was built, yet there are packages beside the plugin's: ${runtime_debs[*]}"
fi
deb_of() { # the .deb whose Package is $1
  local d
  for d in "$plugin_deb" "${runtime_debs[@]}"; do
    if [ "$(field "$d" Package)" = "$1" ]; then echo "$d"; fi
  done
}
for deb in "$plugin_deb" "${runtime_debs[@]}"; do
  echo "--- $(basename "$deb")"
  dpkg-deb -f "$deb" Package Version Section Depends Recommends Suggests Breaks Replaces | sed 's/^/    /'
  dpkg-deb --fsys-tarfile "$deb" | tar -t | sed 's|^\./|/|' | grep -v '/$' | sort >"$WORK/files.$(field "$deb" Package)"
done

# The packages that hold the libraries FILE... need directly (their NEEDED entries, resolved as
# the dynamic loader does).
owners_of_needed() {
  local f so lib
  for f in "$@"; do
    while read -r so; do
      ldd "$f" | awk -v so="$so" '$1 == so && $3 ~ /^\// { print $3; exit }'
    done < <(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  done | sort -u | while read -r lib; do
    dpkg -S "$lib" 2>/dev/null || dpkg -S "$(realpath "$lib")" 2>/dev/null || true
  done | sed 's/:.*//; s/,.*//' | sort -u
}
# The package names a Depends field names (alternatives included, versions dropped).
depends_names() { sed 's/([^)]*)//g; s/|/,/g' <<<"$1" | tr ',' '\n' | awk 'NF { sub(/:.*/, "", $1); print $1 }' | sort -u; }

step "the plugin package: the Slurm series it was built for, its dependencies, its conffiles"
# The series of the Slurm whose headers the plugin was built against.
slurm_dev_version=$(dpkg-query -W -f='${Version}' libslurm-dev)
series=$(sed -E 's/^([0-9]+:)?([0-9]+)\.([0-9]+).*/\2.\3/' <<<"$slurm_dev_version")
echo "built against libslurm-dev $slurm_dev_version: Slurm series $series"
version=$(field "$plugin_deb" Version)
[[ $version == *"+slurm$series" ]] || fail "the plugin package's version $version does not name the Slurm series $series"
depends=$(field "$plugin_deb" Depends)
lo=$(grep -oE "slurm-wlm-basic-plugins \(>= [^)]+\)" <<<"$depends" | sed 's/.*>= //; s/)//') || true
hi=$(grep -oE "slurm-wlm-basic-plugins \(<< [^)]+\)" <<<"$depends" | sed 's/.*<< //; s/)//') || true
[ -n "$lo" ] && [ -n "$hi" ] || fail "the plugin package does not depend on one Slurm series: $depends"
# Exactly the series: every release of it, nothing before, nothing of the next.
installed_slurm=$(dpkg-query -W -f='${Version}' slurm-wlm-basic-plugins)
major=${series%.*} minor=${series#*.}
next="$major.$(printf '%0*d' "${#minor}" $((10#$minor + 1)))"
dpkg --compare-versions "$lo" eq "$series" || fail "lower bound $lo is not the series $series"
dpkg --compare-versions "$installed_slurm" lt "$hi" || fail "the range [$lo, $hi) refuses the installed Slurm $installed_slurm"
dpkg --compare-versions "$series.99-99" lt "$hi" || fail "the range [$lo, $hi) refuses a later release of $series"
dpkg --compare-versions "$next" ge "$hi" || fail "the range [$lo, $hi) admits the next series $next"
echo "Slurm range [$lo, $hi): admits $installed_slurm, refuses $next"
if grep -Eiq 'torch|libddp|ddp-cifar100' <<<"$depends"; then fail "the plugin package depends on Torch or libddp: $depends"; fi
# Every library its binaries need comes from a package it depends on (derived, not named here:
# libslurm, hwloc, yaml-cpp of this distribution).
dpkg-deb -x "$plugin_deb" "$WORK/plugin-files"
mapfile -t plugin_elves < <(find "$WORK/plugin-files" -type f -exec sh -c 'head -c4 "$1" | grep -q ELF' _ {} \; -print)
expected_elves="ddp-monitor ddp-plan ddp-report ddp-watch spank_ddp.so"
[ "$(printf '%s\n' "${plugin_elves[@]}" | xargs -n1 basename | sort | tr '\n' ' ')" = "$expected_elves " ] ||
  fail "expected the programs $expected_elves in the plugin package: ${plugin_elves[*]}"
needed_pkgs=$(owners_of_needed "${plugin_elves[@]}")
for lib in slurm hwloc yaml-cpp; do
  grep -q "$lib" <<<"$needed_pkgs" || fail "no package of $lib among the plugin's libraries' owners: $needed_pkgs"
done
missing=$(comm -23 <(echo "$needed_pkgs") <(depends_names "$depends"))
[ -z "$missing" ] || fail "the plugin package does not depend on $missing (its binaries need them)"
echo "depends on the owners of every library its binaries need: $(tr '\n' ' ' <<<"$needed_pkgs")"
dpkg-deb --ctrl-tarfile "$plugin_deb" | tar -xO ./conffiles >"$WORK/conffiles.deb" || fail "the plugin package has no conffiles"
echo "conffiles: $(tr '\n' ' ' <"$WORK/conffiles.deb")"
# Everything under /etc is a conffile, and every conffile is in the package; no other package has
# files under /etc.
grep '^/etc/' "$WORK/files.$PLUGIN_PKG" >"$WORK/etc.deb"
diff <(sort "$WORK/conffiles.deb") "$WORK/etc.deb" || fail "conffiles differ from the files under /etc"
for deb in "${runtime_debs[@]}"; do
  ! grep -q '^/etc/' "$WORK/files.$(field "$deb" Package)" || fail "$(basename "$deb") installs under /etc"
done

if ((have_runtime)); then
  step "the runtime, -dev and trainer packages: LibTorch, libddp, nothing of Slurm"
  holder() { # the packages beside the plugin's that hold a file matching $1
    local d
    for d in "${runtime_debs[@]}"; do
      if grep -q "$1" "$WORK/files.$(field "$d" Package)"; then field "$d" Package; fi
    done
  }
  runtime_pkg=$(holder '/libddp\.so\.[0-9]*$')
  [ "$(wc -w <<<"$runtime_pkg")" = 1 ] || fail "not one package holds libddp.so.N: $runtime_pkg"
  dev_pkg=$(holder '/include/ddp/context\.hpp$')
  trainer_pkg=$(holder '/bin/ddp-cifar100$')
  preflight_pkg=$(holder '/bin/ddp-preflight$')
  [ -n "$dev_pkg" ] && [ -n "$trainer_pkg" ] && [ -n "$preflight_pkg" ] ||
    fail "no package holds the headers, ddp-cifar100 or ddp-preflight"
  soname=$(readelf -d "$BUILD_DIR/runtime/libddp.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  [ "$runtime_pkg" = "libddp${soname#libddp.so.}" ] || fail "the runtime package $runtime_pkg is not named after its SONAME $soname"
  runtime_version=$(field "$(deb_of "$runtime_pkg")" Version)
  # libddp0 depends on the LibTorch it was built against, where a Debian package holds it.
  torch_pkgs=$(owners_of_needed "$BUILD_DIR/runtime/libddp.so" | grep -E 'torch' || true)
  rt_depends=$(field "$(deb_of "$runtime_pkg")" Depends)
  torch_dir=$(cache Torch_DIR)
  torch_dev=$(dpkg -S "$(realpath "$torch_dir/TorchConfig.cmake")" 2>/dev/null | sed 's/:.*//' || true)
  if [ -n "$torch_pkgs" ]; then
    missing=$(comm -23 <(echo "$torch_pkgs") <(depends_names "$rt_depends"))
    [ -z "$missing" ] || fail "$runtime_pkg does not depend on $missing, the LibTorch it was built against: $rt_depends"
    [ -n "$torch_dev" ] || fail "$torch_dir belongs to no package, yet LibTorch's libraries do"
    [[ $(field "$(deb_of "$dev_pkg")" Depends) == *"$torch_dev (>= "* ]] ||
      fail "$dev_pkg does not depend on $torch_dev, whose LibTorch it was built against"
    echo "$runtime_pkg depends on ${torch_pkgs//$'\n'/ }; $dev_pkg on $torch_dev"
  else
    echo "(LibTorch in $torch_dir is no Debian package: nothing to depend on)"
  fi
  # libddp needs no libslurm, hwloc or yaml-cpp (tests/runtime/libddp_needed_test.sh checks the
  # library); neither do its packages.
  for deb in "${runtime_debs[@]}"; do
    if grep -Eiq 'slurm|hwloc|yaml' <<<"$(field "$deb" Depends)"; then
      fail "$(basename "$deb") depends on Slurm, hwloc or yaml-cpp: $(field "$deb" Depends)"
    fi
  done
  for p in "$dev_pkg" "$trainer_pkg" "$preflight_pkg"; do
    [[ $(field "$(deb_of "$p")" Depends) == *"$runtime_pkg (= $runtime_version)"* ]] ||
      fail "$p does not depend on $runtime_pkg (= $runtime_version): $(field "$(deb_of "$p")" Depends)"
  done
  for f in /usr/bin/ddp-cifar100 /usr/bin/cifar-synth; do
    grep -qx "$f" "$WORK/files.$trainer_pkg" || fail "$trainer_pkg lacks $f"
  done
fi

step "every installed file is in exactly one package"
DESTDIR="$WORK/staged" cmake --install "$BUILD_DIR" >/dev/null
(cd "$WORK/staged" && find . -type f -o -type l) | sed 's|^\.||' | sort >"$WORK/files.staged"
for p in "${OURS[@]}"; do cat "$WORK/files.$p"; done | sort >"$WORK/files.packaged"
dups=$(uniq -d "$WORK/files.packaged")
[ -z "$dups" ] || fail "files in more than one package: $dups"
diff "$WORK/files.staged" "$WORK/files.packaged" >/dev/null ||
  { diff "$WORK/files.staged" "$WORK/files.packaged"; fail "cmake --install and the packages differ (<: in no package)"; }
echo "$(wc -l <"$WORK/files.staged") files, each in one package"

if command -v rpmbuild >/dev/null; then
  step "RPM: the Slurm series in the plugin's release and requirements, %config files"
  plugin_rpm=$(ls "$BUILD_DIR"/packages/"$PLUGIN_PKG"-*.rpm)
  echo "$plugin_rpm"
  release=$(rpm -qp --qf '%{RELEASE}' "$plugin_rpm")
  [[ $release == *"slurm$series"* ]] || fail "the plugin RPM's release $release does not name the Slurm series $series"
  rpm -qp --configfiles "$plugin_rpm" | sort >"$WORK/config.rpm"
  diff "$WORK/etc.deb" "$WORK/config.rpm" || fail "the RPM's %config files differ from the .deb's conffiles"
  requires=$(rpm -qp --requires "$plugin_rpm" | grep -v '^rpmlib' | sort -u)
  grep -qx "slurm >= $series" <<<"$requires" || fail "the plugin RPM does not require slurm >= $series: $requires"
  grep -qx "slurm < $hi" <<<"$requires" || fail "the plugin RPM does not require slurm < $hi: $requires"
  grep -q '^libslurm\.so' <<<"$requires" || fail "the plugin RPM does not require libslurm: $requires"
  ! grep -Eiq 'torch|libddp' <<<"$requires" || fail "the plugin RPM requires Torch or libddp: $requires"
  echo "release $release; requires: $(tr '\n' ' ' <<<"$requires")"
  for rpm_file in "$BUILD_DIR"/packages/*.rpm; do
    # An RPM owns its files and its own directories, never Slurm's or the system's.
    rpm_paths=$(rpm -qpl "$rpm_file")
    for d in /etc /etc/slurm /etc/slurm/plugstack.conf.d /usr /usr/lib "$ARCH_LIBDIR" "$ARCH_LIBDIR/slurm-wlm" \
      "$ARCH_LIBDIR/cmake" "$ARCH_LIBDIR/pkgconfig" /usr/include /usr/bin /usr/share/man/man1 /usr/share/man/man8; do
      ! grep -qx "$d" <<<"$rpm_paths" || fail "$(basename "$rpm_file") owns the directory $d"
    done
  done
  if ((have_runtime)); then
    rpm_requires() { rpm -qp --requires "$BUILD_DIR"/packages/"$1"-[0-9]*.rpm | grep -v '^rpmlib' | sort -u; }
    grep -q 'libtorch' <<<"$(rpm_requires libddp)" || fail "the libddp RPM does not require LibTorch: $(rpm_requires libddp)"
    for p in libddp-devel ddp-cifar100; do
      grep -q '^libddp = ' <<<"$(rpm_requires "$p")" || fail "the $p RPM does not require libddp of its version: $(rpm_requires "$p")"
    done
  fi
  echo "RPMs: $(cd "$BUILD_DIR/packages" && echo ./*.rpm)"
else
  echo "(no rpmbuild here: the RPMs are not built)"
fi

# ------------------------------------------------------------------ 1. the plugin package alone --

step "the plugin package alone: no Torch package among its dependencies; dpkg -i"
# What installing it would pull in, as apt resolves it from the distribution's package lists.
closure=$(depends_names "$depends" | xargs apt-cache depends --recurse --no-recommends --no-suggests \
  --no-conflicts --no-breaks --no-replaces --no-enhances 2>/dev/null | grep -E '^[a-z0-9<]' | sort -u)
grep -qx 'slurm-wlm-basic-plugins' <<<"$closure" || fail "apt resolves no Slurm for the plugin package"
if bad=$(grep -Ei 'torch|libddp|cuda|nccl' <<<"$closure"); then
  fail "installing $PLUGIN_PKG would pull in: $bad"
fi
echo "its dependencies reach $(wc -l <<<"$closure") packages, none of Torch, CUDA or libddp"
install_debs() {
  if ! dpkg -i "$@" >"$WORK/dpkg.log" 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -f -y -qq >>"$WORK/dpkg.log" 2>&1 ||
      { cat "$WORK/dpkg.log"; fail "installing $*"; }
  fi
}
echo "pid $$, $(date -u +%FT%TZ)" >"$LEFT_MARK"
install_debs "$plugin_deb"
[ "$(dpkg-query -W -f='${Status}' "$PLUGIN_PKG")" = "install ok installed" ] || { cat "$WORK/dpkg.log"; fail "not installed"; }
for p in "${OURS[@]}"; do
  [ "$p" = "$PLUGIN_PKG" ] || ! is_installed "$p" || fail "installing $PLUGIN_PKG installed $p too"
done
dpkg -L "$PLUGIN_PKG" | sort >"$WORK/installed.plugin"
installed() { grep -hE "$1" "$WORK"/installed.* | head -1; }
plugin=$(installed '/spank_ddp\.so$')
snippet=$(installed '/plugstack\.conf\.d/ddp\.conf$')
cli_filter=$(installed '/ddp/cli_filter\.lua$')
profile_dir=$(dirname "$(installed '/ddp/profiles/vega\.yaml$')")
plan_bin=$(installed '/bin/ddp-plan$')
report_bin=$(installed '/bin/ddp-report$')
sampler=$(installed '/libexec/slurm-ddp/ddp-monitor$')
watch=$(installed '/libexec/slurm-ddp/ddp-watch$')
for f in "$plugin" "$snippet" "$cli_filter" "$profile_dir" "$plan_bin" "$report_bin" "$sampler" "$watch"; do
  [ -n "$f" ] && [ -e "$f" ] || fail "the plugin package lacks one of spank_ddp.so, ddp.conf, cli_filter.lua, profiles, ddp-plan, ddp-report, ddp-monitor, ddp-watch"
done
printf '%s\n' "plugin      $plugin" "snippet     $snippet" "cli_filter  $cli_filter" \
  "profiles    $profile_dir" "ddp-plan    $plan_bin"
[[ $plugin == "$ARCH_LIBDIR/slurm-wlm/spank_ddp.so" ]] || echo "note: plugin not in Debian's Slurm plugin directory"
line=$(grep -E '^(required|optional)' "$snippet")
[[ $line == "required $plugin "* ]] || fail "$snippet does not load the installed plugin: $line"
[[ " $line " == *" profile_dir=$profile_dir "* ]] || fail "$snippet does not name the installed profiles: $line"
"$plan_bin" --version
"$plan_bin" --plugstack "profile_dir=$profile_dir" --check-profile vega >/dev/null ||
  fail "ddp-plan cannot load the installed profile vega"
if ldd "$plugin" "$plan_bin" | grep -Ei 'torch|libddp'; then fail "the plugin or ddp-plan loads Torch or libddp"; fi
grep -qE '/man8/spank-ddp\.8\.gz$' "$WORK/installed.plugin" || fail "the plugin package has no spank-ddp(8)"
grep -qE '/man1/ddp-plan\.1\.gz$' "$WORK/installed.plugin" || fail "the plugin package has no ddp-plan(1)"
grep -qE '/man1/ddp-report\.1\.gz$' "$WORK/installed.plugin" || fail "the plugin package has no ddp-report(1)"
# The bash completion of the --ddp-* options, installed where bash loads it, reads the installed
# snippet's profile_dir: --ddp-profile=<TAB> offers the installed profiles.
completion=$(installed '/bash_completion\.d/slurm-ddp$')
[ -n "$completion" ] && [ -e "$completion" ] || fail "the plugin package has no bash completion"
offered=$(bash -c '. "$1"; COMP_WORDBREAKS=" "; COMP_WORDS=(srun --ddp-profile=); COMP_CWORD=1
  _ddp_slurm_complete srun; echo "${COMPREPLY[*]}"' _ "$completion")
[[ " $offered " == *" --ddp-profile=vega "* ]] ||
  fail "$completion offers '$offered' for --ddp-profile=, not the installed profiles of $profile_dir"
echo "completion  $completion: --ddp-profile= offers $offered"

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

# --------------------------------------------------- 2. runtime, -dev, trainer: the cluster tests --

if ((have_runtime)); then
  step "the runtime, -dev, trainer and preflight packages: dpkg -i"
  install_debs "${runtime_debs[@]}"
  for p in "$runtime_pkg" "$dev_pkg" "$trainer_pkg" "$preflight_pkg"; do
    [ "$(dpkg-query -W -f='${Status}' "$p")" = "install ok installed" ] || { cat "$WORK/dpkg.log"; fail "$p not installed"; }
    dpkg -L "$p" | sort >"$WORK/installed.$p"
  done
  for f in "$ARCH_LIBDIR/$soname" /usr/include/ddp/context.hpp /usr/include/ddp/env_contract.hpp \
    "$ARCH_LIBDIR/libddp.so" "$ARCH_LIBDIR/cmake/slurm-ddp/slurm-ddp-config.cmake" "$ARCH_LIBDIR/pkgconfig/slurm-ddp.pc"; do
    grep -qx "$f" "$WORK"/installed.* || fail "no package installed $f"
  done
  trainer=$(installed '/bin/ddp-cifar100$')
  synth=$(installed '/bin/cifar-synth$')
  "$trainer" --help >/dev/null || fail "ddp-cifar100 --help"
  grep -qE '/man1/ddp-cifar100\.1\.gz$' "$WORK/installed.$trainer_pkg" || fail "ddp-cifar100 is installed without its man page"
  # Where the installed plugin runs it from by default (no preflight= in the snippet).
  preflight=$(installed '/bin/ddp-preflight$')
  [ "$preflight" = /usr/bin/ddp-preflight ] || fail "ddp-preflight is not installed where the plugin runs it: '$preflight'"
  "$preflight" --help >/dev/null || fail "ddp-preflight --help"
  grep -qE '/man1/ddp-preflight\.1\.gz$' "$WORK/installed.$preflight_pkg" || fail "ddp-preflight is installed without its man page"
fi

# Man pages: installed, found by man, and free of groff warnings (as lintian checks them).
for page in $(grep -hE '/man/man[0-9]/.*\.gz$' "$WORK"/installed.*); do
  name=$(basename "$page" .gz)
  man -w "${name%.*}" >/dev/null || fail "man does not find ${name%.*}"
  warnings=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$page" 2>&1 >/dev/null)
  [ -z "$warnings" ] || fail "groff warnings in $page: $warnings"
  echo "man page $name: ok"
done

step "cluster tests against the installed plugin, cli_filter, profiles, ddp-plan and trainer${cluster_labels:+ (those labelled $cluster_labels)}"
CT="$BUILD_DIR/package-cluster-tests"
# Configured only (nothing is built there): the tests take every file they load from the packages,
# except the concurrent-steps test's libddp worker (not packaged) from BUILD_DIR.
test_args=()
worker=$(find "$BUILD_DIR/tests/runtime" -name ddp_test_worker -type f -perm -u+x -print -quit 2>/dev/null || true)
[ -z "$worker" ] || test_args+=(-DDDP_TEST_WORKER_BIN="$worker")
# The plugin built with the sanitizers (never packaged) runs in this Slurm's daemons too, so that
# a platform that runs its cluster tests only here (tests/platform) skips none of them.
asan=$(find "$BUILD_DIR/plugin" -name spank_ddp_asan.so -type f -print -quit 2>/dev/null || true)
[ -z "$asan" ] || test_args+=(-DDDP_TEST_SANITIZED_PLUGIN="$asan")
if ((have_runtime)); then
  test_args+=(-DDDP_TEST_CIFAR100_BIN="$trainer" -DDDP_TEST_CIFAR_SYNTH_BIN="$synth"
    -DDDP_TEST_PREFLIGHT_BIN="$preflight")
fi
# The monitor test: the installed ddp-report, the sampler the installed plugin finds by itself
# (DDP_TEST_MONITOR_BIN empty: no monitor= argument), and the build tree's fake NVML (not packaged).
test_args+=(-DDDP_TEST_MONITOR_BIN= -DDDP_TEST_REPORT_BIN="$report_bin")
# The failure watch likewise: the installed one, found by the installed plugin by itself.
test_args+=(-DDDP_TEST_WATCH_BIN=)
fake_nvml=$(find "$BUILD_DIR/tests/monitor" -name libnvidia-ml.so.1 -type f -print -quit 2>/dev/null || true)
test_args+=(-DDDP_TEST_FAKE_NVML_DIR="$(dirname "${fake_nvml:-/nonexistent/x}")")
# The preflight test's stand-in CUDA driver (not packaged), so that its GPU check runs here too:
# on every platform the cluster tests run only here.
fake_cuda=$(find "$BUILD_DIR/tests/preflight" -name libfake_cuda_driver.so -type f -print -quit 2>/dev/null || true)
[ -z "$fake_cuda" ] || test_args+=(-DDDP_TEST_FAKE_LIBCUDA="$fake_cuda")
cmake -S "$ROOT" -B "$CT" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr -DDDP_BUILD_MAN=OFF -DDDP_BUILD_UNIT_TESTS=OFF \
  -DDDP_TEST_PLUGIN="$plugin" -DDDP_TEST_CLI_FILTER="$cli_filter" -DDDP_TEST_PROFILE_DIR="$profile_dir" \
  -DDDP_TEST_PLAN_BIN="$plan_bin" "${test_args[@]}" >"$WORK/configure.log" 2>&1 ||
  { cat "$WORK/configure.log"; fail "configure $CT"; }
grep -q "DDP_SPANK_PLUGIN=$plugin" "$CT/tests/cluster/CTestTestfile.cmake" || fail "the cluster tests do not use $plugin"
selection=(-L '^cluster$')
[ -z "$cluster_labels" ] || selection+=(-L "$cluster_labels")
[ -z "$cluster_skip" ] || selection+=(-E "$cluster_skip")
ctest --test-dir "$CT" "${selection[@]}" --output-on-failure ||
  fail "cluster tests against the installed packages${cluster_labels:+ (labels $cluster_labels)}"

if ((have_runtime)); then
  step "tests/package/consumer: find_package(slurm-ddp) and pkg-config against the installed libddp"
  cmake -S "$ROOT/tests/package/consumer" -B "$WORK/consumer" >"$WORK/consumer.log" 2>&1 &&
    cmake --build "$WORK/consumer" >>"$WORK/consumer.log" 2>&1 || { cat "$WORK/consumer.log"; fail "building the consumer"; }
  # (/lib is /usr/lib on a merged-/usr system: compare real paths)
  uses=$(ldd "$WORK/consumer/ddp-consumer" | awk -v so="$soname" '$1 == so { print $3 }')
  [ -n "$uses" ] && [ "$(realpath "$uses")" = "$(realpath "$ARCH_LIBDIR/$soname")" ] ||
    fail "the consumer does not use the installed $soname but '$uses'"
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

# ----------------------------------------------------------------------------------- 3. removal --

step "dpkg -r keeps only the plugin's conffiles, dpkg --purge leaves nothing"
dpkg-query -W -f='${Conffiles}\n' "${OURS[@]}" | awk 'NF { print $1 }' | sort >"$WORK/conffiles"
diff "$WORK/conffiles" <(sort "$WORK/conffiles.deb") >/dev/null || fail "the installed conffiles are not the plugin package's"
sort -u "$WORK"/installed.* >"$WORK/installed"
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
installed_pkgs=()
for p in "${OURS[@]}"; do is_installed "$p" && installed_pkgs+=("$p"); done
dpkg -r "${installed_pkgs[@]}" >"$WORK/remove.log" 2>&1 || { cat "$WORK/remove.log"; fail "dpkg -r ${installed_pkgs[*]}"; }
left=$(grep -vxF -f "$WORK/conffiles" "$WORK/installed" | leftovers)
[ -z "$left" ] || fail "dpkg -r left files behind: $left"
while read -r f; do [ -f "$f" ] || fail "dpkg -r removed the conffile $f"; done <"$WORK/conffiles"
echo "after dpkg -r: of $(wc -l <"$WORK/installed") paths only the $(wc -l <"$WORK/conffiles") conffiles (and shared directories) are left"
dpkg --purge "${installed_pkgs[@]}" >>"$WORK/remove.log" 2>&1 || { cat "$WORK/remove.log"; fail "dpkg --purge"; }
left=$(leftovers <"$WORK/installed")
[ -z "$left" ] || fail "dpkg --purge left files behind: $left"
for p in "${OURS[@]}"; do
  [ -z "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" ] || fail "dpkg still knows $p"
done
echo "after dpkg --purge: nothing of ${OURS[*]} is left"
