"""Network load for the monitor test: 16 Gloo all-reduces of 4 MiB across every rank, spread
over at least 3 seconds. Local rank 0 of each node prints the bytes its socket interface (GLOO_SOCKET_IFNAME)
moved meanwhile, from /proc/net/dev, for the test to compare with the monitor's counts."""
import os
import socket
import time
from datetime import timedelta

import torch
import torch.distributed as dist


def counters(interface):
    with open("/proc/net/dev") as f:
        for line in f:
            name, _, rest = line.partition(":")
            if name.strip() == interface:
                fields = rest.split()
                return int(fields[0]), int(fields[8])
    raise SystemExit(f"{interface} is not in /proc/net/dev")


try:
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
except RuntimeError as e:  # Debian 13's torch without libuv (see gloo_allreduce.py)
    if "libuv" not in str(e):
        raise
    os.environ["USE_LIBUV"] = "0"
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
interface = os.environ["GLOO_SOCKET_IFNAME"]
local = int(os.environ["LOCAL_RANK"])
dist.barrier()
before = counters(interface)
start, rounds = time.monotonic(), 16  # the same on every rank: each all-reduce needs them all
data = torch.ones(1 << 20)  # 4 MiB of float32
for _ in range(rounds):
    dist.all_reduce(data)
    data.fill_(1)
    time.sleep(max(0.0, (start + 3 - time.monotonic()) / rounds))
dist.barrier()
after = counters(interface)
if local == 0:
    print(f"traffic host={socket.gethostname()} if={interface} rounds={rounds} "
          f"rx={after[0] - before[0]} tx={after[1] - before[1]}", flush=True)
dist.destroy_process_group()
