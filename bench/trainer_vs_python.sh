#!/bin/bash
# Images/second of ddp-cifar100 against a faithful Python implementation of the reference recipe
# (bench/reference_ddp.py, Debian's python3-torch), measured side by side in one run on this
# machine: same synthetic CIFAR-format data, model width, global batch, precision (fp32 on CPU)
# and number of ranks (Gloo over loopback). Prints the throughput of each and the ratio.
#   bench/trainer_vs_python.sh [RANKS=2] [WIDTH=0.25] [BATCH=128] [EPOCHS=3] [WORKERS=0]
# A run's throughput is the mean of its epochs after the first (which pays for warm-up). The two
# programs run REPEATS times (default 3) alternately, and the medians are compared, so that a
# passing load on the machine does not favour either. WORKERS is the reference's DataLoader
# workers per rank (it uses 8; on a 2-core machine extra processes only compete).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD_DIR:-$ROOT/build}
TRAINER=$BUILD/trainer/ddp-cifar100
SYNTH=$BUILD/trainer/data/cifar-synth
PYTHON=${PYTHON:-/usr/bin/python3}
RANKS=${1:-2} WIDTH=${2:-0.25} BATCH=${3:-128} EPOCHS=${4:-3} WORKERS=${5:-0}
REPEATS=${REPEATS:-3}
TRAIN_SAMPLES=${TRAIN_SAMPLES:-4096} TEST_SAMPLES=${TEST_SAMPLES:-1024}
for f in "$TRAINER" "$SYNTH"; do [ -x "$f" ] || { echo "build first (missing $f)" >&2; exit 1; }; done

work=$(mktemp -d /tmp/ddp-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$SYNTH" --out "$work/data" --train "$TRAIN_SAMPLES" --test "$TEST_SAMPLES" --seed 1 >/dev/null

# run NAME CMD...: RANKS ranks with a torchrun-style environment; rank 0's output to $work/NAME.
run() {
  local name=$1 port=$(( 20000 + RANDOM % 9000 )) pids=() r status=0
  shift
  for ((r = 0; r < RANKS; r++)); do
    env -i PATH=/usr/bin:/bin HOME="$work" RANK=$r LOCAL_RANK=$r WORLD_SIZE="$RANKS" \
      LOCAL_WORLD_SIZE="$RANKS" MASTER_ADDR=127.0.0.1 MASTER_PORT=$port GLOO_SOCKET_IFNAME=lo \
      OMP_NUM_THREADS=$(( $(nproc) / RANKS > 0 ? $(nproc) / RANKS : 1 )) \
      "$@" >"$work/$name.$r" 2>&1 &
    pids+=($!)
  done
  for r in "${pids[@]}"; do wait "$r" || status=$?; done
  [ "$status" = 0 ] || { echo "$name failed:" >&2; cat "$work/$name.0" >&2; exit 1; }
  grep 'Epoch Throughput' "$work/$name.0" | awk 'NR > 1 { s += $3; n++ } END { print (n ? s / n : 0) }'
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

common=(--data-dir "$work/data" --batch-size "$BATCH" --epochs "$EPOCHS" --width "$WIDTH" --base-lr 0.02)
cpp_runs='' py_runs=''
for ((i = 0; i < REPEATS; i++)); do
  cpp_runs+=" $(run cpp "$TRAINER" "${common[@]}")"
  py_runs+=" $(run python "$PYTHON" "$ROOT/bench/reference_ddp.py" "${common[@]}" --workers "$WORKERS")"
done
cpp=$(median <<<"$cpp_runs")
py=$(median <<<"$py_runs")
awk -v c="$cpp" -v p="$py" -v r="$RANKS" -v w="$WIDTH" -v b="$BATCH" -v n="$TRAIN_SAMPLES" -v k="$WORKERS" \
  -v e="$EPOCHS" -v m="$REPEATS" -v cr="$cpp_runs" -v pr="$py_runs" 'BEGIN {
  printf "CIFAR-100 WideResNet width %s, global batch %s, %d ranks (gloo, fp32, CPU), %d images,\n", w, b, r, n
  printf "epochs 2..%d of each run, median of %d alternating runs\n", e, m
  printf "  reference recipe in Python (%d loader workers)  %10.1f images/s  (runs:%s)\n", k, p, pr
  printf "  ddp-cifar100                                 %10.1f images/s  (runs:%s)\n", c, cr
  printf "  ratio ddp-cifar100 / Python: %.2f (goal >= 1.5 on CPU)\n", c / p
}'
