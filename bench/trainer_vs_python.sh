#!/bin/bash
# Images/second of ddp-cifar100 against a faithful Python implementation of the reference recipe
# (bench/reference_ddp.py), measured side by side in one run on this machine: same synthetic
# CIFAR-format data, model width, global batch, precision and number of ranks. Prints the
# throughput of each, the ratio, and the achieved TFLOP/s (3 forward passes per trained image,
# counted by ddp-cifar100 from its layers) with its share of the accelerator's peak.
#   bench/trainer_vs_python.sh [RANKS] [WIDTH] [BATCH] [EPOCHS=3] [WORKERS]
# CPU (Debian's python3-torch 1.13, Gloo over loopback, fp32): defaults 2 ranks, width 0.25,
#   global batch 128, 4096 images, 0 loader workers (on a 2-core machine extra processes only
#   compete; the reference uses 8).
# GPU (found with nvidia-smi; PyTorch 2.x with CUDA in python3, NCCL): defaults one rank per GPU,
#   the reference model (width 1), the reference's 256 images per GPU, fp16, 50,000 images, the
#   reference's 8 loader workers per rank.
# GPU, second peer: bench/tuned_reference.py, the same recipe as a performance-minded PyTorch user
#   writes it today (GPU-resident data augmented in batches, channels_last, fused SGD,
#   torch.compile); its ratio is printed too. TUNED=0 leaves it out (and on CPU it is: Debian's
#   torch 1.13 has no torch.compile). If it fails (a compiler missing, say), the others still count.
# Each program's validation accuracy by epoch (its last run) is printed, to compare how they
#   learn; ddp-cifar100 evaluates augmented test images there, as the reference does.
# Environment: PRECISION (fp32|fp16|bf16), REPEATS (default 3), TRAIN_SAMPLES, TEST_SAMPLES,
#   PYTHON, BUILD_DIR, PEAK_TFLOPS (the peak of ONE device at PRECISION, for the share; known
#   NVIDIA data-centre GPUs are looked up), TUNED (1|0), CPP_ARGS (more options for
#   ddp-cifar100, e.g. '--cuda-graph off'), LOG_DIR (keep each run's rank-0 output there).
# A run's throughput is the mean of its epochs after the first (which pays for warm-up and, on a
# GPU, cuDNN's autotuning). The two programs run REPEATS times alternately and the medians are
# compared, so that a passing load on the machine does not favour either.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD_DIR:-$ROOT/build}
TRAINER=$BUILD/trainer/ddp-cifar100
SYNTH=$BUILD/trainer/data/cifar-synth
for f in "$TRAINER" "$SYNTH"; do [ -x "$f" ] || { echo "build first (missing $f)" >&2; exit 1; }; done

gpus=$( (nvidia-smi -L 2>/dev/null || true) | grep -c '^GPU' || true)
if [ "$gpus" -gt 0 ]; then
  device=GPU
  RANKS=${1:-$gpus} WIDTH=${2:-1} BATCH=${3:-$((256 * ${1:-$gpus}))} WORKERS=${5:-8}
  PRECISION=${PRECISION:-fp16} PYTHON=${PYTHON:-$(command -v python3)}
  TRAIN_SAMPLES=${TRAIN_SAMPLES:-50000} TEST_SAMPLES=${TEST_SAMPLES:-10000}
  gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
else
  device=CPU
  RANKS=${1:-2} WIDTH=${2:-0.25} BATCH=${3:-128} WORKERS=${5:-0}
  PRECISION=${PRECISION:-fp32} PYTHON=${PYTHON:-/usr/bin/python3}
  TRAIN_SAMPLES=${TRAIN_SAMPLES:-4096} TEST_SAMPLES=${TEST_SAMPLES:-1024}
  gpu_name=''
fi
EPOCHS=${4:-3} REPEATS=${REPEATS:-3}
[ "$device" = GPU ] && TUNED=${TUNED:-1} || TUNED=0
[ -z "${LOG_DIR:-}" ] || mkdir -p "$LOG_DIR"

# shellcheck source=bench/peak.sh
source "$ROOT/bench/peak.sh"
peak=${PEAK_TFLOPS:-$( [ -n "$gpu_name" ] && peak_of "$gpu_name" "$PRECISION" || true)}

work=$(mktemp -d /tmp/ddp-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$SYNTH" --out "$work/data" --train "$TRAIN_SAMPLES" --test "$TEST_SAMPLES" --seed 1 >/dev/null

# run NAME CMD...: RANKS ranks with a torchrun-style environment; rank 0's output to $work/NAME.0
# (and LOG_DIR); prints the mean throughput of the epochs after the first. With OPTIONAL=1 a failed
# run prints nothing instead of ending the benchmark.
run() {
  local name=$1 port=$(( 20000 + RANDOM % 9000 )) pids=() r status=0
  shift
  for ((r = 0; r < RANKS; r++)); do
    env -i PATH="$PATH" HOME="$work" ${LD_LIBRARY_PATH:+LD_LIBRARY_PATH="$LD_LIBRARY_PATH"} \
      RANK=$r LOCAL_RANK=$r WORLD_SIZE="$RANKS" LOCAL_WORLD_SIZE="$RANKS" \
      MASTER_ADDR=127.0.0.1 MASTER_PORT=$port GLOO_SOCKET_IFNAME=lo \
      OMP_NUM_THREADS=$(( $(nproc) / RANKS > 0 ? $(nproc) / RANKS : 1 )) \
      "$@" >"$work/$name.$r" 2>&1 &
    pids+=($!)
  done
  for r in "${pids[@]}"; do wait "$r" || status=$?; done
  [ -z "${LOG_DIR:-}" ] || cp "$work/$name.0" "$LOG_DIR/$name-$RUN.log"
  if [ "$status" != 0 ]; then
    echo "$name failed:" >&2
    tail -n 30 "$work/$name.0" >&2
    [ "${OPTIONAL:-0}" = 1 ] && return 0
    exit 1
  fi
  grep 'Epoch Throughput' "$work/$name.0" | awk 'NR > 1 { s += $3; n++ } END { print (n ? s / n : 0) }'
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

common=(--data-dir "$work/data" --batch-size "$BATCH" --epochs "$EPOCHS" --width "$WIDTH"
        --base-lr 0.02 --precision "$PRECISION")
# shellcheck disable=SC2206 # CPP_ARGS is a list of words
cpp_extra=(--augment-test ${CPP_ARGS:-})
cpp_runs='' py_runs='' tuned_runs=''
for ((i = 0; i < REPEATS; i++)); do
  RUN=$((i + 1))
  cpp_runs+=" $(run cpp "$TRAINER" "${common[@]}" "${cpp_extra[@]}")"
  py_runs+=" $(run python "$PYTHON" "$ROOT/bench/reference_ddp.py" "${common[@]}" --workers "$WORKERS")"
  [ "$TUNED" = 1 ] && tuned_runs+=" $(OPTIONAL=1 run tuned "$PYTHON" "$ROOT/bench/tuned_reference.py" "${common[@]}")"
done
cpp=$(median <<<"$cpp_runs")
py=$(median <<<"$py_runs")
tuned=$( [ -n "${tuned_runs// /}" ] && median <<<"$tuned_runs" || true)
# Validation accuracy by epoch, from each program's last run.
curve() { [ -f "$work/$1.0" ] && sed -n 's/^Validation Loss: .*, Validation Accuracy: \([0-9.]*\)$/\1/p' "$work/$1.0" | paste -sd' ' || true; }
cpp_curve=$(curve cpp) py_curve=$(curve python) tuned_curve=$( [ "$TUNED" = 1 ] && curve tuned || true)
gflop=$(sed -n 's/^Model: .* \([0-9.]*\) GFLOP per trained image$/\1/p' "$work/cpp.0")
awk -v c="$cpp" -v p="$py" -v r="$RANKS" -v w="$WIDTH" -v b="$BATCH" -v n="$TRAIN_SAMPLES" \
  -v k="$WORKERS" -v e="$EPOCHS" -v m="$REPEATS" -v cr="$cpp_runs" -v pr="$py_runs" \
  -v t="$tuned" -v tr="$tuned_runs" -v tu="$TUNED" -v cc="$cpp_curve" -v pc="$py_curve" \
  -v tc="$tuned_curve" -v extra="${CPP_ARGS:-}" \
  -v dev="$device" -v prec="$PRECISION" -v name="$gpu_name" -v g="$gflop" -v peak="$peak" 'BEGIN {
  backend = dev == "GPU" ? "nccl" : "gloo"
  printf "CIFAR-100 WideResNet width %s, global batch %s, %d ranks (%s, %s, %s%s), %d images,\n",
         w, b, r, backend, prec, dev, name == "" ? "" : ": " name, n
  printf "epochs 2..%d of each run, median of %d alternating runs\n", e, m
  printf "  reference recipe in Python (%d loader workers)  %10.1f images/s  (runs:%s)\n", k, p, pr
  if (tu == 1)
    printf "  tuned PyTorch (GPU data, channels_last, fused SGD, torch.compile) %s  (runs:%s)\n",
           t == "" ? "failed" : sprintf("%10.1f images/s", t), tr
  printf "  ddp-cifar100%-34s %10.1f images/s  (runs:%s)\n", extra == "" ? "" : " " extra, c, cr
  if (dev == "GPU")
    printf "  ratio ddp-cifar100 / Python: %.2f (goal >= 2 with fp16 at the reference batch per GPU)\n", c / p
  else
    printf "  ratio ddp-cifar100 / Python: %.2f (goal >= 1.5 on CPU)\n", c / p
  if (t != "")
    printf "  ratio ddp-cifar100 / tuned PyTorch: %.2f\n", c / t
  if (g != "") {
    for (i = 0; i < 3; i++) {
      if (i == 1 && t == "") continue
      who = i == 2 ? "ddp-cifar100" : i == 1 ? "tuned" : "Python"; x = (i == 2 ? c : i == 1 ? t : p) * g / 1000
      share = peak != "" ? sprintf(", %.1f%% of peak %d x %s TFLOP/s", 100 * x / (peak * r), r, peak) : ""
      printf "  achieved %-12s %8.3f TFLOP/s (%s GFLOP per trained image%s)\n", who, x, g, share
    }
  }
  printf "  validation accuracy by epoch (last run): Python [%s]", pc
  if (tu == 1) printf ", tuned [%s]", tc
  printf ", ddp-cifar100 [%s]\n", cc
}'
