#!/bin/bash
# A job suspended and resumed (scontrol suspend and resume, as gang scheduling and preemption by
# suspension do: every task gets SIGSTOP, then SIGCONT) goes on to its end. The suspension outlasts
# the failure watch's time-out and libddp's peer time-out (asked for here, beside the watch): both
# count the time away as nobody's silence and no rank as frozen.
source "$(dirname "$0")/testlib.sh"
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
