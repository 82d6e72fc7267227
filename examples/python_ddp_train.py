"""Plain PyTorch DDP training, launched by spank_ddp instead of torchrun.

Nothing here knows about Slurm: the process group comes from the torchrun contract
(RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) that the plugin exported.
The task: classify points of synthetic Gaussian clusters with a small MLP, so the accuracy it
prints is meaningful (chance = 1/classes) and the run fits a CPU test cluster.
"""
import argparse
import os
import socket
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def synthetic_clusters(centres, samples, seed):
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, len(centres), (samples,), generator=g)
    points = centres[labels] + torch.randn(samples, centres.shape[1], generator=g) * 1.2
    return TensorDataset(points, labels)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=256, help="global batch size")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--classes", type=int, default=10)
    args = parser.parse_args()

    backend = "nccl" if os.environ.get("DDP_BACKEND") == "nccl" and torch.cuda.is_available() else "gloo"
    dist.init_process_group(backend, timeout=timedelta(seconds=120))
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank) if backend == "nccl" else torch.device("cpu")
    if rank == 0:
        head = os.environ["MASTER_ADDR"]
        print(f"Head node: {head} ({socket.gethostbyname(head)}), port {os.environ['MASTER_PORT']}, "
              f"backend {backend}, world size {world}", flush=True)

    torch.manual_seed(0)
    centres = torch.randn(args.classes, 32, generator=torch.Generator().manual_seed(0)) * 0.5
    train = synthetic_clusters(centres, 20000, seed=1)
    test = synthetic_clusters(centres, 4000, seed=2)
    per_rank = max(1, args.batch_size // world)
    sampler = DistributedSampler(train, shuffle=True, seed=0)
    loader = DataLoader(train, batch_size=per_rank, sampler=sampler, drop_last=True)
    test_loader = DataLoader(test, batch_size=512, sampler=DistributedSampler(test, shuffle=False))

    model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, args.classes)).to(device)
    model = DistributedDataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    start = time.time()
    for epoch in range(1, args.epochs + 1):
        sampler.set_epoch(epoch)
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            loss_fn(model(x.to(device)), y.to(device)).backward()
            optimizer.step()
        model.eval()
        stats = torch.zeros(3, device=device)  # loss sum, correct, count
        with torch.no_grad():
            for x, y in test_loader:
                out = model(x.to(device))
                stats += torch.tensor([loss_fn(out, y.to(device)).item() * len(y),
                                       (out.argmax(1) == y.to(device)).sum().item(), len(y)],
                                      device=device)
        dist.all_reduce(stats)
        if rank == 0:
            print(f"Epoch {epoch}/{args.epochs}: validation loss {stats[0] / stats[2]:.4f}, "
                  f"accuracy {stats[1] / stats[2]:.4f}", flush=True)
    dist.barrier()
    if rank == 0:
        nodes = int(os.environ.get("DDP_NODES", os.environ.get("SLURM_NNODES", "1")))
        print(f"Training time: {time.time() - start:.1f} s\nNumber of nodes: {nodes}\n"
              f"Ranks per node: {os.environ['LOCAL_WORLD_SIZE']}\nTotal ranks: {world}\n"
              "Training completed successfully.", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
