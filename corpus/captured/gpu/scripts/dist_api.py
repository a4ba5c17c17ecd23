"""Mistakes with PyTorch's newer APIs and everyday training code, each raising what PyTorch
really prints. One process (python3 dist_api.py MODE): sdpa-no-kernel, gradscaler-bf16,
multinomial-nan, meta-to-cuda, collate-size, embedding-index-cpu, detect-anomaly-nan,
checkpoint-reentrant, healthy-compile-autotune. Two ranks sharing one GPU (torchrun
--nproc_per_node=2 dist_api.py MODE): dtensor-mixed, mesh-too-big, fsdp2-load-full,
dcp-missing-key, ddp-model-differs, rank-raises, rank-oom, healthy-fsdp2."""
import os
import sys
import tempfile
import time
from datetime import timedelta

import torch
import torch.nn as nn
import torch.nn.functional as F

mode = sys.argv[1]
rank = int(os.environ.get("RANK", "0"))
if rank == 0:
    print(f"mode={mode} torch={torch.__version__}", flush=True)


class Net(nn.Module):
    def __init__(self, hidden=256, extra=False):
        super().__init__()
        self.encoder = nn.Linear(128, hidden)
        self.head = nn.Linear(hidden, 10)
        if extra:
            self.extra = nn.Linear(10, 10)

    def forward(self, x):
        return self.head(torch.relu(self.encoder(x)))


def train_steps(model, steps=5, device="cuda", dtype=torch.float32, label=""):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(steps):
        x = torch.randn(32, 128, device=device, dtype=dtype)
        loss = model(x).float().pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        print(f"{label}step {step} loss {loss.item():.4f}", flush=True)


# ---- one process -------------------------------------------------------------------------
if mode == "sdpa-no-kernel":
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q = torch.randn(2, 8, 512, 64, device="cuda")  # float32: flash attention takes fp16/bf16
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        out = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    print(out.shape)
elif mode == "gradscaler-bf16":
    model = Net().cuda().bfloat16()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    for step in range(3):
        loss = model(torch.randn(32, 128, device="cuda", dtype=torch.bfloat16)).float().pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
        print(f"step {step} loss {loss.item():.4f}", flush=True)
elif mode == "multinomial-nan":
    logits = torch.randn(4, 32000, device="cuda")
    logits[1, 7] = float("nan")
    probs = torch.softmax(logits, dim=-1)
    tokens = torch.multinomial(probs, num_samples=1)
    print(tokens.tolist())
elif mode == "meta-to-cuda":
    with torch.device("meta"):
        model = Net()
    model = model.to("cuda")
    train_steps(model)
elif mode == "collate-size":
    from torch.utils.data import DataLoader, Dataset

    class Images(Dataset):
        def __len__(self):
            return 64

        def __getitem__(self, i):
            side = 224 if i % 5 else 200
            return torch.randn(3, side, side), i % 10

    loader = DataLoader(Images(), batch_size=8, shuffle=False, num_workers=2)
    for n, (images, labels) in enumerate(loader):
        print(f"batch {n} {tuple(images.shape)}", flush=True)
elif mode == "embedding-index-cpu":
    emb = nn.Embedding(1000, 64)
    ids = torch.tensor([[3, 17, 999, 1000]])
    print(emb(ids).shape)
elif mode == "detect-anomaly-nan":
    torch.autograd.set_detect_anomaly(True)
    model = Net().cuda()
    x = torch.randn(32, 128, device="cuda")
    out = model(x)
    loss = torch.sqrt(out - out.max()).mean()  # sqrt of values <= 0: nan gradients
    loss.backward()
elif mode == "checkpoint-reentrant":
    from torch.utils.checkpoint import checkpoint

    model = Net().cuda()
    x = torch.randn(32, 128, device="cuda", requires_grad=True)
    out = checkpoint(model, x)
    out.sum().backward()
    print("backward ok", flush=True)
elif mode == "healthy-compile-autotune":
    model = Net(hidden=1024).cuda()
    compiled = torch.compile(model, mode="max-autotune-no-cudagraphs")
    train_steps(compiled, steps=4)
    print("done", flush=True)

# ---- two ranks ---------------------------------------------------------------------------
if mode in ("dtensor-mixed", "mesh-too-big", "fsdp2-load-full", "dcp-missing-key",
            "ddp-model-differs", "rank-raises", "rank-oom", "healthy-fsdp2"):
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh

    # Both ranks share this machine's one GPU: each gets its own NCCL host id so that NCCL
    # accepts two ranks on one device (socket transport over lo).
    os.environ["NCCL_HOSTID"] = f"box{rank}"
    local = 0
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", timeout=timedelta(seconds=60), device_id=torch.device("cuda", local))
    world = dist.get_world_size()

    if mode == "dtensor-mixed":
        from torch.distributed.tensor import Shard, distribute_tensor

        mesh = init_device_mesh("cuda", (world,))
        w = distribute_tensor(torch.randn(128, 64), mesh, [Shard(0)])
        x = torch.randn(16, 128, device="cuda")
        y = x @ w
        print(y.shape)
    elif mode == "mesh-too-big":
        mesh = init_device_mesh("cuda", (2, 2), mesh_dim_names=("dp", "tp"))
        print(mesh)
    elif mode == "fsdp2-load-full":
        from torch.distributed.fsdp import fully_shard

        model = Net().cuda()
        fully_shard(model.encoder)
        fully_shard(model)
        full = Net().state_dict()
        model.load_state_dict(full)
        train_steps(model, label=f"[rank{rank}] ")
    elif mode == "dcp-missing-key":
        import torch.distributed.checkpoint as dcp
        from torch.distributed.fsdp import fully_shard

        path = os.path.join(tempfile.gettempdir(), "ckpt-dcp-demo")
        old = Net().cuda()
        fully_shard(old)
        dcp.save({"model": old.state_dict()}, checkpoint_id=path)
        dist.barrier()
        new = Net(extra=True).cuda()
        fully_shard(new)
        state = {"model": new.state_dict()}
        dcp.load(state, checkpoint_id=path)
        print("loaded", flush=True)
    elif mode == "ddp-model-differs":
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = Net(hidden=256 if rank == 0 else 512).cuda()
        ddp = DDP(model, device_ids=[local])
        train_steps(ddp)
    elif mode == "rank-raises":
        from torch.nn.parallel import DistributedDataParallel as DDP

        ddp = DDP(Net().cuda(), device_ids=[local])
        opt = torch.optim.AdamW(ddp.parameters(), lr=1e-3)
        for step in range(10):
            width = 100 if (rank == 1 and step == 3) else 128  # one malformed batch on rank 1
            x = torch.randn(32, width, device="cuda")
            loss = ddp(x).pow(2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
            print(f"[rank{rank}] step {step} loss {loss.item():.4f}", flush=True)
    elif mode == "rank-oom":
        from torch.nn.parallel import DistributedDataParallel as DDP

        ddp = DDP(Net().cuda(), device_ids=[local])
        opt = torch.optim.AdamW(ddp.parameters(), lr=1e-3)
        for step in range(10):
            batch = 32 if not (rank == 1 and step == 2) else 1 << 29  # a runaway batch on rank 1
            x = torch.randn(batch, 128, device="cuda")
            loss = ddp(x).pow(2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
            print(f"[rank{rank}] step {step} loss {loss.item():.4f}", flush=True)
    elif mode == "healthy-fsdp2":
        from torch.distributed.fsdp import fully_shard

        model = Net(hidden=1024).cuda()
        fully_shard(model.encoder)
        fully_shard(model)
        train_steps(model, steps=6, label=f"[rank{rank}] ")
        time.sleep(0.5)
    dist.destroy_process_group()
