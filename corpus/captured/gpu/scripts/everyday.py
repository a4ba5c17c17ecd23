"""Everyday PyTorch mistakes, each raising what PyTorch really prints. One process (python3
everyday.py MODE): target-out-of-bounds, attn-mask-dtype, inference-inplace, collate-resize,
half-bias, cudagraph-overwritten, healthy-warnings. Two ranks sharing one GPU (torchrun
--nproc_per_node=2 everyday.py MODE): allgather-size, timeout-flight-recorder."""
import os
import sys
import time
from datetime import timedelta

import torch
import torch.nn as nn
import torch.nn.functional as F

mode = sys.argv[1]
rank = int(os.environ.get("RANK", "0"))
if rank == 0:
    print(f"mode={mode} torch={torch.__version__}", flush=True)

if mode == "target-out-of-bounds":
    logits = torch.randn(4, 10, requires_grad=True)
    labels = torch.tensor([1, 2, 10, 3])  # 1-based labels: 10 is past the last class
    loss = F.cross_entropy(logits, labels)
    loss.backward()
elif mode == "attn-mask-dtype":
    q = torch.randn(2, 8, 128, 64, device="cuda", dtype=torch.bfloat16)
    mask = torch.ones(2, 1, 128, 128, device="cuda", dtype=torch.long)  # a 0/1 mask left as int64
    out = F.scaled_dot_product_attention(q, q, q, attn_mask=mask)
    print(out.shape)
elif mode == "inference-inplace":
    model = nn.Linear(64, 64).cuda()
    with torch.inference_mode():
        cache = model(torch.randn(4, 64, device="cuda"))
    for step in range(3):
        cache.add_(model(torch.randn(4, 64, device="cuda")).detach())
        print(f"step {step}", flush=True)
elif mode == "collate-resize":
    from torch.utils.data import DataLoader, Dataset

    class Clips(Dataset):
        def __len__(self):
            return 32

        def __getitem__(self, i):
            frames = 16 if i % 8 == 0 else 12  # the first sample of each batch is the longest
            return torch.randn(frames, 3, 64, 64)

    loader = DataLoader(Clips(), batch_size=8, num_workers=2)
    for n, clips in enumerate(loader):
        print(f"batch {n} {tuple(clips.shape)}", flush=True)
elif mode == "half-bias":
    conv = nn.Conv2d(3, 16, 3).cuda().half()
    x = torch.randn(2, 3, 32, 32, device="cuda")  # float32 input into a half model
    print(conv(x).shape)
elif mode == "cudagraph-overwritten":
    model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 256)).cuda()
    step = torch.compile(model, mode="reduce-overhead")
    outs = []
    with torch.no_grad():
        for i in range(5):
            outs.append(step(torch.randn(32, 256, device="cuda")))
    print(sum(o.sum() for o in outs).item())
elif mode == "healthy-warnings":
    from torch.utils.checkpoint import checkpoint

    torch._dynamo.config.recompile_limit = 2
    layer = nn.Linear(64, 64).cuda()

    @torch.compile(dynamic=False)
    def scale(x, k):
        return x * k

    for k in range(5):
        scale(torch.randn(8, 64, device="cuda"), k)
    x = torch.randn(8, 64, device="cuda")  # no input requires grad
    y = checkpoint(layer, x, use_reentrant=True)
    y.sum().backward()
    print("finished", flush=True)

if mode in ("allgather-size", "timeout-flight-recorder"):
    import torch.distributed as dist

    os.environ["NCCL_HOSTID"] = f"box{rank}"  # two ranks share this machine's one GPU
    torch.cuda.set_device(0)
    timeout = timedelta(seconds=20 if mode == "timeout-flight-recorder" else 60)
    dist.init_process_group("nccl", timeout=timeout, device_id=torch.device("cuda", 0))
    world = dist.get_world_size()
    if mode == "allgather-size":
        inp = torch.ones(1024, device="cuda")
        out = torch.empty(1024 * world + 1, device="cuda")
        dist.all_gather_into_tensor(out, inp)
        print(out.sum().item())
    else:
        t = torch.ones(1 << 20, device="cuda")
        for step in range(3):
            dist.all_reduce(t)
            torch.cuda.synchronize()
            print(f"[rank{rank}] step {step} ok", flush=True)
        if rank == 1:
            time.sleep(90)  # rank 1 stalls; rank 0 waits in the next all_reduce
        dist.all_reduce(t)
        torch.cuda.synchronize()
    dist.destroy_process_group()
