"""Distributed set-up mistakes, each raising what PyTorch / NCCL / Gloo really print.
modes: allreduce (one NCCL all_reduce after init: run with a broken NCCL environment),
missing-rank (rank 0 of 2 waits for a rank that never starts), gloo-missing-rank (the same
with Gloo), memory-fraction (an allocation above torch.cuda.set_per_process_memory_fraction)."""
import os
import sys
from datetime import timedelta

import torch

mode = sys.argv[1]
print(f"mode={mode} torch={torch.__version__} nccl={torch.cuda.nccl.version()}", flush=True)

if mode == "memory-fraction":
    torch.cuda.set_per_process_memory_fraction(0.02)
    x = torch.empty(8 << 30, dtype=torch.uint8, device="cuda")
    sys.exit(0)

import torch.distributed as dist

if mode in ("missing-rank", "gloo-missing-rank"):
    backend = "gloo" if mode.startswith("gloo") else "nccl"
    dist.init_process_group(
        backend, init_method="tcp://127.0.0.1:29933", rank=0, world_size=2, timeout=timedelta(seconds=20)
    )
    sys.exit(0)

rank = int(os.environ.get("RANK", "0"))
torch.cuda.set_device(0)
dist.init_process_group("nccl", timeout=timedelta(seconds=60), device_id=torch.device("cuda", 0))
t = torch.ones(1 << 20, device="cuda")
dist.all_reduce(t)
torch.cuda.synchronize()
print(f"[rank {rank}] all_reduce ok: {t[0].item()}", flush=True)
dist.destroy_process_group()
