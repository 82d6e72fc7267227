#!/bin/bash
# --ddp-preflight on the real cluster, three nodes: a passing preflight prints its table and the
# program then meets at the same MASTER_ADDR:MASTER_PORT; a link made slow on purpose (tc's tbf
# rate limit on n3's interface, inside its network namespace) is named as the slowest node; a
# profile threshold it misses fails the step before the program starts, saying which node to
# exclude, and in the JSON a job script asked for (DDP_PREFLIGHT_JSON) the verdict, the checks, the
# measurements and that node. The qdisc is removed and the two-node lab restored afterwards, also
# on failure.
source "$(dirname "$0")/testlib.sh"
source "$TESTS_DIR/lab-env.sh"
PREFLIGHT=${DDP_PREFLIGHT_BIN:-}
WORKER=${DDP_TEST_WORKER_BIN:-}
[ -x "$PREFLIGHT" ] || { echo "SKIP: ddp-preflight not built"; exit 77; }
[ -x "$WORKER" ] || { echo "SKIP: the libddp test worker is not built"; exit 77; }
command -v tc >/dev/null || { echo "SKIP: tc (iproute2) missing"; exit 77; }

mkdir -p "$WORK/profiles"
# Thresholds between what the lab's veth links give (0.3-1 GB/s on 2 busy cores) and what a
# 20 Mbit/s link gives (0.0025 GB/s).
cat >"$WORK/profiles/lab-preflight.yaml" <<'YAML'
name: lab-preflight
description: the test cluster, with preflight limits its healthy links meet
preflight: {enabled: true, min_busbw_gbps: 0.05, max_latency_us: 100000, timeout_s: 60}
YAML
chmod -R a+rX "$WORK/profiles"
ns3=$LAB_NETNS_DIR/${LAB_NETNS_PREFIX}-n3
slow_link_off() { [ -e "$ns3" ] && nsenter --net="$ns3" tc qdisc del dev eth0 root 2>/dev/null || true; }
AT_JOB=
restore() {
  [ -z "$AT_JOB" ] || "$RUN" scancel "$AT_JOB" 2>/dev/null || true
  slow_link_off
  "$TESTS_DIR/up.sh" >/dev/null 2>&1 || true
}
trap 'restore; rm -rf "$WORK"' EXIT
LAB_NODES=3 DDP_SPANK_ARGS="${DDP_SPANK_ARGS:+$DDP_SPANK_ARGS }preflight=$PREFLIGHT profile_dir=$WORK/profiles" \
  "$TESTS_DIR/up.sh" \
  >/dev/null 2>&1 || fail "lab restart with three nodes"
srun3() { timeout 120 "$RUN" srun -N3 --ntasks-per-node=1 "$@" 2>&1; }

# 1. Healthy links, the option given to sbatch (srun inherits it): the table, every check, and
# the program after it on the same rendezvous.
printf '#!/bin/bash\nsrun "%s" meet\n' "$WORKER" >"$WORK/job.sh"
chmod +x "$WORK/job.sh"
start=$(now)
submitted=$("$RUN" sbatch --wait -N3 --ntasks-per-node=1 --ddp-preflight -o "$WORK/job.out" "$WORK/job.sh" 2>&1) ||
  fail "passing preflight: $submitted $(cat "$WORK/job.out" 2>/dev/null)"
took=$(elapsed "$start")
out=$(cat "$WORK/job.out")
echo "$out"
for want in "ddp-preflight: 3 ranks on 3 node(s) (n1, n2, n3), gloo, rendezvous n1:" \
  "contract    ok" "rendezvous  ok" "interfaces  ok      eth0" "all ranks" "n1 <-> n2" \
  "n1 <-> n3" "n2 <-> n3" "slowest node (its best link): " "ddp-preflight: passed in"; do
  expect_contains "$out" "$want" "passing preflight"
done
[ "$(grep -c 'met 3 ranks, mean rank 1.00' <<<"$out")" = 3 ] ||
  fail "the program did not run on every rank after the preflight: $out"
[ "$(grep -c '^ddp-preflight: 3 ranks' <<<"$out")" = 1 ] || fail "more than one table: $out"

# 2. A check that fails stops the step before anything is measured: an interface the user named
# that the nodes lack, and (with the stand-in CUDA driver, where built) GPUs that CUDA does not
# see although Slurm gave them.
cuda_env=()
if [ -n "${DDP_FAKE_LIBCUDA:-}" ] && [ -e "$DDP_FAKE_LIBCUDA" ]; then
  mkdir -p "$WORK/cuda" && ln -s "$DDP_FAKE_LIBCUDA" "$WORK/cuda/libcuda.so.1"
  cuda_env=(LD_LIBRARY_PATH="$WORK/cuda" FAKE_CUDA_BUS_IDS=)
fi
out=$(env GLOO_SOCKET_IFNAME=eth9 DDP_PREFLIGHT_JSON="$WORK/checks.json" "${cuda_env[@]}" timeout 120 \
  "$RUN" srun -N3 --ntasks-per-node=1 --gpus-per-node=1 --ddp-preflight true 2>&1) &&
  fail "a failed check did not fail the step: $out"
echo "$out"
expect_contains "$out" "interfaces  FAILED  GLOO_SOCKET_IFNAME=eth9: no interface eth9 on this node (n1 rank 0, n2 rank 1, n3 rank 2)" \
  "the interface check names rank, node and variable"
[ ${#cuda_env[@]} = 0 ] || expect_contains "$out" "gpus        FAILED  CUDA_VISIBLE_DEVICES=0 names 1 GPU(s), but CUDA sees 0 (n1 rank 0, n2 rank 1, n3 rank 2)" \
  "the GPU check compares Slurm's GPUs with the driver's"
expect_contains "$out" "ddp-preflight: FAILED: a check failed on some rank (see the table); the step was stopped before measuring" \
  "no measurement after a failed check"
! grep -q "^ALL-REDUCE" <<<"$out" || fail "measured after a failed check: $out"
"$PYTHON" - "$WORK/checks.json" <<'PY' || fail "the JSON of a failed check: $(cat "$WORK/checks.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert (r["format"], r["verdict"], r["stopped_at"]) == ("ddp-preflight/1", "fail", "checks"), r
(iface,) = [c for c in r["checks"] if c["check"] == "interfaces"]
assert iface["status"] == "failed" and "eth9" in iface["detail"], iface
assert r["all_ranks"] is None and r["links"] == [] and r["nodes"] == ["n1", "n2", "n3"], r
PY

# 3. n3's link at 20 Mbit/s: the report names n3 against the median.
nsenter --net="$ns3" tc qdisc add dev eth0 root tbf rate 20mbit burst 32kbit latency 400ms ||
  fail "tc tbf on n3"
out=$(srun3 --ddp-preflight true) || fail "preflight without thresholds failed: $out"
echo "$out"
expect_contains "$out" "slowest node (its best link): n3 at " "the slow node named"
expect_contains "$(grep '^slowest node' <<<"$out")" "<- slow" "n3 marked slow against the median"

# 4. The profile's threshold fails the step: no program, and the node to exclude.
out=$(DDP_PREFLIGHT_JSON=$WORK/verdict.json srun3 --ddp-profile=lab-preflight "$WORKER" meet) &&
  fail "a missed threshold did not fail the step: $out"
echo "$out"
expect_contains "$out" "ddp-preflight: FAILED: " "rank 0's verdict"
expect_contains "$out" "n1 <-> n3: bus bandwidth " "the slow link's number"
expect_contains "$out" "is below min_busbw_gbps=0.05 (profile lab-preflight)" "the threshold and its origin"
expect_contains "$out" "Fix: resubmit without it: sbatch --exclude=n3" "the node to exclude"
expect_contains "$out" "spank_ddp: the preflight failed" "the plugin's own error"
! grep -q "met 3 ranks" <<<"$out" || fail "the program started after a failed preflight: $out"
# What a job script reads instead of grepping the log for --exclude.
"$PYTHON" - "$WORK/verdict.json" <<'PY' || fail "the preflight's JSON: $(cat "$WORK/verdict.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert (r["verdict"], r["stopped_at"], r["exclude"]) == ("fail", "measurements", ["n3"]), r
assert r["ranks"] == 3 and r["nodes"] == ["n1", "n2", "n3"] and r["backend"] == "gloo", r
assert len(r["links"]) == 3 and r["slowest_node"]["name"] == "n3" and r["slowest_node"]["slow"], r
assert r["thresholds"] == {"min_busbw_gbps": 0.05, "max_latency_us": 100000.0, "min_fraction_of_median": None,
                           "origin": "profile lab-preflight"}, r["thresholds"]
assert any("n1 <-> n3: bus bandwidth" in f for f in r["failures"]) and "--exclude=n3" in r["reason"], r
assert r["all_ranks_sweep"] and all(s["busbw_gbps"] >= 0 for s in r["all_ranks_sweep"]), r
print(f"preflight JSON: verdict {r['verdict']}, exclude {r['exclude']}, {len(r['links'])} links")
PY
slow_link_off
"$RUN" srun -N3 -n3 true || fail "the cluster no longer runs steps"

# 5. --ddp-retries, a job of three nodes on four: the first attempt's preflight names n3, and rank
# 0 requeues the job without it; the second attempt's passes on n1, n2 and n4, and the program runs.
LAB_NODES=4 DDP_SPANK_ARGS="${DDP_SPANK_ARGS:+$DDP_SPANK_ARGS }preflight=$PREFLIGHT profile_dir=$WORK/profiles" \
  "$TESTS_DIR/up.sh" >/dev/null 2>&1 || fail "lab restart with four nodes"
nsenter --net="$ns3" tc qdisc add dev eth0 root tbf rate 20mbit burst 32kbit latency 400ms ||
  fail "tc tbf on n3"
printf '#!/bin/bash\nsrun "%s" meet\n' "$WORKER" >"$WORK/retry.sh"
chmod +x "$WORK/retry.sh"
retried=$("$RUN" sbatch --parsable --requeue --open-mode=append -N3 --ntasks-per-node=1 --ddp-preflight \
  --ddp-profile=lab-preflight --ddp-retries=1 -o "$WORK/retry.out" "$WORK/retry.sh")
AT_JOB=$retried
wait_restarts "$retried" 1 || fail "the failed preflight did not requeue the job: $(cat "$WORK/retry.out")"
# The exclusion follows the requeue (slurmctld may refuse it for a moment: retried a second later).
for _ in $(seq 50); do [ "$(job_field "$retried" ExcNodeList)" = n3 ] && break; sleep 0.2; done
[ "$(job_field "$retried" ExcNodeList)" = n3 ] || fail "ExcNodeList=$(job_field "$retried" ExcNodeList), not n3"
start_requeued_job "$retried"
wait_job_gone "$retried" 120 || fail "the second attempt did not finish: $(cat "$WORK/retry.out")"
out=$(cat "$WORK/retry.out")
echo "$out"
expect_contains "$out" "ddp-preflight: asking Slurm to requeue the job for attempt 2 of 2, without n3 (the preflight: n1 <-> n3: bus bandwidth " "the retry"
after=$(sed -n '/asking Slurm to requeue the job/,$p' <<<"$out")
expect_contains "$after" "ddp-preflight: 3 ranks on 3 node(s) (n1, n2, n4)" "the second attempt's preflight"
expect_contains "$after" "ddp-preflight: passed in" "the second attempt's preflight"
[ "$(grep -c 'met 3 ranks, mean rank 1.00' <<<"$after")" = 3 ] || fail "the program did not run after the retry: $out"
slow_link_off
echo "PASS: preflight table (the sbatch job took ${took} s), slow n3 named, threshold fails the step with --exclude=n3, the same in DDP_PREFLIGHT_JSON; with --ddp-retries the job went on without n3"
