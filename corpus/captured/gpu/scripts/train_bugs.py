"""Everyday training-job failures, each raising what PyTorch really prints.
modes: store-timeout (a rank whose master never answers), unused-params (DDP with a layer the
forward skips), inplace (a tensor autograd needs, modified in place), weights-only (torch.load of
a pickled object under the weights_only default), truncated-checkpoint (torch.load of a cut
file), loader-killed (a DataLoader worker killed by SIGKILL), no-process-group (a collective
before init_process_group), segfault / sigkill (a torchrun child that dies of a signal),
no-grad (backward of a tensor without grad_fn), unscale-fp16 (GradScaler over fp16 params),
oom-expandable (an OOM with expandable segments on)."""
import os
import signal
import sys
from datetime import timedelta

import torch
import torch.nn as nn

mode = sys.argv[1]
print(f"mode={mode} torch={torch.__version__} cuda={torch.version.cuda}", flush=True)

if mode == "store-timeout":
    import torch.distributed as dist

    dist.init_process_group(
        "nccl", init_method="tcp://127.0.0.1:29911", rank=1, world_size=2, timeout=timedelta(seconds=15)
    )
elif mode == "unused-params":
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(64, 64)
            self.aux_head = nn.Linear(64, 10)  # only used when aux=True

        def forward(self, x, aux=False):
            h = self.body(x)
            return self.aux_head(h) if aux else h

    dist.init_process_group("nccl")
    torch.cuda.set_device(0)
    model = DDP(Net().cuda(), device_ids=[0])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        loss = model(torch.randn(8, 64, device="cuda")).sum()
        loss.backward()
        opt.step()
        opt.zero_grad()
        print(f"step {step} loss {loss.item():.3f}", flush=True)
elif mode == "inplace":
    x = torch.randn(16, 16, device="cuda", requires_grad=True)
    h = torch.sigmoid(x @ x)
    h += 1  # sigmoid's backward needs its output
    h.sum().backward()
elif mode == "weights-only":
    class RunState:
        def __init__(self):
            self.step = 1200
            self.best = 0.42

    torch.save({"model": {"w": torch.zeros(2)}, "state": RunState()}, "/tmp/ckpt-run.pt")
    ckpt = torch.load("/tmp/ckpt-run.pt")
elif mode == "truncated-checkpoint":
    torch.save({"w": torch.randn(1024, 1024)}, "/tmp/ckpt-cut.pt")
    with open("/tmp/ckpt-cut.pt", "r+b") as f:
        f.truncate(os.path.getsize("/tmp/ckpt-cut.pt") // 2)
    state = torch.load("/tmp/ckpt-cut.pt", map_location="cpu")
elif mode == "loader-killed":
    from torch.utils.data import DataLoader, Dataset

    class Shards(Dataset):
        def __len__(self):
            return 64

        def __getitem__(self, i):
            if i == 13:
                os.kill(os.getpid(), signal.SIGKILL)  # as the kernel OOM killer would
            return torch.randn(32)

    for k, batch in enumerate(DataLoader(Shards(), batch_size=4, num_workers=2)):
        print(f"batch {k} {tuple(batch.shape)}", flush=True)
elif mode == "no-process-group":
    import torch.distributed as dist

    t = torch.ones(4, device="cuda")
    dist.all_reduce(t)
elif mode == "segfault":
    import ctypes

    print("rank starting native step", flush=True)
    ctypes.string_at(0)
elif mode == "sigkill":
    print("rank loading shards", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
elif mode == "no-grad":
    model = nn.Linear(8, 1).cuda()
    for p in model.parameters():
        p.requires_grad_(False)
    loss = model(torch.randn(4, 8, device="cuda")).sum()
    loss.backward()
elif mode == "unscale-fp16":
    model = nn.Linear(64, 64).cuda().half()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(torch.randn(8, 64, device="cuda", dtype=torch.float16)).float().sum()
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
elif mode == "oom-expandable":
    free, total = torch.cuda.mem_get_info()
    keep = [torch.empty(int(free * 0.9), dtype=torch.uint8, device="cuda")]
    more = torch.empty(int(free * 0.3), dtype=torch.uint8, device="cuda")
else:
    raise SystemExit(f"unknown mode {mode}")
print("done", flush=True)
