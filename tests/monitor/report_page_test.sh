#!/bin/bash
# ddp-report --html in a real browser, on made-up steps (bench/synthetic_monitor.py): 2 nodes of 4
# GPUs (a line per GPU, rank and NIC) and 40 nodes of 8 GPUs with an idle GPU on gn0004 and a
# slow gn0008 (the nodes' spread, those two drawn in red and orange).
#   report_page_test.sh DDP_REPORT
set -euo pipefail
REPORT=$1
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d /tmp/ddp-report-page.XXXXXX)
trap 'rm -rf "$T"' EXIT
command -v chromium >/dev/null || { echo "SKIP: chromium is not installed (scripts/setup.sh installs it)"; exit 77; }
python3 "$HERE/../../bench/synthetic_monitor.py" "$T/small" --nodes 2 --gpus 4 --hours 0.5 --interval 5
python3 "$HERE/../../bench/synthetic_monitor.py" "$T/large" --job 4343 --nodes 40 --gpus 8 --hours 2
"$REPORT" "$T/small" --html "$T/small.html" >/dev/null
"$REPORT" "$T/large" --html "$T/large.html" >/dev/null
"$HERE/page_in_browser.sh" "$T/small.html" "$T/small.png" --colour 1f77b4 \
  "gn0001 GPU 0" "gn0002 GPU 3" "gn0001 rank 0" "gn0002 rank 3" "gn0001 mlx5_0:1 (IB)" "gn0002 ib0"
"$HERE/page_in_browser.sh" "$T/large.html" "$T/large.png" --colour d62728 --colour ff7f0e \
  "nodes min to max" "nodes quartiles" "nodes median" "gn0004" "gn0008"
echo "PASS: the report pages of 2 and 40 nodes render in Chromium"
