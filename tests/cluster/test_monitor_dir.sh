#!/bin/bash
# monitor.dir that another user got to first, on the real cluster, as user nobody: the site's
# profile samples into SCRATCH/%u/ddp-monitor (SCRATCH root's and sticky, as /scratch is), and
# user daemon made SCRATCH/nobody before nobody's first job. The job still runs and ends; each
# node's sampler says once in the job's output which directory it refused, its mode and owner and
# the fix, writes nothing there, and still prints its summary; no sampler or slurmstepd of the job
# is left, and both nodes end idle.
source "$(dirname "$0")/testlib.sh"
id nobody >/dev/null 2>&1 && id daemon >/dev/null 2>&1 || { echo "SKIP: no users nobody and daemon"; exit 77; }

SCRATCH=$WORK/scratch
mkdir -m 1777 "$SCRATCH"
mkdir -m 755 "$SCRATCH/nobody"
chown daemon: "$SCRATCH/nobody"
mkdir -p "$WORK/profiles"
cat >"$WORK/profiles/lab-scratch.yaml" <<YAML
name: lab-scratch
description: the test cluster, sampling every step into a shared scratch directory
monitor: {enabled: true, interval: 1, dir: "$SCRATCH/%u/ddp-monitor"}
YAML
chmod -R a+rX "$WORK/profiles"
restore() { "$TESTS_DIR/up.sh" >/dev/null 2>&1 || true; }
trap 'restore; rm -rf "$WORK"' EXIT
DDP_SPANK_ARGS="${DDP_SPANK_ARGS:+$DDP_SPANK_ARGS }profile_dir=$WORK/profiles" "$TESTS_DIR/up.sh" \
  >/dev/null 2>&1 || fail "lab restart with the profile"

OUT=$WORK/out
mkdir "$OUT"
chown nobody: "$OUT"
cat >"$WORK/job.sh" <<'JOB'
#!/bin/bash
srun bash -c 'sleep 2; echo "ran rank $RANK on $(hostname)"'
echo "step ended with $?"
JOB
chmod 755 "$WORK/job.sh"
as_user() { "$RUN" setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"; }

start=$(now)
job=$(cd "$OUT" && as_user timeout 120 sbatch --parsable --wait --ddp-nodes=2 --ddp-gpus=1 \
  --ddp-profile=lab-scratch -o "$OUT/job.out" "$WORK/job.sh") ||
  fail "the job failed: $(cat "$OUT/job.out" 2>/dev/null)"
echo "job $job took $(elapsed "$start") s"
out=$(cat "$OUT/job.out")
echo "$out"
expect_contains "$out" "ran rank 0 on n1" "rank 0 ran"
expect_contains "$out" "ran rank 1 on n2" "rank 1 ran"
expect_contains "$out" "step ended with 0" "the step succeeded"
for node in n1 n2; do
  [ "$(grep -c "^ddp-monitor on $node: warning: " <<<"$out")" = 1 ] || fail "not one warning from $node"
  expect_contains "$out" "ddp-monitor on $node: warning: will not write in $SCRATCH/nobody/ddp-monitor: $SCRATCH/nobody (mode 0755, owner daemon, uid 1) belongs to another user, who could swap what lies under it; only root or nobody, uid 65534 may own it: remove it (or ask its owner or the admin to), or choose another directory; this node's samples are not kept" \
    "$node's warning"
  expect_contains "$out" "ddp-monitor: node $node (" "$node's summary"
done
[ -z "$(ls -A "$SCRATCH/nobody")" ] || fail "a sampler wrote into daemon's directory: $(ls -lA "$SCRATCH/nobody")"

# Nothing of the job is left, and the nodes are idle (not drained, not completing).
for _ in $(seq 50); do
  states=$("$RUN" sinfo -h -n n1,n2 -o '%n %T' | sort | tr '\n' ' ')
  [ "$states" = "n1 idle n2 idle " ] && break
  sleep 0.2
done
[ "$states" = "n1 idle n2 idle " ] || fail "the nodes are not idle: $states"
! pgrep -f "slurmstepd: \[$job\." >/dev/null || fail "a slurmstepd of job $job is left: $(pgrep -af "slurmstepd: \[$job\.")"
! pgrep -u nobody -f "ddp-monitor --job $job " >/dev/null ||
  fail "a sampler of job $job is left: $(pgrep -u nobody -af "ddp-monitor --job $job ")"
echo "PASS: another user's monitor.dir refused with one warning per node; the job ran, ended, nodes idle"
