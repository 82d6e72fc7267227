#!/bin/bash
# ddp-monitor and ddp-report as programs, outside Slurm: the sampler loads the scripted NVML
# through LD_LIBRARY_PATH (as it would load the real libnvidia-ml.so.1), samples a busy process
# tree and real loopback traffic, writes its JSON Lines file (a GPU name with spaces kept) and its
# summary; ddp-report prints the same summary from the file, the same again as JSON, and a page.
#   sampler_test.sh DDP_MONITOR DDP_REPORT FAKE_NVML_DIR
set -euo pipefail
MONITOR=$1 REPORT=$2 FAKE=$3
T=$(mktemp -d /tmp/ddp-monitor-test.XXXXXX)
trap 'kill "$busy" 2>/dev/null || true; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$T/gpus.txt" <<'GPUS'
# HOST INDEX BUS_ID NAME MEM_TOTAL_MIB UTIL... MEM_USED_MIB POWER_W
*  0  0000:3b:00.0  Fake+A100  40960  80,90,100  30000  250.5
*  1  0000:5e:00.0  Fake+A100  40960  0          512    -
GPUS

file=$T/$(id -un)/mon/ddp-monitor-42.3-testhost.jsonl
# A task: a shell whose grandchild burns a CPU for 3 s (its time counts as the task's), from when
# the sampler has its first counters (its first GPU line); the shell then writes what its
# children used, by its own accounting.
bash -c 'until grep -qs "\"gpu-info\"" "$1"; do sleep 0.05; done
  timeout 3 sh -c "while :; do :; done"; times >"$0"' "$T/times" "$file" &
busy=$!
LD_LIBRARY_PATH=$FAKE DDP_FAKE_NVML_SCRIPT=$T/gpus.txt "$MONITOR" --job 42 --step 3 --node testhost \
  --interval 1 --dir "$T/%u/mon" --task "0:$busy" --gpu 0@0000:3b:00.0 --gpu 1 --net lo \
  2>"$T/summary" &
sampler=$!
# 24 MiB over loopback once the sampler has its counters from TIME 0 (its first GPU line).
for _ in $(seq 50); do grep -qs '"gpu-info"' "$file" && break; sleep 0.1; done
/usr/bin/python3 - <<'PY'
import socket, threading
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
def sink():
    c, _ = srv.accept()
    while c.recv(1 << 20): pass
t = threading.Thread(target=sink); t.start()
s = socket.create_connection(srv.getsockname()); s.sendall(b"x" * (24 << 20)); s.close(); t.join()
PY
wait "$sampler" || fail "ddp-monitor failed: $(cat "$T/summary")"
cat "$T/summary"
[ -s "$file" ] || fail "no $file"

# Every line is one JSON object; the records as ddp-report(1) documents them.
/usr/bin/python3 - "$file" "$T/times" <<'PY' || fail "the file's records: $(head -5 "$file")"
import json, sys
recs = [json.loads(line) for line in open(sys.argv[1])]
kinds = [r["kind"] for r in recs]
start = recs[0]
assert start["kind"] == "start" and start["format"] == 2, start
assert (start["job"], start["step"], start["node"], start["node_index"], start["nodes"], start["interval"]) == \
    (42, 3, "testhost", 0, 1, 1), start
assert start["unix"] > 1.6e9 and start["pid"] > 0, start
info = {r["gpu"]: r for r in recs if r["kind"] == "gpu-info"}
assert info[0] == {"kind": "gpu-info", "time": info[0]["time"], "gpu": 0, "bus": "0000:3b:00.0",
                   "name": "Fake A100", "mem_total_mib": 40960}, info[0]
gpu = [r for r in recs if r["kind"] == "gpu"]
assert any(r["gpu"] == 0 and r["util"] == 90 and r["mem_used_mib"] == 30000 and r["power_w"] == 250.5 for r in gpu), gpu
assert any(r["gpu"] == 1 and r["util"] == 0 and r["mem_used_mib"] == 512 and "power_w" not in r for r in gpu), gpu
assert recs[-1]["kind"] == "end" and recs[-1]["reason"] == "tasks-ended", recs[-1]
# The CPU time the samples add up to is what the task's children used (times), less what they
# used after the last sample: at most one CPU for the time from that sample to the end line (the
# burn may end just after a tick, so that tail can be a whole interval).
line = open(sys.argv[2]).read().splitlines()[1].split()
secs = lambda t: float(t.split("m")[0]) * 60 + float(t.split("m")[1].rstrip("s"))
used = secs(line[0]) + secs(line[1])
seen, t = 0.0, None
for r in recs:
    if r["kind"] == "task": t = r["time"]
    if r["kind"] == "cpu": seen += r["cpu"] / 100 * (r["time"] - t); t = r["time"]
tail = recs[-1]["time"] - t
assert used > 0.1 and seen >= 0.5 and seen >= used - tail - 0.15 and seen <= 1.1 * used, (seen, used, tail)
print(f"CPU: the samples add up to {seen:.2f} s, the task's children used {used:.2f} s, {tail:.2f} s after the last sample")
rx = [r for r in recs if r["kind"] == "net" and r["nic"] == "lo"][-1]["rx_bytes"]
assert rx >= 24 << 20, f"lo received {rx} bytes, expected >= 24 MiB"
PY
grep -qE '^  lo +2[4-9]\.[0-9] MiB +2[4-9]\.[0-9] MiB +[1-9][0-9.]* MiB/s' "$T/summary" || fail "lo row"


grep -q '^  1    -             Fake A100         0%    0%   0.5 of 40.0 GiB           -      -  IDLE$' "$T/summary" ||
  fail "GPU 1 not flagged idle"
grep -q '^  idle: GPU 1 averaged 0% utilisation' "$T/summary" || fail "no idle line"
grep -q '^  0    0000:3b:00.0  Fake A100        [89][0-9]%  100%  29.3 of 40.0 GiB       250 W  250 W$' "$T/summary" ||
  fail "GPU 0 row"

# ddp-report prints the node's block exactly as the sampler did, after a line for the step; the
# same as JSON; and a page with a chart per metric sampled, a line per GPU, rank and NIC.
"$REPORT" "$T/$(id -un)/mon" --html "$T/report.html" >"$T/report" 2>"$T/report.err" ||
  fail "ddp-report: $(cat "$T/report.err")"
cat "$T/report" "$T/report.err"
head -1 "$T/report" | grep -qE '^job 42 step 3: 1 of 1 node, 2 GPUs, [0-9.]+ s, mean GPU utilisation [0-9]+%, 1 idle \(testhost GPU 1\)$' ||
  fail "step line: $(head -1 "$T/report")"
sed 1d "$T/report" >"$T/report-block"
diff "$T/summary" "$T/report-block" || fail "ddp-report's block differs from the sampler's summary"
grep -q "^ddp-report: wrote $T/report.html ([0-9]* bytes)$" "$T/report.err" || fail "no 'wrote' line"
"$REPORT" --json "$T/$(id -un)/mon" >"$T/report.json" || fail "ddp-report --json"
/usr/bin/python3 - "$T/report.json" "$T/report.html" <<'PY' || fail "ddp-report --json or --html"
import json, re, sys
r = json.load(open(sys.argv[1]))
assert r["format"] == "ddp-report/1", r["format"]
(step,) = r["steps"]
assert (step["job"], step["step"], step["nodes_expected"], step["nodes_reported"], step["gpus"]) == (42, 3, 1, 1, 2), step
assert step["idle_gpus"] == [{"node": "testhost", "gpu": 1, "util_mean": 0}], step["idle_gpus"]
(node,) = step["nodes"]
assert node["complete"] and node["end_reason"] == "tasks-ended", node
g0, g1 = node["gpus"]
assert g0["name"] == "Fake A100" and g0["bus"] == "0000:3b:00.0" and g0["util_peak"] == 100 and g0["mem_peak_mib"] == 30000, g0
assert g1["idle"] and g1["power_mean_w"] is None and g1["bus"] is None, g1
assert node["nics"][0]["nic"] == "lo" and node["nics"][0]["rx_bytes"] >= 24 << 20, node["nics"]
page = open(sys.argv[2]).read()
assert "<script src" not in page and "http" not in page.split("<footer>")[0], "the page fetches something"
charts = re.findall(r'<figure class="chart" id="chart-42\.3-(\w+)" data-metric="\w+" data-mode="lines"', page)
assert charts == ["gpu_util", "gpu_memory", "gpu_power", "cpu", "net_rx", "net_tx"], charts
for s in ("testhost GPU 0", "testhost GPU 1", "testhost rank 0", "testhost lo"):
    assert f'data-series="{s}"' in page, s
assert re.search(r'<g class="series line idle" data-series="testhost GPU 1"', page), "GPU 1 not drawn as idle"
print(f"json: {len(json.dumps(r))} bytes; page: {len(page)} bytes, charts {charts}")
PY

# A step of many nodes: the job's output gets the first node's block and a pointer to ddp-report,
# not one block per node.
for index in 0 7; do
  sleep 1.5 &
  LD_LIBRARY_PATH=$FAKE "$MONITOR" --job 43 --node "big$index" --node-index "$index" --nodes 40 \
    --interval 1 --dir "$T/big" --task "0:$!" 2>"$T/big-$index.err" || fail "ddp-monitor on node $index"
  wait
done
grep -q '^ddp-monitor: node big0 (1 of 40), job 43 step 0: ' "$T/big-0.err" || fail "node 0's block: $(cat "$T/big-0.err")"
grep -qx 'ddp-monitor: 40 nodes were sampled; the others'"'"' summaries are in their files: ddp-report 43.0 reports the step (its spread and its worst nodes)' "$T/big-0.err" ||
  fail "node 0's pointer to ddp-report: $(cat "$T/big-0.err")"
[ ! -s "$T/big-7.err" ] || fail "node 7 of 40 wrote to the job's output: $(cat "$T/big-7.err")"
[ -s "$T/big/ddp-monitor-43.0-big7.jsonl" ] || fail "node 7 of 40 kept no file"

# The control channel as slurmstepd drives it (monitor/launch/control.hpp), here over one socket
# (no --reply-fd): the sampler takes the tasks slurmstepd names, and on end of stream writes its
# summary and says done; when slurmstepd is gone altogether (its end closed), it stops as well.
/usr/bin/python3 - "$MONITOR" "$T" <<'PY' || fail "the control channel"
import os, socket, subprocess, sys, time
monitor, tmp = sys.argv[1], sys.argv[2]
for how in ("shutdown", "close"):
    stepd, sampler = socket.socketpair()
    busy = subprocess.Popen(["sleep", "30"])
    fd = sampler.fileno()
    p = subprocess.Popen([monitor, "--job", "9", "--node", how, "--interval", "1", "--dir", tmp,
                          "--tasks", "1", "--control-fd", str(fd)], pass_fds=(fd,),
                         stderr=subprocess.PIPE)
    sampler.close()
    stepd.sendall(f"task 0 5 {busy.pid}\n".encode())
    f = stepd.makefile("r")
    time.sleep(1.3)
    start = time.monotonic()
    if how == "shutdown":
        stepd.shutdown(socket.SHUT_WR)
        assert f.readline() == "done\n"
    else:
        f.close(); stepd.close()
    summary = p.communicate(timeout=5)[1].decode()
    took = time.monotonic() - start
    busy.kill(); busy.wait()
    assert p.returncode == 0 and took < 1, (p.returncode, took)
    log = open(f"{tmp}/ddp-monitor-9.0-{how}.jsonl").read()
    assert f'"kind":"task","time":' in log and f'"rank":5,"local":0,"pid":{busy.pid}' in log, log
    assert log.rstrip().endswith('"reason":"step-ended"}'), log
    assert f"ddp-monitor: node {how} (1 of 1), job 9 step 0" in summary, summary
    assert "\n  5 " in summary, summary  # rank 5's CPU row
    print(f"control channel ({how}): summary and end within {took:.2f} s")
PY
# A task that is not yet the user's when the sampler first looks: slurmstepd names a task as it
# forks it, and its /proc entry stays root's until it has taken the user's credentials and exec'd.
# It is sampled once it is the user's, not given up for gone (as root only: it takes a second user).
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
  chmod 755 "$T" && mkdir "$T/late" && chown nobody "$T/late"
  setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups true ||
    fail "setpriv cannot run as nobody"
  bash -c 'sleep 1.6; exec setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
    timeout 3.5 sh -c "while :; do :; done"' &
  late=$!
  setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
    "$MONITOR" --job 44 --node late --interval 1 --dir "$T/late" --task "0:$late" 2>"$T/late.err" ||
    fail "ddp-monitor on a late task: $(cat "$T/late.err")"
  wait "$late" || true
  /usr/bin/python3 - "$T/late/ddp-monitor-44.0-late.jsonl" <<'PY' || fail "the late task: $(cat "$T/late/"*.jsonl)"
import json, sys
recs = [json.loads(line) for line in open(sys.argv[1])]
busy = [r for r in recs if r["kind"] == "cpu" and r["cpu"] > 50]
assert len(busy) >= 2 and recs[-1]["reason"] == "tasks-ended", recs
print(f"a task root's for 1.6 s, then the user's: {len(busy)} busy samples")
PY
fi
echo "PASS: sampler JSON Lines file, summary, idle GPU, CPU and loopback bytes, ddp-report text, JSON and page, control channel"
