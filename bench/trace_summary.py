#!/usr/bin/env python3
"""Where the GPU time of a training step goes, from a Chrome trace of PyTorch's profiler
(ddp-cifar100 --profile-trace FILE --profile-steps N, or torch.profiler's export_chrome_trace).

    bench/trace_summary.py TRACE.json STEPS

Prints, per step: the span from the first GPU activity to the last, the time the GPU was busy
(the union of kernel, copy and set intervals: streams may overlap) and the gaps; then the busy
time by kind of kernel (convolutions and matrix products, batch norm and activations, the
optimizer, NCCL, ...) and the kernels that took longest. Standard library only.
"""
import json
import re
import sys
from collections import defaultdict

# First match wins; matched against the lower-cased kernel name.
KINDS = [
    ("fused bn+act (ddp-cifar100)", r"ddp::trainer::gpu"),
    ("nccl", r"nccl"),
    ("optimizer + loss scaling", r"sgd|multi_tensor|foreach|amp_|_amp|non_finite|unscale"),
    ("batch norm (native)", r"batch_norm|batchnorm|welford|bn_fw|bn_bw|bn_"),
    ("convolution / matmul", r"conv|xmma|cutlass|sm90_|sm80_|sm100_|gemm|implicit|dgrad|wgrad|fprop|"
                             r"cudnn|nhwc|winograd|hmma|cublas|nchw"),
    ("pooling", r"pool"),
    ("dropout", r"dropout|fused_dropout"),
    ("softmax / loss", r"softmax|nll|cross_entropy"),
    ("reduction", r"reduce"),
    ("elementwise", r"elementwise|vectorized|unrolled|copy|fill|index|where|flip|pad|cat"),
]


def kind_of(name, cat):
    if cat in ("gpu_memcpy", "gpu_memset"):
        return cat
    low = name.lower()
    for kind, pattern in KINDS:
        if re.search(pattern, low):
            return kind
    return "other"


def union_length(intervals):
    total, end = 0.0, float("-inf")
    for start, stop in sorted(intervals):
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        trace = json.load(f)
    steps = int(sys.argv[2])
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    gpu = [e for e in events
           if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    if not gpu:
        sys.exit("no GPU activity in the trace")
    intervals = [(float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0))) for e in gpu]
    span = max(b for _, b in intervals) - min(a for a, _ in intervals)
    busy = union_length(intervals)
    by_kind = defaultdict(float)
    by_kernel = defaultdict(lambda: [0.0, 0])
    for e in gpu:
        d = float(e.get("dur", 0))
        by_kind[kind_of(e["name"], e["cat"])] += d
        k = by_kernel[e["name"]]
        k[0] += d
        k[1] += 1
    kernel_sum = sum(by_kind.values())
    ms = lambda us: us / 1000.0 / steps
    print(f"{steps} steps, {len(gpu)} GPU activities ({len(gpu) / steps:.0f} per step)")
    print(f"per step: span {ms(span):.3f} ms, GPU busy {ms(busy):.3f} ms "
          f"({100 * busy / span:.1f}%), gaps {ms(span - busy):.3f} ms; "
          f"kernel time summed over streams {ms(kernel_sum):.3f} ms")
    print(f"\n{'kind':32} {'ms/step':>9} {'share':>7}")
    for kind, us in sorted(by_kind.items(), key=lambda kv: -kv[1]):
        print(f"{kind:32} {ms(us):9.3f} {100 * us / kernel_sum:6.1f}%")
    print(f"\n{'ms/step':>9} {'calls/step':>10}  kernel (longest 25)")
    for name, (us, n) in sorted(by_kernel.items(), key=lambda kv: -kv[1][0])[:25]:
        short = name if len(name) <= 110 else name[:107] + "..."
        print(f"{ms(us):9.3f} {n / steps:10.1f}  {short}")


if __name__ == "__main__":
    main()
