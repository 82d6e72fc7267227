"""A torchrun-compatible program: it reads only the environment contract (RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT...) and does a real Gloo all_reduce across every rank."""
import os
import socket
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
local_rank = int(os.environ["LOCAL_RANK"])

# Debian 13's torch 2.6 is built without libuv, yet its TCPStore asks for it by default. The
# classic store, which every torch has (1.13 ignores the variable), is chosen up front: retrying a
# failed init_process_group leaves its first attempt behind, and the ranks then hang at the end.
os.environ["USE_LIBUV"] = "0"
dist.init_process_group("gloo", timeout=timedelta(seconds=60))
assert dist.get_rank() == rank and dist.get_world_size() == world

value = torch.tensor([float(rank + 1)])
dist.all_reduce(value)  # sum of 1..world
gathered = [torch.zeros(1) for _ in range(world)]
dist.all_gather(gathered, torch.tensor([float(rank)]))
print(f"allreduce rank={rank} local_rank={local_rank} world={world} host={socket.gethostname()} "
      f"sum={int(value.item())} expected={world * (world + 1) // 2} "
      f"gathered={','.join(str(int(t.item())) for t in gathered)}", flush=True)
dist.barrier()
# Every rank is done and has said so. torch 2.6's destroy_process_group (Debian 13, Gloo, classic
# store) now and then hangs in one rank after the others left, which the job then waits for:
# leave without it: what this program checks is done.
sys.stdout.flush()
os._exit(0)
