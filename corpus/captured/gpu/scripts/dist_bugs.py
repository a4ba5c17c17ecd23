"""Distributed-training and kernel mistakes, each raising what PyTorch / Triton really print.
modes: mismatch (ranks issue different collectives, TORCH_DISTRIBUTED_DEBUG=DETAIL),
ready-twice (a DDP parameter used in two reentrant checkpointed passes),
fsdp-dtype (an FSDP unit mixing bf16 and fp32 parameters), triton-smem (a Triton kernel
whose tiles do not fit in shared memory)."""
import os
import sys
from datetime import timedelta

import torch
import torch.nn as nn

mode = sys.argv[1]

if mode == "triton-smem":
    import triton
    import triton.language as tl

    @triton.jit
    def tile_matmul(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        a = tl.load(a_ptr + offs[:, None] * BLOCK + offs[None, :])
        b = tl.load(b_ptr + offs[:, None] * BLOCK + offs[None, :])
        tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], tl.dot(a, b))

    n = 256
    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    c = torch.empty_like(a)
    print(f"launching tile_matmul with BLOCK={n} on {torch.cuda.get_device_name()}", flush=True)
    tile_matmul[(1,)](a, b, c, BLOCK=n, num_stages=4)
    torch.cuda.synchronize()
    sys.exit(0)

import torch.distributed as dist

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
if mode == "mismatch":
    os.environ["NCCL_HOSTID"] = f"box{rank}"  # two ranks share this box's single GPU
torch.cuda.set_device(0)
dist.init_process_group("nccl", timeout=timedelta(seconds=60))
print(f"[rank {rank}] world={world} torch={torch.__version__}", flush=True)
device = torch.device("cuda", 0)

if mode == "mismatch":
    t = torch.ones(1024, device=device)
    dist.all_reduce(t)
    for step in range(1, 4):
        t = torch.ones(1024, device=device) * step
        if rank == 0 and step == 3:
            print(f"[rank {rank}] step {step}: saving checkpoint", flush=True)
            dist.barrier()  # only rank 0 decided to checkpoint
        dist.all_reduce(t)
        print(f"[rank {rank}] step {step} ok {t[0].item()}", flush=True)
elif mode == "ready-twice":
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.checkpoint import checkpoint

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(512, 512)

        def forward(self, x):
            # the same layer checkpointed twice: two reentrant backward passes touch proj
            x = checkpoint(self.proj, x, use_reentrant=True)
            return checkpoint(self.proj, x, use_reentrant=True)

    # find_unused_parameters=True, as Trainer sets it for models that are not PreTrainedModel
    model = DDP(Block().to(device), device_ids=[0], find_unused_parameters=True)
    x = torch.randn(64, 512, device=device, requires_grad=True)
    model(x).sum().backward()
elif mode == "fsdp-dtype":
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

    model = nn.Sequential(nn.Linear(512, 512), nn.LayerNorm(512), nn.Linear(512, 512)).to(device)
    model.to(torch.bfloat16)
    model[1].float()  # a norm kept in float32, as adapter / upcast recipes do
    model = FSDP(model, device_id=device, use_orig_params=False)
    print(model(torch.randn(8, 512, device=device, dtype=torch.bfloat16)).sum())
dist.destroy_process_group()
