"""A small data-parallel training job launched with torchrun.
modes: healthy (train and exit), dup (every rank picks cuda:0),
stuck (rank 1 stalls before an all_reduce), spin (the collective waits behind a
long kernel)."""
import os
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

mode = sys.argv[1] if len(sys.argv) > 1 else "healthy"
rank = int(os.environ["RANK"])
local_rank = int(os.environ["LOCAL_RANK"])
world = int(os.environ["WORLD_SIZE"])

if mode == "stuck":
    # two ranks share the single GPU of this box; give each its own host id so
    # that NCCL accepts them (traffic goes over the loopback socket transport)
    os.environ["NCCL_HOSTID"] = f"box{rank}"

device = torch.device("cuda", 0 if mode in ("dup", "stuck") else local_rank)
torch.cuda.set_device(device)
dist.init_process_group("nccl", timeout=timedelta(seconds=30))
print(f"[rank {rank}] world={world} device={device} torch={torch.__version__}", flush=True)

torch.manual_seed(1234 + rank)
model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).to(device)

if mode in ("healthy", "dup"):
    ddp = DDP(model, device_ids=[device.index])
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    for step in range(1, 201):
        x = torch.randn(256, 1024, device=device)
        loss = (ddp(x) - x).pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 50 == 0:
            l = loss.detach().clone()
            dist.all_reduce(l)
            if rank == 0:
                print(f"step {step} loss {l.item() / world:.5f}", flush=True)
    dist.barrier()
    if rank == 0:
        print("training finished", flush=True)
    dist.destroy_process_group()
elif mode == "stuck":
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for step in range(1, 101):
        x = torch.randn(256, 1024, device=device)
        loss = (model(x) - x).pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if rank == 1 and step == 20:
            print(f"[rank {rank}] step {step}: reading next shard ...", flush=True)
            time.sleep(600)  # stalled input pipeline on one rank
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= world
        opt.step()
        if step % 10 == 0:
            print(f"[rank {rank}] step {step} loss {loss.item():.5f}", flush=True)
    dist.destroy_process_group()
elif mode == "spin":
    import cupy as cp
    import numpy as np
    spin = cp.RawKernel(r'''
    extern "C" __global__ void spin(long long cycles) {
        long long t0 = clock64();
        while (clock64() - t0 < cycles) { }
    }''', "spin")
    t = torch.ones(1 << 20, device=device)
    dist.all_reduce(t)
    torch.cuda.synchronize()
    print(f"[rank {rank}] warm-up all_reduce ok: {t[0].item()}", flush=True)
    with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
        spin((1,), (1,), (np.int64(2_000_000_000 * 75),))  # ~75 s of busy kernel
    dist.all_reduce(t)
    print(f"[rank {rank}] result {t[0].item()}", flush=True)
