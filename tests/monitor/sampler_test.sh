#!/bin/bash
# ddp-monitor and ddp-report as programs, outside Slurm: the sampler loads the scripted NVML
# through LD_LIBRARY_PATH (as it would load the real libnvidia-ml.so.1), samples a busy process
# tree and real loopback traffic, writes its file and summary; ddp-report prints the same summary
# from the file and draws a PNG that decodes.
#   sampler_test.sh DDP_MONITOR DDP_REPORT FAKE_NVML_DIR
set -euo pipefail
MONITOR=$1 REPORT=$2 FAKE=$3
T=$(mktemp -d /tmp/ddp-monitor-test.XXXXXX)
trap 'kill "$busy" 2>/dev/null || true; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$T/gpus.txt" <<'GPUS'
# HOST INDEX BUS_ID NAME MEM_TOTAL_MIB UTIL... MEM_USED_MIB POWER_W
*  0  0000:3b:00.0  Fake_A100  40960  80,90,100  30000  250.5
*  1  0000:5e:00.0  Fake_A100  40960  0          512    -
GPUS

file=$T/$(id -un)/mon/ddp-monitor-42.3-testhost.txt
# A task: a shell whose grandchild burns a CPU for 3 s (its time counts as the task's), from when
# the sampler has its first counters (its first GPU line); the shell then writes what its
# children used, by its own accounting.
bash -c 'until grep -qs "^gpu-info" "$1"; do sleep 0.05; done
  timeout 3 sh -c "while :; do :; done"; times >"$0"' "$T/times" "$file" &
busy=$!
LD_LIBRARY_PATH=$FAKE DDP_FAKE_NVML_SCRIPT=$T/gpus.txt "$MONITOR" --job 42 --step 3 --node testhost \
  --interval 1 --dir "$T/%u/mon" --task "0:$busy" --gpu 0@0000:3b:00.0 --gpu 1 --net lo \
  2>"$T/summary" &
sampler=$!
# 24 MiB over loopback once the sampler has its counters from TIME 0 (its first GPU line).
for _ in $(seq 50); do grep -qs '^gpu-info' "$file" && break; sleep 0.1; done
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

grep -q '^start 0 job=42 step=3 node=testhost node_index=0 nodes=1 interval=1 unix=[0-9.]* pid=[0-9]*$' "$file" || fail "start: $(head -3 "$file")"
grep -q '^gpu-info [0-9.]* gpu=0 bus=0000:3b:00.0 name=Fake_A100 mem_total_mib=40960$' "$file" || fail "gpu-info 0"
grep -q '^gpu [0-9.]* gpu=0 util=90 mem_used_mib=30000 power_w=250.5$' "$file" || fail "gpu 0 samples"
grep -q '^gpu [0-9.]* gpu=1 util=0 mem_used_mib=512$' "$file" || fail "gpu 1 (no power) samples"
grep -q '^end [0-9.]* reason=tasks-ended$' "$file" || fail "end: $(tail -2 "$file")"
# The CPU time the samples add up to is what the task's children used (times), less what they
# used after the last sample: at most one CPU for the time from that sample to the end line (the
# burn may end just after a tick, so that tail can be a whole interval).
used=$(awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); print u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$T/times")
read -r seen tail < <(awk '$1 == "task" { t = $2 } $1 == "cpu" { sub("cpu=", "", $4); sum += $4 / 100 * ($2 - t); t = $2 }
  $1 == "end" { e = $2 } END { print sum + 0, e - t }' "$file")
awk -v u="$used" -v s="$seen" -v tail="$tail" 'BEGIN { exit !(u > 0.1 && s >= 0.5 && s >= u - tail - 0.15 && s <= 1.1 * u) }' ||
  fail "the samples add up to $seen CPU seconds, the task's children used $used, $tail s after the last sample: $(grep -E '^(cpu|end)' "$file")"
echo "CPU: the samples add up to $seen s, the task's children used $used s, $tail s after the last sample"
rx=$(awk '$1 == "net" { sub("rx_bytes=", "", $4); v = $4 } END { print v + 0 }' "$file")
((rx >= 24 << 20)) || fail "lo received $rx bytes, expected >= 24 MiB"
grep -qE '^  lo +2[4-9]\.[0-9] MiB +2[4-9]\.[0-9] MiB +[1-9][0-9.]* MiB/s' "$T/summary" || fail "lo row"


grep -q '^  1    -             Fake_A100         0%    0%   0.5 of 40.0 GiB           -      -  IDLE$' "$T/summary" ||
  fail "GPU 1 not flagged idle"
grep -q '^  idle: GPU 1 averaged 0% utilisation' "$T/summary" || fail "no idle line"
grep -q '^  0    0000:3b:00.0  Fake_A100        [89][0-9]%  100%  29.3 of 40.0 GiB       250 W  250 W$' "$T/summary" ||
  fail "GPU 0 row"

# ddp-report prints the node's block exactly as the sampler did, after a line for the step.
"$REPORT" "$T/$(id -un)/mon" --png "$T/util.png" >"$T/report"
cat "$T/report"
head -1 "$T/report" | grep -q '^job 42 step 3: 1 of 1 node, 2 GPUs, mean GPU utilisation [0-9]*%, 1 idle (testhost GPU 1)$' ||
  fail "step line: $(head -1 "$T/report")"
sed -n '2,/^wrote /p' "$T/report" | sed '$d' >"$T/report-block"
diff "$T/summary" "$T/report-block" || fail "ddp-report's block differs from the sampler's summary"

# The PNG: signature, IHDR, and IDAT that inflates to height x (1 + width) bytes.
/usr/bin/python3 - "$T/util.png" <<'PY' || fail "the PNG does not decode"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "signature"
pos, chunks = 8, {}
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    assert struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0] == zlib.crc32(kind + body), kind
    chunks.setdefault(kind, b"")
    chunks[kind] += body
    pos += 12 + n
w, h, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
raw = zlib.decompress(chunks[b"IDAT"])
assert (depth, colour) == (8, 3) and len(raw) == h * (w + 1), (w, h, len(raw))
assert w == 1200 and 150 < h < 400, (w, h)
print(f"png {w}x{h}, {len(data)} bytes, {len(chunks[b'PLTE']) // 3} colours")
PY

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
    log = open(f"{tmp}/ddp-monitor-9.0-{how}.txt").read()
    assert f" rank=5 local=0 pid={busy.pid}" in log, log
    assert log.rstrip().endswith("reason=step-ended"), log
    assert f"ddp-monitor: node {how} (1 of 1), job 9 step 0" in summary, summary
    assert "\n  5 " in summary, summary  # rank 5's CPU row
    print(f"control channel ({how}): summary and end within {took:.2f} s")
PY
echo "PASS: sampler file, summary, idle GPU, CPU and loopback bytes, ddp-report text and PNG, control channel"
