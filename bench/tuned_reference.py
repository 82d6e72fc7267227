"""The reference recipe as a performance-minded PyTorch user writes it today: the second peer of
ddp-cifar100 in bench/trainer_vs_python.sh (GPU only).

The same as bench/reference_ddp.py (whose dataset reader and WideResNet it imports): model, data,
global batch, SGD(momentum 0.9, weight decay 5e-4), DistributedSampler order, precision (autocast,
GradScaler for fp16), DDP, a barrier after each epoch, throughput = steps * global batch / epoch
time, the same output lines. What a tuned program changes:
- the uint8 images live on the GPU and are augmented there in batches (random flip, random crop of
  the image zero-padded by 4, normalisation), as ddp-cifar100 does, instead of a DataLoader with
  per-sample transforms in worker processes;
- the model and its inputs are channels_last;
- torch.optim.SGD(fused=True), which GradScaler steps without a host sync;
- torch.compile of the DDP model (default mode; --no-compile to compare). Compilation happens in
  the first epoch, which the benchmark leaves out. Evaluation runs the uncompiled module: compiling
  eval mode too would only add start-up time.
"""
import argparse
import contextlib
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data.distributed import DistributedSampler

from reference_ddp import Cifar100Binary, WideResNet


def augment(images, mean, std):
    """Random horizontal flip and random 32x32 crop of the zero-padded (4) image, then [0,1] and
    per-channel normalisation, for a uint8 batch [B,3,32,32] on the GPU."""
    b, d = images.size(0), images.device
    flip = torch.rand(b, device=d) < 0.5
    x = torch.where(flip.view(-1, 1, 1, 1), images.flip(3), images)
    padded = F.pad(x, (4, 4, 4, 4))
    off = torch.randint(0, 9, (2, b), device=d)
    grid = torch.arange(32, device=d)
    rows = (off[0].view(-1, 1) + grid).view(-1, 1, 32, 1)
    cols = (off[1].view(-1, 1) + grid).view(-1, 1, 1, 32)
    batch = torch.arange(b, device=d).view(-1, 1, 1, 1)
    channel = torch.arange(3, device=d).view(1, -1, 1, 1)
    x = padded[batch, channel, rows, cols]
    return ((x.float() / 255 - mean) / std).contiguous(memory_format=torch.channels_last)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--base-lr", type=float, default=0.01)
    p.add_argument("--data-dir", default="./datasets")
    p.add_argument("--width", type=float, default=1.0)
    p.add_argument("--precision", choices=["fp32", "fp16", "bf16"], default="fp16")
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--max-train-samples", type=int, default=0)
    p.add_argument("--max-test-samples", type=int, default=0)
    args = p.parse_args()

    if not torch.cuda.is_available():
        p.error("this peer needs a GPU")
    amp_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(args.precision)
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device(f"cuda:{local_rank}")
    torch.cuda.set_device(local_rank)
    torch.backends.cudnn.benchmark = True

    train = Cifar100Binary(args.data_dir, True, args.max_train_samples)
    test = Cifar100Binary(args.data_dir, False, args.max_test_samples)
    train_x, train_y = train.images.to(device), train.labels.to(device)
    test_x, test_y = test.images.to(device), test.labels.to(device)
    mean = torch.tensor([0.5071, 0.4867, 0.4408], device=device).view(1, 3, 1, 1)
    std = torch.tensor([0.2675, 0.2565, 0.2761], device=device).view(1, 3, 1, 1)
    sampler = DistributedSampler(range(len(train_y)))
    per_rank = args.batch_size // world
    steps = len(sampler) // per_rank  # the reference's loader drops the last partial batch

    model = WideResNet(100, args.width).to(device).to(memory_format=torch.channels_last)
    ddp = DDP(model, device_ids=[local_rank])
    train_model = ddp if args.no_compile else torch.compile(ddp)
    opt = torch.optim.SGD(model.parameters(), lr=args.base_lr, momentum=0.9, weight_decay=5e-4,
                          fused=True)
    scaler = torch.amp.GradScaler("cuda", enabled=args.precision == "fp16")
    autocast = (lambda: torch.autocast("cuda", dtype=amp_dtype)) if amp_dtype else contextlib.nullcontext
    total_time, total_images = 0.0, 0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        order = torch.tensor(list(sampler), device=device)
        model.train()
        torch.cuda.synchronize()
        t0 = time.time()
        for s in range(steps):
            idx = order[s * per_rank:(s + 1) * per_rank]
            x, y = augment(train_x[idx], mean, std), train_y[idx]
            opt.zero_grad(set_to_none=True)
            with autocast():
                loss = F.cross_entropy(train_model(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        dist.barrier()
        torch.cuda.synchronize()
        epoch_time = time.time() - t0
        total_time += epoch_time
        total_images += steps * args.batch_size
        # As the reference: every rank evaluates the whole test set in per-rank batches (the last
        # partial one dropped), in fp32, test images augmented like the training ones.
        model.eval()
        correct, count, loss_sum = 0.0, 0, 0.0
        with torch.no_grad():
            for i in range(0, len(test_y) - per_rank + 1, per_rank):
                x, y = augment(test_x[i:i + per_rank], mean, std), test_y[i:i + per_rank]
                out = model(x).float()
                loss_sum += F.cross_entropy(out, y, reduction="sum")
                correct += (out.argmax(1) == y).sum()
                count += len(y)
        stats = torch.stack([torch.as_tensor(correct, device=device, dtype=torch.float) / max(count, 1),
                             torch.as_tensor(loss_sum, device=device, dtype=torch.float) / max(count, 1)])
        dist.all_reduce(stats)
        stats /= world
        if rank == 0:
            print(f"Epoch {epoch + 1}/{args.epochs} completed in {epoch_time:.3f} seconds")
            print(f"Validation Loss: {stats[1].item():.4f}, Validation Accuracy: {stats[0].item():.4f}")
            print(f"Epoch Throughput: {steps * args.batch_size / epoch_time:.3f} images/second",
                  flush=True)
    if rank == 0:
        print("\nTraining Summary:")
        print(f"Total training time: {total_time:.3f} seconds")
        print(f"Throughput: {total_images / total_time:.3f} images/second")
        print("Training completed successfully.", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
