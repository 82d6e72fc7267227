"""A small torch.distributed (Gloo) training loop, torchrun-compatible, with one fault injected
on one rank, for the failure watch's cluster tests (test_python_failures.sh):

  python_faults.py FAULT RANK [SECONDS]

FAULT is what rank RANK does after a few steps: raise (an exception, recorded by torch's @record),
sigkill, sigstop (stops itself), slow (a "checkpoint" of SECONDS while the others wait in a
barrier), dstate (hangs in uninterruptible sleep: it execs DDP_DSTATE_PROGRAM), none; or, after
the last step, exit0 (it ends well at once while the others work SECONDS more, as an evaluation
on some ranks). Each rank prints "step N rank R" lines and "done rank R" at the end; the faulty
rank prints "fault F rank R host H at EPOCH" just before its fault."""
import os
import signal
import socket
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

FAULT, FAULTY = sys.argv[1], int(sys.argv[2])
SECONDS = float(sys.argv[3]) if len(sys.argv) > 3 else 20
STEPS = int(os.environ.get("STEPS", "40"))
FAULT_AT = 5


def say(text):
    print(text, flush=True)


def fault(rank):
    say(f"fault {FAULT} rank {rank} host {socket.gethostname()} at {time.time():.3f}")
    if FAULT == "raise":
        raise ValueError(f"injected failure on rank {rank}")
    if FAULT == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    if FAULT == "sigstop":
        os.kill(os.getpid(), signal.SIGSTOP)
    if FAULT == "slow":
        time.sleep(SECONDS)  # a long checkpoint write; the others wait in the barrier
    if FAULT == "dstate":
        os.execv(os.environ["DDP_DSTATE_PROGRAM"], [os.environ["DDP_DSTATE_PROGRAM"]])


@record
def main():
    rank = int(os.environ["RANK"])
    # Debian 13's torch 2.6 lacks libuv (see gloo_allreduce.py).
    os.environ["USE_LIBUV"] = "0"
    # Long collective time-outs: only the failure watch may end this step early.
    dist.init_process_group("gloo", timeout=timedelta(seconds=600))
    weights = torch.ones(1000)
    for step in range(STEPS):
        if step == FAULT_AT and rank == FAULTY and FAULT not in ("none", "exit0"):
            fault(rank)
        if step == FAULT_AT:
            dist.barrier()
        grad = torch.full((1000,), float(rank + 1))
        dist.all_reduce(grad)
        weights -= 1e-6 * grad
        if step % 10 == 0:
            say(f"step {step} rank {rank}")
        time.sleep(0.05)
    if FAULT == "exit0":
        if rank == FAULTY:
            fault(rank)
            say(f"done rank {rank}")
            sys.stdout.flush()
            os._exit(0)
        time.sleep(SECONDS)
    say(f"done rank {rank}")
    sys.stdout.flush()
    os._exit(0)  # see gloo_allreduce.py: torch 2.6's destroy_process_group may hang


if __name__ == "__main__":
    main()
