"""A torchrun-compatible program: it reads only the environment contract (RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT...) and does a real Gloo all_reduce across every rank."""
import os
import socket
from datetime import timedelta

import torch
import torch.distributed as dist

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
local_rank = int(os.environ["LOCAL_RANK"])


def store_without_libuv_needed():
    """Debian 13's torch 2.6 is built without libuv, yet its TCPStore asks for it by default; the
    documented switch to the classic store is USE_LIBUV=0 (libddp falls back the same way). Asked
    of a throwaway local store before init_process_group: retrying a failed init_process_group
    instead leaves its first attempt behind, and the ranks then hang at the end."""
    try:
        dist.TCPStore("127.0.0.1", 0, 1, True, use_libuv=True)
    except TypeError:  # a torch without the option (1.13): no libuv to ask for
        return False
    except RuntimeError as e:
        return "libuv" in str(e)
    return False


if store_without_libuv_needed():
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
dist.destroy_process_group()
