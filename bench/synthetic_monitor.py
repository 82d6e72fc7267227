#!/usr/bin/env python3
"""Writes the ddp-monitor files of a made-up step: NODES nodes of GPUS GPUs (one rank each), sampled
every INTERVAL seconds for HOURS hours, as ddp-monitor writes them (JSON Lines, ddp-report(1)).
The GPUs are busy (85-99%) with a dip every ~20 minutes; node 7 (when there is one) is slow
(55-65%), and GPU 2 of node 3 is idle. For ddp-report at scale (bench/report_scale.sh) and for
looking at the page by hand.

Nodes differ only in their first line: the body is written once per kind of node and copied, so
1,000 nodes cost little more than three. Readings vary with time, not between normal nodes.

  synthetic_monitor.py OUT_DIR [--job 4242] [--nodes 1000] [--gpus 8] [--hours 24] [--interval 10]
"""
import argparse
import math
import os
import random
import shutil


def body(kind, gpus, samples, interval, seed):
    rnd = random.Random(seed)
    lines = []
    for g in range(gpus):
        lines.append('{"kind":"gpu-info","time":0.012,"gpu":%d,"bus":"0000:%02x:00.0",'
                     '"name":"NVIDIA H100 80GB HBM3","mem_total_mib":81559}' % (g, 0x18 + g * 0x10))
    for g in range(gpus):
        lines.append('{"kind":"task","time":0.05,"rank":%d,"local":%d,"pid":%d}' % (g, g, 4000 + g))
    rx = tx = 0
    for i in range(1, samples + 1):
        t = i * interval + 0.001 * (i % 7)
        dip = 0.6 if (i * interval) % 1200 < interval * 3 else 1.0
        for g in range(gpus):
            if kind == "idle" and g == 2:
                util, mem, power = 0, 512, 71.0
            else:
                base = 60 if kind == "slow" else 92
                util = max(0, min(100, round(dip * (base + rnd.uniform(-5, 7)))))
                mem = 61000 + rnd.randrange(0, 900)
                power = round(120 + 5.2 * util + rnd.uniform(-10, 10), 1)
            lines.append('{"kind":"gpu","time":%.3f,"gpu":%d,"util":%d,"mem_used_mib":%d,"power_w":%.1f}'
                         % (t, g, util, mem, power))
        for g in range(gpus):
            cpu = round(rnd.uniform(95, 105) if not (kind == "idle" and g == 2) else rnd.uniform(0, 2), 1)
            lines.append('{"kind":"cpu","time":%.3f,"rank":%d,"cpu":%.1f}' % (t, g, cpu))
        step = int(interval * (4.5e9 if kind != "slow" else 3.0e9) * dip * (1 + 0.05 * math.sin(i / 9)))
        rx += step
        tx += step
        lines.append('{"kind":"ib","time":%.3f,"nic":"mlx5_0:1","rx_bytes":%d,"tx_bytes":%d}' % (t, rx, tx))
        lines.append('{"kind":"net","time":%.3f,"nic":"ib0","rx_bytes":%d,"tx_bytes":%d}'
                     % (t, i * 40000, i * 38000))
    lines.append('{"kind":"end","time":%.3f,"reason":"step-ended"}' % (samples * interval + 0.5))
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--job", type=int, default=4242)
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--gpus", type=int, default=8)
    p.add_argument("--hours", type=float, default=24)
    p.add_argument("--interval", type=float, default=10)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    samples = int(a.hours * 3600 / a.interval)
    bodies = {}
    for seed, kind in enumerate(("normal", "slow", "idle")):
        path = os.path.join(a.out, ".body-" + kind)
        with open(path, "w") as f:
            f.write(body(kind, a.gpus, samples, a.interval, seed))
        bodies[kind] = path
    for n in range(a.nodes):
        kind = "slow" if n == 7 else "idle" if n == 3 else "normal"
        name = "gn%04d" % (n + 1)
        start = ('{"kind":"start","time":0,"format":2,"job":%d,"step":0,"node":"%s","node_index":%d,'
                 '"nodes":%d,"interval":%g,"unix":%.3f,"pid":%d}\n'
                 % (a.job, name, n, a.nodes, a.interval, 1750000000 + 0.002 * n, 3000 + n))
        with open(os.path.join(a.out, "ddp-monitor-%d.0-%s.jsonl" % (a.job, name)), "w") as out:
            out.write(start)
            with open(bodies[kind]) as b:
                shutil.copyfileobj(b, out, 1 << 20)
    for path in bodies.values():
        os.remove(path)


if __name__ == "__main__":
    main()
