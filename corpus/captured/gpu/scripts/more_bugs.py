"""More everyday failures, each raising what PyTorch really prints.
modes: graph-capture-sync (a host sync inside CUDA graph capture), backward-twice (a second
backward through a freed graph), inference-tensor (a tensor made under inference_mode used in
training), state-missing / state-size / state-prefix (load_state_dict mismatches), empty-params
(an optimizer over a model with no trainable parameters), nccl-oom (NCCL init on a full GPU)."""
import os
import sys
from datetime import timedelta

import torch
import torch.nn as nn

mode = sys.argv[1]
print(f"mode={mode} torch={torch.__version__}", flush=True)


class Net(nn.Module):
    def __init__(self, hidden=256):
        super().__init__()
        self.encoder = nn.Linear(128, hidden)
        self.head = nn.Linear(hidden, 10)

    def forward(self, x):
        return self.head(torch.relu(self.encoder(x)))


if mode == "graph-capture-sync":
    model = Net().cuda()
    x = torch.randn(8, 128, device="cuda")
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        model(x)
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        y = model(x)
        if y.sum().item() > 0:  # a host sync while capturing
            y = y * 2
elif mode == "backward-twice":
    model = Net().cuda()
    out = model(torch.randn(8, 128, device="cuda"))
    loss_a = out.pow(2).mean()
    loss_b = out.abs().mean()
    loss_a.backward()
    loss_b.backward()
elif mode == "inference-tensor":
    model = Net().cuda()
    with torch.inference_mode():
        feats = torch.randn(8, 128, device="cuda") * 2
    model.train()
    loss = model(feats).pow(2).mean()
    loss.backward()
    w = torch.nn.Parameter(torch.ones(8, 10, device="cuda"))
    with torch.inference_mode():
        cached = model(torch.randn(8, 128, device="cuda"))
    (cached * w).sum().backward()
elif mode in ("state-missing", "state-size", "state-prefix"):
    src = Net(hidden=512 if mode == "state-size" else 256)
    state = src.state_dict()
    if mode == "state-missing":
        state.pop("head.bias")
        state["classifier.weight"] = state.pop("head.weight")
    if mode == "state-prefix":
        state = {f"module.{k}": v for k, v in state.items()}
    torch.save(state, "/tmp/net.pt")
    Net().load_state_dict(torch.load("/tmp/net.pt"))
elif mode == "empty-params":
    model = Net()
    for p in model.parameters():
        p.requires_grad_(False)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
elif mode == "nccl-oom":
    import torch.distributed as dist

    torch.cuda.set_device(0)
    free, _ = torch.cuda.mem_get_info()
    hog = torch.empty(free - (64 << 20), dtype=torch.uint8, device="cuda")
    print(f"left {torch.cuda.mem_get_info()[0] >> 20} MiB free", flush=True)
    dist.init_process_group("nccl", timeout=timedelta(seconds=60), device_id=torch.device("cuda", 0))
    t = torch.ones(1 << 22, device="cuda")
    dist.all_reduce(t)
    torch.cuda.synchronize()
else:
    raise SystemExit(f"unknown mode {mode}")
print("done", flush=True)
