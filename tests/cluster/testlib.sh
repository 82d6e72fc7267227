# Shared helpers for the cluster integration tests (sourced). Each test is a bash script that
# exits 0 on success, 1 on failure, 77 when it cannot run here (not root: CTest shows it skipped).
set -euo pipefail
TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROGRAMS="$TESTS_DIR/programs"
# Debian's python3-torch, whatever python3 comes first on PATH.
PYTHON=/usr/bin/python3
RUN="$TESTS_DIR/run.sh"

if [ "$(id -u)" != 0 ]; then
  echo "SKIP: the test cluster needs root (network namespaces, slurmd)"
  exit 77
fi

WORK=$(mktemp -d /tmp/ddp-test.XXXXXX)
chmod 755 "$WORK"
trap 'rm -rf "$WORK"' EXIT

# Another user of the cluster, who tries what the tests' victims must survive: a system account
# (Debian's `daemon`), never root and never the job's user.
ATTACKER=daemon
as_attacker() { setpriv --reuid="$ATTACKER" --regid="$(id -g "$ATTACKER")" --clear-groups "$@"; }

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# expect_contains TEXT NEEDLE WHAT
expect_contains() {
  case "$1" in
    *"$2"*) ;;
    *) printf 'FAIL: %s: expected to find "%s" in:\n%s\n' "$3" "$2" "$1" >&2; exit 1 ;;
  esac
}

# field LINE NAME: the value of NAME=value in a contract line.
field() {
  sed -n "s/.*[[:space:]]$2=\([^[:space:]]*\).*/\1/p" <<<"$1"
}

# run_expect_failure WHAT CMD...: the command must fail; prints its combined output.
run_expect_failure() {
  local what=$1 out
  shift
  if out=$(timeout 60 "$@" 2>&1 </dev/null); then
    printf 'FAIL: %s: expected failure, got success:\n%s\n' "$what" "$out" >&2
    exit 1
  fi
  printf '%s' "$out"
}

# need_trainer: ddp-cifar100 ($BIN) and 10-class synthetic data in $WORK/data, with the common
# training arguments in TRAIN_ARGS; skips the test when the trainer is not built.
need_trainer() {
  BIN=${DDP_CIFAR100_BIN:-}
  SYNTH=${DDP_CIFAR_SYNTH_BIN:-}
  [ -x "$BIN" ] && [ -x "$SYNTH" ] || { echo "SKIP: ddp-cifar100 not built"; exit 77; }
  # 10 learnable classes (chance 0.10) among the model's 100 outputs.
  "$SYNTH" --out "$WORK/data" --train 1024 --test 256 --classes 10 --seed 3 >/dev/null
  TRAIN_ARGS=(--data-dir "$WORK/data" --width 0.1 --batch-size 64 --base-lr 0.05 --seed 1)
}

# trainer_job FILE [VAR=VALUE...]: a batch script that runs ddp-cifar100 with its arguments under
# srun, the variables exported, each task's PID in $WORK/pid.RANK (exec keeps it) and its
# torchrun restart count and run id in $WORK/torchelastic.RANK.
trainer_job() {
  local file=$1 v
  shift
  {
    echo '#!/bin/bash'
    for v in "$@"; do echo "export $v"; done
    echo "srun bash -c 'echo \$\$ >\"$WORK/pid.\$RANK\"; echo \$TORCHELASTIC_RESTART_COUNT \$TORCHELASTIC_RUN_ID >\"$WORK/torchelastic.\$RANK\"; exec \"\$0\" \"\$@\"' \"$BIN\" \"\$@\""
  } >"$file"
  chmod +x "$file"
}

# start_training EPOCHS [VAR=VALUE...]: ddp-cifar100 for EPOCHS epochs as a batch job of 2 nodes x
# 2 ranks (no requeue, output in $WORK/out, job id in JOBID) with the variables exported and the
# sbatch options in TRAINING_OPTS; returns once epoch 1 is done. On exit the job is cancelled and
# $WORK removed, after the test's own AT_EXIT command when it set one (to undo what it broke).
start_training() {
  local epochs=$1
  shift
  trainer_job "$WORK/job.sh" "$@"
  JOBID=$("$RUN" sbatch --parsable --no-requeue --ddp-nodes=2 --ddp-gpus=2 -o "$WORK/out" \
    ${TRAINING_OPTS[@]+"${TRAINING_OPTS[@]}"} \
    "$WORK/job.sh" "${TRAIN_ARGS[@]}" --epochs "$epochs")
  trap 'eval "${AT_EXIT:-true}"; "$RUN" scancel "$JOBID" 2>/dev/null || true; rm -rf "$WORK"' EXIT
  wait_for_line "$WORK/out" "] Epoch 1/$epochs completed" 120 ||
    fail "no epoch finished: $(cat "$WORK/out")"
}

# wait_for_line FILE PATTERN SECONDS: true once FILE has a line matching the grep PATTERN.
wait_for_line() {
  local i
  for ((i = 0; i < $3 * 5; i++)); do
    grep -q -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.2
  done
  return 1
}

# resumed_after TEXT: how many epochs a resumed ddp-cifar100 had behind it, from its resume line:
# "after epoch N" (a checkpoint at an epoch's end) or "in epoch N at step S" (one saved mid-epoch
# at a signal, scancel's SIGTERM among them: N-1 whole epochs).
resumed_after() {
  local n
  n=$(sed -n 's/.*Resuming from .* after epoch \([0-9]*\)$/\1/p' <<<"$1")
  [ -n "$n" ] && { echo "$n"; return; }
  n=$(sed -n 's/.*Resuming from .* in epoch \([0-9]*\) at step [0-9]*$/\1/p' <<<"$1")
  [ -n "$n" ] && echo $((n - 1))
}

# job_field JOBID NAME: the value of NAME= in `scontrol show job` (while slurmctld has the job).
job_field() { "$RUN" scontrol show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1; }

# wait_restarts JOBID N: true once Slurm counts N requeues of the job (within 30 s). What a step
# says after its job was requeued may be lost (srun is ending), so Slurm's record is what counts.
wait_restarts() {
  local i
  for ((i = 0; i < 150; i++)); do
    [ "$(job_field "$1" Restarts)" = "$2" ] && return 0
    sleep 0.2
  done
  return 1
}

# start_requeued_job JOBID: Slurm holds a requeued batch job back (BeginTime about two minutes
# ahead); a test does not wait that long: once the job is pending again and its nodes have finished
# cleaning up, the job is made eligible now. Not earlier: slurmd refuses a launch whose credential
# dates from the second its job was revoked in ("Job credential revoked").
start_requeued_job() {
  local state busy
  for _ in $(seq 150); do
    state=$("$RUN" scontrol show job "$1" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
    busy=$("$RUN" sinfo -h -t completing -o %N)
    [ "$state" = PENDING ] && [ -z "$busy" ] && break
    sleep 0.2
  done
  sleep 1.5
  "$RUN" scontrol update jobid="$1" StartTime=now
}

# wait_job_gone JOBID SECONDS: true once the job has left the queue (finished, failed, cancelled).
wait_job_gone() {
  local i
  for ((i = 0; i < $2 * 5; i++)); do
    [ -z "$("$RUN" squeue -h -j "$1" 2>/dev/null)" ] && return 0
    sleep 0.2
  done
  return 1
}

# processes_gone USER COMMANDS SECONDS: true once USER runs no process whose name matches the awk
# pattern COMMANDS (e.g. 'python3|ddp-watch'); LIVE holds what was left otherwise.
processes_gone() {
  local i
  for ((i = 0; i < $3 * 5; i++)); do
    LIVE=$(ps -u "$1" -o pid=,comm= | awk -v p="$2" '$2 ~ p' || true)
    [ -z "$LIVE" ] && return 0
    sleep 0.2
  done
  return 1
}

# now: seconds since the epoch, with fractions.
now() { date +%s.%N; }
# elapsed START: seconds since START, one decimal.
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
