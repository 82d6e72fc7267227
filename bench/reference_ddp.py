"""A faithful Python implementation of the reference recipe (the PyTorch-on-Olivia guide's
train_ddp.py, model.py, dataset_utils.py), for side-by-side throughput comparison with
ddp-cifar100 on the same data, model width, batch, precision and ranks.

What is the reference's: the WideResNet layer for layer, per-sample transforms in a DataLoader
(RandomHorizontalFlip, RandomCrop(32, padding=4), ToTensor, Normalize) applied to train and test
images, DistributedSampler with set_epoch, drop_last loaders, SGD(momentum 0.9, weight decay 5e-4),
torch.nn.parallel.DistributedDataParallel, fp16 autocast + GradScaler on GPU, a barrier after each
epoch, throughput = steps * global batch / epoch time, and its output lines.
What differs: torchvision is not needed (Debian has none for torch 1.13): the dataset reads the
CIFAR-100 binary files and the transforms are written out with the same semantics; --width scales
the channels as ddp-cifar100's --width does; --workers defaults to the reference's 8.
Launched like any torchrun-compatible program (spank_ddp, torchrun, or the bench script).
"""
import argparse
import contextlib
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

MEAN = torch.tensor([0.5071, 0.4867, 0.4408]).view(3, 1, 1)
STD = torch.tensor([0.2675, 0.2565, 0.2761]).view(3, 1, 1)


class Cifar100Binary(Dataset):
    def __init__(self, data_dir, train, limit=0):
        name = "train.bin" if train else "test.bin"
        path = os.path.join(data_dir, "cifar-100-binary", name)
        if not os.path.exists(path):
            path = os.path.join(data_dir, name)
        raw = np.fromfile(path, dtype=np.uint8).reshape(-1, 3074)
        if limit:
            raw = raw[:limit]
        self.labels = torch.from_numpy(raw[:, 1].astype(np.int64))
        self.images = torch.from_numpy(raw[:, 2:].reshape(-1, 3, 32, 32).copy())

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        img = self.images[i]
        if torch.rand(1).item() < 0.5:  # RandomHorizontalFlip
            img = img.flip(2)
        padded = torch.zeros(3, 40, 40, dtype=torch.uint8)  # RandomCrop(32, padding=4)
        padded[:, 4:36, 4:36] = img
        top, left = torch.randint(0, 9, (2,)).tolist()
        img = padded[:, top:top + 32, left:left + 32]
        img = img.float().div(255)  # ToTensor
        return (img - MEAN) / STD, self.labels[i]  # Normalize


def cbr(i, o):
    return nn.Sequential(nn.Conv2d(i, o, 3, padding="same", bias=False), nn.BatchNorm2d(o), nn.ReLU())


class ConvBlock(nn.Module):
    def __init__(self, i, o, scale=False):
        super().__init__()
        self.layer1 = cbr(i, o)
        self.dropout = nn.Dropout(0.01)
        self.layer2 = cbr(o, o)
        self.shortcut = nn.Conv2d(i, o, 1) if scale else nn.Identity()

    def forward(self, x):
        return self.layer2(self.dropout(self.layer1(x))) + self.shortcut(x)


class WideResNet(nn.Module):
    def __init__(self, num_classes=100, width=1.0):
        super().__init__()
        c1, c2, c3 = (max(1, round(c * width)) for c in (160, 320, 640))
        self.net = nn.Sequential(
            cbr(3, 16), ConvBlock(16, c1, True), ConvBlock(c1, c1), nn.MaxPool2d(2),
            ConvBlock(c1, c2, True), ConvBlock(c2, c2), nn.MaxPool2d(2),
            ConvBlock(c2, c3, True), ConvBlock(c3, c3), nn.AvgPool2d(7), nn.Flatten(),
            nn.Linear(c3, num_classes))

    def forward(self, x):
        return self.net(x)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--base-lr", type=float, default=0.01)
    p.add_argument("--data-dir", default="./datasets")
    p.add_argument("--width", type=float, default=1.0)
    p.add_argument("--workers", type=int, default=8)
    # The reference trains with fp16 autocast on GPUs and fp32 on CPUs; the others are for
    # comparing ddp-cifar100's --precision choices like for like.
    p.add_argument("--precision", choices=["fp32", "fp16", "bf16"], default=None)
    p.add_argument("--max-train-samples", type=int, default=0)
    p.add_argument("--max-test-samples", type=int, default=0)
    args = p.parse_args()

    cuda = torch.cuda.is_available()
    precision = args.precision or ("fp16" if cuda else "fp32")
    if precision == "fp16" and not cuda:
        p.error("--precision fp16 needs a GPU")
    amp_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(precision)
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device(f"cuda:{local_rank}") if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(local_rank)

    train_set = Cifar100Binary(args.data_dir, True, args.max_train_samples)
    test_set = Cifar100Binary(args.data_dir, False, args.max_test_samples)
    sampler = DistributedSampler(train_set)
    per_rank = args.batch_size // world
    train_loader = DataLoader(train_set, batch_size=per_rank, sampler=sampler, drop_last=True,
                              num_workers=args.workers, pin_memory=cuda,
                              persistent_workers=args.workers > 0)
    test_loader = DataLoader(test_set, batch_size=per_rank, drop_last=True,
                             num_workers=args.workers, pin_memory=cuda)

    model = DDP(WideResNet(100, args.width).to(device), device_ids=[local_rank] if cuda else None)
    loss_fn = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=args.base_lr, momentum=0.9, weight_decay=5e-4)
    scaler = torch.cuda.amp.GradScaler(enabled=precision == "fp16")
    total_time, total_images = 0.0, 0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        t0 = time.time()
        for images, labels in train_loader:
            images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
            opt.zero_grad()
            with (torch.autocast("cuda" if cuda else "cpu", dtype=amp_dtype) if amp_dtype
                  else contextlib.nullcontext()):
                loss = loss_fn(model(images), labels)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        dist.barrier()
        epoch_time = time.time() - t0
        total_time += epoch_time
        total_images += len(train_loader) * args.batch_size
        model.eval()
        correct, count, loss_sum = 0, 0, 0.0
        with torch.no_grad():
            for images, labels in test_loader:
                images, labels = images.to(device), labels.to(device)
                out = model(images)
                loss_sum += loss_fn(out, labels).item() * len(labels)
                correct += (out.argmax(1) == labels).sum().item()
                count += len(labels)
        stats = torch.tensor([correct / max(count, 1), loss_sum / max(count, 1)], device=device)
        dist.all_reduce(stats)
        stats /= world
        if rank == 0:
            print(f"Epoch {epoch + 1}/{args.epochs} completed in {epoch_time:.3f} seconds")
            print(f"Validation Loss: {stats[1].item():.4f}, Validation Accuracy: {stats[0].item():.4f}")
            print(f"Epoch Throughput: {len(train_loader) * args.batch_size / epoch_time:.3f} images/second",
                  flush=True)
    if rank == 0:
        print("\nTraining Summary:")
        print(f"Total training time: {total_time:.3f} seconds")
        print(f"Throughput: {total_images / total_time:.3f} images/second")
        print("Training completed successfully.", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
