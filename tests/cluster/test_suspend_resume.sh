#!/bin/bash
# A job suspended and resumed (scontrol suspend and resume, as gang scheduling and preemption by
# suspension do: every task gets SIGSTOP, then SIGCONT) goes on to its end. The suspension outlasts
# the failure watch's time-out and libddp's peer time-out (asked for here, beside the watch): both
# count the time away as nobody's silence and no rank as frozen. On cgroup-confined nodes
# (LAB_CGROUP=1, proctrack/cgroup) Slurm freezes the step's freezer cgroup instead, the watch in it.
source "$(dirname "$0")/testlib.sh"
# shellcheck source=lab-env.sh
source "$TESTS_DIR/lab-env.sh"
worker=${DDP_TEST_WORKER_BIN:-}
[ -x "$worker" ] || { echo "SKIP: ddp_test_worker not built"; exit 77; }

cat >"$WORK/job.sh" <<JOB
#!/bin/bash
export DDP_PEER_TIMEOUT=3
srun --ddp-watch=5 $worker suspended 25; echo "rc step=\$?"
JOB
chmod +x "$WORK/job.sh"
jobid=$("$RUN" sbatch --parsable --ddp-nodes=2 --ddp-gpus=2 -o "$WORK/out" "$WORK/job.sh")
trap '"$RUN" scancel "$jobid" 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 600); do
  [ "$(grep -c ' running$' "$WORK/out" 2>/dev/null)" = 4 ] && break
  sleep 0.1
done
[ "$(grep -c ' running$' "$WORK/out" 2>/dev/null)" = 4 ] || fail "the ranks did not start: $(cat "$WORK/out" 2>/dev/null)"
"$RUN" scontrol suspend "$jobid"
# Two failure watch time-outs, four peer time-outs.
sleep 12
if lab_confined; then
  # n1's cgroups on this machine (up.sh): the job's step there must be frozen, ranks and all.
  freezer=$(awk '$2 == "freezer" { print $3 }' "$(lab_cgroup_file n1)")
  step=$(find "$freezer" -path "*/job_$jobid/step_0" -type d | head -1)
  [ -n "$step" ] || fail "no freezer cgroup of step $jobid.0 below $freezer"
  [ "$(cat "$step/freezer.state")" = FROZEN ] || fail "step $jobid.0 is $(cat "$step/freezer.state"), not FROZEN"
  [ "$(wc -l <"$step/cgroup.procs")" -ge 2 ] || fail "the frozen step holds no ranks: $(cat "$step/cgroup.procs")"
  echo "n1: step $jobid.0 FROZEN by proctrack/cgroup, $(wc -l <"$step/cgroup.procs") processes in it"
fi
state=$(job_field "$jobid" JobState)
[ "$state" = SUSPENDED ] || fail "the job is $state, not SUSPENDED, after scontrol suspend: $(cat "$WORK/out")"
"$RUN" scontrol resume "$jobid"
wait_job_gone "$jobid" 90 || fail "the resumed job did not end: $(cat "$WORK/out")"
out=$(cat "$WORK/out")
echo "$out"
expect_contains "$out" "rc step=0" "the resumed step succeeds"
[ "$(grep -c ' done$' <<<"$out")" = 4 ] || fail "every rank should finish after the resume: $out"
grep -qE 'failed:|stopped responding|lost contact|has been stopped' <<<"$out" &&
  fail "a verdict after the resume, though nothing failed: $out"
echo "PASS: suspended for 12 s (failure watch time-out 5 s, peer time-out 3 s), resumed, finished"
