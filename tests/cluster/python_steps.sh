# Sourced by test_python_failures.sh and test_python_faults.sh: a Python DDP program (Debian's
# python3-torch, Gloo, tests/cluster/programs/python_faults.py) under srun --ddp as user nobody,
# one fault on one rank per case; case_ gives the output, the exit and the time from the fault (the
# faulty rank's own timestamp) to srun's end.
source "$(dirname "$0")/testlib.sh"
"$PYTHON" -c "import torch.distributed.elastic.multiprocessing.errors" 2>/dev/null ||
  { echo "SKIP: python3-torch missing"; exit 77; }
id nobody >/dev/null 2>&1 || { echo "SKIP: no user nobody"; exit 77; }

OUT=$WORK/out
mkdir -p "$OUT"
chown -R nobody:"$(id -gn nobody)" "$OUT"
as_user() { (cd "$OUT" && "$RUN" setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"); }
WATCH=10
TIMES=()

# case NAME FAULT RANK [SECONDS]: the step of 2 nodes x 2 ranks with that fault; TEXT, RC, TOOK.
case_() {
  local name=$1 fault=$2 rank=$3 seconds=${4:-20} end at
  echo "--- $name"
  set +e
  TEXT=$(as_user timeout 120 srun --ddp -N2 --ntasks-per-node=2 --ddp-watch=${WATCH_ARG:-$WATCH} \
    --export=ALL,DDP_DSTATE_PROGRAM="$OUT/dstate" "$PYTHON" "$PROGRAMS/python_faults.py" \
    "$fault" "$rank" "$seconds" 2>&1)
  RC=$?
  set -e
  end=$(now)
  echo "$TEXT" | grep -v '^  \|^Traceback\|^RuntimeError\|^    ' || true
  at=$(sed -n 's/^fault .* at \([0-9.]*\)$/\1/p' <<<"$TEXT" | head -n 1)
  [ -n "$at" ] || fail "$name: the fault never happened (rc $RC)"
  TOOK=$(awk -v a="$at" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  echo "$name: srun ended ${TOOK} s after the fault, exit $RC"
}
verdicts() { grep -c "^spank_ddp: step [0-9.]* failed: " <<<"$TEXT" || true; }
within() {  # within LIMIT WHAT
  awk -v t="$TOOK" -v l="$1" 'BEGIN { exit !(t <= l) }' || fail "$2: took $TOOK s, more than $1 s"
  TIMES+=("$2 ${TOOK}s")
}

