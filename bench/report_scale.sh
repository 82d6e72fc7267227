#!/bin/bash
# ddp-report at scale: the files of a made-up step (bench/synthetic_monitor.py; default 1,000
# nodes x 8 GPUs sampled every 10 s for 24 h, about 11 GB), reported as text, JSON and a page,
# with the wall time and the peak memory (RSS) of each run. The files are removed afterwards.
#   bench/report_scale.sh [DDP_REPORT] [NODES] [GPUS] [HOURS] [INTERVAL]
# WORK_DIR (default /tmp) holds the files: it needs NODES x 11 MB free at the defaults.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REPORT=${1:-$ROOT/build/monitor/ddp-report}
NODES=${2:-1000} GPUS=${3:-8} HOURS=${4:-24} INTERVAL=${5:-10}
work=$(mktemp -d "${WORK_DIR:-/tmp}/ddp-report-scale.XXXXXX")
trap 'rm -rf "$work"' EXIT

start=$(date +%s.%N)
python3 "$ROOT/bench/synthetic_monitor.py" "$work/files" --nodes "$NODES" --gpus "$GPUS" \
  --hours "$HOURS" --interval "$INTERVAL"
made=$(date +%s.%N)
bytes=$(du -sb "$work/files" | cut -f1)
lines=$(($(wc -l <"$(find "$work/files" -name 'ddp-monitor-*' | head -1)") * NODES))
calc() { awk "BEGIN { print $1 }"; }
printf 'files: %d nodes x %d GPUs, %s h every %s s: %.2f GB, %d records (made in %.0f s)\n' \
  "$NODES" "$GPUS" "$HOURS" "$INTERVAL" "$(calc "$bytes / 1e9")" "$lines" "$(calc "$made - $start")"

measure() {  # NAME ARGS...: one run, its output to $work/NAME.out
  local name=$1
  shift
  /usr/bin/time -f '%e %M' -o "$work/$name.time" "$REPORT" "$@" >"$work/$name.out" 2>"$work/$name.err" ||
    { echo "ddp-report $*: $(cat "$work/$name.err")" >&2; exit 1; }
  read -r secs kib <"$work/$name.time"
  printf '%-28s %7.1f s  %6.0f MiB peak RSS  %8d bytes out  (%.0f MB/s)\n' "ddp-report $name" \
    "$secs" "$(calc "$kib / 1024")" "$(stat -c %s "$work/$name.out")" "$(calc "$bytes / 1e6 / $secs")"
}
echo "load average before: $(cut -d" " -f1-3 /proc/loadavg), $(nproc) CPUs"
measure text "$work/files"
measure json --json "$work/files"
measure html "$work/files" --html "$work/page.html"
printf 'page: %d bytes; text: %d lines\n' "$(stat -c %s "$work/page.html")" "$(wc -l <"$work/text.out")"
head -12 "$work/text.out"
