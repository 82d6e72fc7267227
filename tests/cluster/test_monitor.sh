#!/bin/bash
# --ddp-monitor on 2 nodes, as a user other than root: a batch job whose training step (Gloo
# all-reduces across the nodes) is sampled every second. Each node's sampler runs as the job's
# user, loads the scripted NVML through LD_LIBRARY_PATH (as it loads libnvidia-ml.so.1 on a GPU
# node), writes its file into the job's working directory and its summary into the job's output,
# and is gone when the step ends; a fake GPU that does nothing is flagged idle; the bytes counted
# on eth0 cover what the all-reduces moved. ddp-report prints the same summaries; the job's last
# line, `ddp-report JOBID.0`, finds the files through Slurm and writes JSON and the report page,
# which headless Chromium renders with every chart. A step without the option samples nothing;
# one without NVML says so once per node.
source "$(dirname "$0")/testlib.sh"
"$PYTHON" -c "import torch.distributed" 2>/dev/null || { echo "SKIP: python3-torch missing"; exit 77; }
REPORT=${DDP_REPORT_BIN:-}
FAKE=${DDP_FAKE_NVML_DIR:-}
[ -x "$REPORT" ] && [ -r "$FAKE/libnvidia-ml.so.1" ] || { echo "SKIP: ddp-report or the fake NVML not built"; exit 77; }
id nobody >/dev/null 2>&1 || { echo "SKIP: no user nobody"; exit 77; }

OUT=$WORK/out  # the job's working directory, the user's own
mkdir "$OUT"
chown nobody:"$(id -gn nobody)" "$OUT"
# Every GPU of n1 works; of n2's, the odd ones idle: whichever two neighbours Slurm gives the
# step, n2 has one of each.
{
  echo "# HOST INDEX BUS_ID NAME MEM_TOTAL_MIB UTIL... MEM_USED_MIB POWER_W"
  for i in 0 1 2 3; do
    echo "n1 $i - Fake+H100 81559 90,97,100 60000 610.5"
    if ((i % 2)); then echo "n2 $i - Fake+H100 81559 0 512 70"; else echo "n2 $i - Fake+H100 81559 88,96 59000 600"; fi
  done
} >"$WORK/gpus.txt"
cat >"$WORK/job.sh" <<JOB
#!/bin/bash
export LD_LIBRARY_PATH=$FAKE DDP_FAKE_NVML_SCRIPT=$WORK/gpus.txt
srun --ddp-monitor=1 $PYTHON $PROGRAMS/gloo_traffic.py
# As a user would end a job script: the step's report, found by the job's id.
$REPORT \$SLURM_JOB_ID.0 --json --html report.html >report.json
JOB
chmod 755 "$WORK/job.sh"
as_user() { "$RUN" setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"; }

start=$(now)
job=$(cd "$OUT" && as_user sbatch --parsable --wait --ddp-nodes=2 --ddp-gpus=2 -o "$OUT/job.out" "$WORK/job.sh") ||
  fail "the job failed: $(cat "$OUT/job.out" 2>/dev/null)"
echo "job $job took $(elapsed "$start") s"
cat "$OUT/job.out"

for node in n1 n2; do
  f=$OUT/ddp-monitor-$job.0-$node.jsonl
  [ -s "$f" ] || fail "no $f: $(ls -la "$OUT")"
  [ "$(stat -c %U "$f")" = nobody ] || fail "$f belongs to $(stat -c %U "$f"), not the job's user"
  # One JSON object per line: what the sampler saw, as numbers a script reads.
  read -r end pid samples busy mrx mtx < <("$PYTHON" - "$f" <<'PY'
import json, sys
recs = [json.loads(line) for line in open(sys.argv[1])]
busy = {r["rank"] for r in recs if r["kind"] == "cpu" and r["cpu"] > 5}
eth0 = [r for r in recs if r["kind"] == "net" and r["nic"] == "eth0"] or [{"rx_bytes": 0, "tx_bytes": 0}]
print(recs[-1].get("reason", "-") if recs[-1]["kind"] == "end" else "-", recs[0]["pid"],
      sum(r["kind"] == "gpu" and r["gpu"] == 0 for r in recs), len(busy), eth0[-1]["rx_bytes"], eth0[-1]["tx_bytes"])
PY
  )
  [ "$end" = step-ended ] || fail "$f does not end with the step: $(tail -3 "$f")"
  # Never outlives the step: its pid (in the start record) is gone, or no longer the sampler.
  ! grep -qs ddp-monitor "/proc/$pid/cmdline" || fail "the sampler on $node (pid $pid) outlived the step"
  ((samples >= 3)) || fail "$node: only $samples GPU samples"
  # Each task's CPU use (the Python ranks) was seen at some sample.
  ((busy == 2)) || fail "$node: the two ranks' CPU use is missing: $(grep '"cpu"' "$f")"
  # The bytes through eth0 cover what the all-reduces moved there (the monitor's window holds the
  # program's, so it may count a little more: the rendezvous, Slurm's own messages).
  read -r rx tx < <(sed -n "s/^traffic host=$node if=eth0 rounds=16 rx=\([0-9]*\) tx=\([0-9]*\)$/\1 \2/p" "$OUT/job.out")
  [ -n "$rx" ] || fail "no traffic line for $node in the job's output"
  ((rx > 16 << 20 && tx > 16 << 20)) || fail "$node: the all-reduces moved only $rx/$tx bytes over eth0"
  ((mrx >= rx && mtx >= tx && mrx - rx < 4 << 20 && mtx - tx < 4 << 20)) ||
    fail "$node: the monitor counted rx=$mrx tx=$mtx on eth0, the program saw rx=$rx tx=$tx"
  echo "$node: $samples samples; eth0 program rx=$rx tx=$tx, monitor rx=$mrx tx=$mtx"
done

# The summaries in the job's output: per node, per GPU, per rank, per NIC; n2's GPU 1 idle.
out=$(cat "$OUT/job.out")
expect_contains "$out" "ddp-monitor: node n1 (1 of 2), job $job step 0: " "n1's summary"
expect_contains "$out" "ddp-monitor: node n2 (2 of 2), job $job step 0: " "n2's summary"
[ "$(grep -cE '^  [0-3]    -       Fake H100 +9[0-9]% +100% +58\.6 of 79\.6 GiB +610 W +610 W$' <<<"$out")" = 2 ] ||
  fail "n1's GPU rows"
idle=$(sed -n 's/^  \([13]\)    -       Fake H100 \{1,\}0% \{1,\}0% \{1,\}0\.5 of 79\.6 GiB \{1,\}70 W \{1,\}70 W  IDLE$/\1/p' <<<"$out")
[ -n "$idle" ] || fail "n2's odd GPU is not flagged IDLE"
[ "$(grep -c '^  idle: GPU' <<<"$out")" = 1 ] || fail "expected exactly one idle GPU line"
for rank in 0 1 2 3; do
  grep -qE "^  $rank +[0-9]+ +[0-9]+% +[0-9]+%$" <<<"$out" || fail "no CPU row for rank $rank"
done
[ "$(grep -cE '^  eth0 +[0-9.]+ MiB +[0-9.]+ MiB +[0-9.]+ [KM]iB/s +[0-9.]+ [KM]iB/s$' <<<"$out")" = 2 ] ||
  fail "expected an eth0 row with MiB moved on each node"

# ddp-report: the same blocks from the files, after a line for the step.
report=$("$REPORT" "$OUT") || fail "ddp-report: $report"
echo "$report"
grep -qE "^job $job step 0: 2 of 2 nodes, 4 GPUs, [0-9.]+ s, mean GPU utilisation [0-9]+%, 1 idle \(n2 GPU $idle\)$" <<<"$report" ||
  fail "ddp-report's step line"
blocks() { awk '/^ddp-monitor: node / { on = 1; print; next } on && /^  / { print; next } { on = 0 }'; }
diff <(blocks <<<"$out" | sort) <(blocks <<<"$report" | sort) ||
  fail "ddp-report's summaries differ from the job's output"
# The job's own `ddp-report JOBID.0 --json --html`: Slurm named its working directory.
"$PYTHON" - "$OUT/report.json" "$job" "$idle" <<'PY' || fail "ddp-report $job.0 --json: $(cat "$OUT/report.json")"
import json, sys
r = json.load(open(sys.argv[1]))
(step,) = r["steps"]
assert (step["job"], step["step"], step["nodes_reported"], step["gpus"]) == (int(sys.argv[2]), 0, 2, 4), step
assert step["idle_gpus"] == [{"node": "n2", "gpu": int(sys.argv[3]), "util_mean": 0.0}], step["idle_gpus"]
assert [n["node"] for n in step["nodes"]] == ["n1", "n2"] and all(n["complete"] for n in step["nodes"])
assert step["nodes"][0]["gpus"][0]["name"] == "Fake H100", step["nodes"][0]["gpus"][0]
print(f"ddp-report {sys.argv[2]}.0 --json: {len(step['nodes'])} nodes, idle {step['idle_gpus']}")
PY
# The page in a real browser: a line for every GPU, rank and NIC the JSON names, the idle one red.
mapfile -t series < <("$PYTHON" -c '
import json, sys
for n in json.load(open(sys.argv[1]))["steps"][0]["nodes"]:
    for g in n["gpus"]: print(n["node"], "GPU", g["gpu"])
    for t in n["tasks"]: print(n["node"], "rank", t["rank"])
    for x in n["nics"]: print(n["node"], x["nic"])' "$OUT/report.json")
((${#series[@]} == 10)) || fail "expected 4 GPUs, 4 ranks and 2 NICs in the JSON, got: ${series[*]}"
"$TESTS_DIR/../monitor/page_in_browser.sh" "$OUT/report.html" "$WORK/report.png" --colour d62728 "${series[@]}" ||
  fail "the report page did not render in Chromium"

# Nothing is sampled without the option; without NVML each node says so once.
before=$(ls "$OUT" | grep -c '^ddp-monitor-' || true)
plain=$(cd "$OUT" && as_user timeout 60 srun --ddp -N2 --ntasks-per-node=1 true 2>&1) || fail "plain step: $plain"
[ "$(ls "$OUT" | grep -c '^ddp-monitor-' || true)" = "$before" ] || fail "a step without --ddp-monitor was sampled"
[[ $plain != *ddp-monitor* ]] || fail "a step without --ddp-monitor printed: $plain"
nonvml=$(cd "$OUT" && as_user timeout 60 srun --ddp-monitor=1 -N2 --gpus-per-node=1 --ntasks-per-node=1 sleep 1 2>&1) ||
  fail "step without NVML: $nonvml"
echo "$nonvml"
[ "$(grep -c '^  note: NVML is not available (libnvidia-ml.so.1: cannot open shared object file' <<<"$nonvml")" = 2 ] ||
  fail "each node should say once that NVML is missing"

# slurmstepd waits for a sampler at most 3 s after the tasks, then kills it; but it kills only a
# process of the job's user, whatever the sampler (which runs the user's environment) claims.
# A stand-in sampler (plugstack monitor=) says hello and never finishes: as itself, or naming a
# root process.
cat >"$WORK/stuck-sampler.sh" <<'SH'
#!/bin/bash
start_time() { local s; s=$(<"/proc/$1/stat"); s=${s##*) }; set -- $s; echo "${20}"; }
pid=${VICTIM:-$$}
echo "hello $pid $(start_time "$pid")" >&3
exec sleep "${STUCK_FOR:-300}"
SH
chmod 755 "$WORK/stuck-sampler.sh"
restore() { "$TESTS_DIR/up.sh" >/dev/null 2>&1 || true; }
victim=
trap 'restore; [ -z "$victim" ] || kill "$victim" 2>/dev/null; rm -rf "$WORK"' EXIT
DDP_SPANK_ARGS="${DDP_SPANK_ARGS:+$DDP_SPANK_ARGS }monitor=$WORK/stuck-sampler.sh" "$TESTS_DIR/up.sh" >/dev/null 2>&1 || fail "lab restart"
start=$(now)
(cd "$OUT" && as_user timeout 60 srun --ddp-monitor=1 -N1 -n1 true) || fail "the step with a stuck sampler"
took=$(elapsed "$start")
awk -v t="$took" 'BEGIN { exit !(t >= 2.5 && t < 8) }' || fail "a step with a stuck sampler took $took s, expected 3 s more"
# Killed, not only a zombie waiting for init to reap it. A kill takes effect when the target next
# runs: on a loaded machine (CI's sid root, load 5-7) ps once found the killed sampler still
# running as srun returned. One that nobody killed is still there 2 s later (it sleeps 300 s).
stuck=
for _ in {1..20}; do
  stuck=$(ps -u nobody -o pid=,stat=,comm= | awk '$3 == "sleep" && $2 !~ /Z/ { print $1 }')
  [ -n "$stuck" ] || break
  sleep 0.1
done
[ -z "$stuck" ] || fail "the stuck sampler outlived the step by 2 s: $(ps -o pid,stat,etime,args -p "${stuck//$'\n'/,}")"
sleep 60 &
victim=$!
(cd "$OUT" && VICTIM=$victim STUCK_FOR=4 as_user timeout 60 srun --ddp-monitor=1 -N1 -n1 true) ||
  fail "the step with a lying sampler"
kill -0 "$victim" 2>/dev/null || fail "slurmstepd killed root's process $victim on the sampler's word"
echo "stuck sampler: the step ended after $took s, the sampler killed; a forged hello killed nothing"
echo "PASS: --ddp-monitor on 2 nodes as the job's user: JSON Lines files, summaries, idle GPU, eth0 bytes, ddp-report text, ddp-report JOBID --json and its page in Chromium; bounded stop"
