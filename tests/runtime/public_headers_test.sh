#!/bin/bash
# libddp's public headers reach neither spdlog nor fmt. A LibTorch from a pip wheel carries its own
# fmt in its include directory, and any other fmt (Debian's, or the one a distribution's spdlog was
# built on) reached through our headers would clash with it. Each header is compiled alone, as the
# only include of a translation unit, with an include directory FIRST in the path whose spdlog/
# and fmt/ headers are #error, and the headers each compile read are listed (g++ -H): none may lie
# in a spdlog/ or fmt/ directory.
# Usage: public_headers_test.sh CXX FLAGS_FILE HEADER...
#   FLAGS_FILE: one compiler argument a line: the standard, the include directories, definitions
#   and options a consumer of slurm-ddp::ddp compiles with (tests/runtime/CMakeLists.txt writes it).
set -euo pipefail
cxx=${1:?usage: public_headers_test.sh CXX FLAGS_FILE HEADER...}
flags_file=${2:?usage: public_headers_test.sh CXX FLAGS_FILE HEADER...}
shift 2
(($# > 0)) || { echo "FAIL: no header given"; exit 1; }
mapfile -t flags < <(grep -v "^\s*$" "$flags_file")

poison=$(mktemp -d)
trap 'rm -rf "$poison"' EXIT
# Every header name a spdlog/ or fmt/ directory on this compile's path holds, plus the usual ones
# (so the trap is set where neither library is installed too).
known=(fmt/args.h fmt/base.h fmt/chrono.h fmt/color.h fmt/compile.h fmt/core.h fmt/format.h
  fmt/format-inl.h fmt/os.h fmt/ostream.h fmt/printf.h fmt/ranges.h fmt/std.h fmt/xchar.h
  spdlog/spdlog.h spdlog/common.h spdlog/logger.h spdlog/tweakme.h spdlog/version.h
  spdlog/fmt/fmt.h spdlog/fmt/ostr.h spdlog/fmt/bundled/core.h spdlog/fmt/bundled/format.h
  spdlog/details/log_msg.h spdlog/sinks/base_sink.h spdlog/sinks/ostream_sink.h
  spdlog/sinks/stdout_sinks.h spdlog/sinks/stdout_color_sinks.h)
dirs=(/usr/include /usr/local/include)
for f in "${flags[@]}"; do
  case $f in -I*) dirs+=("${f#-I}") ;; esac
done
for d in "${dirs[@]}"; do
  for lib in spdlog fmt; do
    [ -d "$d/$lib" ] || continue
    while IFS= read -r rel; do known+=("$lib/$rel"); done < <(cd "$d/$lib" && find . -type f | sed 's|^\./||')
  done
done
for name in "${known[@]}"; do
  mkdir -p "$poison/$(dirname "$name")"
  printf '#error "a slurm-ddp public header reached <%s>: keep logging and formatting libraries out of runtime/include"\n' \
    "$name" >"$poison/$name"
done
echo "$(find "$poison" -type f | wc -l) spdlog/ and fmt/ headers poisoned in $poison"

# One compile per header, as many at once as there are CPUs (each that includes Torch takes about
# 10 s of CPU).
logs=$poison/logs
mkdir -p "$logs"
compile() { # HEADER_NAME LOG
  local rc=0
  printf '#include "%s"\n' "$1" | "$cxx" -I"$poison" "${flags[@]}" -fsyntax-only -H -x c++ - >"$2" 2>&1 || rc=$?
  echo "$rc" >"$2.rc"
}
running=0
for header in "$@"; do
  name=ddp/$(basename "$header")
  compile "$name" "$logs/${name//\//_}" &
  running=$((running + 1))
  if ((running >= $(nproc))); then
    wait -n || true
    running=$((running - 1))
  fi
done
wait

failed=0
for header in "$@"; do
  name=ddp/$(basename "$header")
  log=$logs/${name//\//_}
  if [ "$(cat "$log.rc")" != 0 ]; then
    echo "FAIL: $name does not compile alone with spdlog/ and fmt/ poisoned:"
    grep -v '^\.' "$log" | sed '/^Multiple include guards/,$d' | head -20
    failed=1
    continue
  fi
  reached=$(sed -n 's/^\.\+ //p' "$log" | grep -E '/(spdlog|fmt)/' || true)
  if [ -n "$reached" ]; then
    echo "FAIL: $name reaches:"
    echo "$reached"
    failed=1
    continue
  fi
  echo "ok: $name alone, $(sed -n 's/^\.\+ //p' "$log" | sort -u | wc -l) headers read, none of spdlog or fmt"
done
exit "$failed"
