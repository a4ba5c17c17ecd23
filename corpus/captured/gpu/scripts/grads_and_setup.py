"""Gradient, optimizer, layer and process-group mistakes, each raising what PyTorch really
prints. One process (python3 grads_and_setup.py MODE): interpolate-2d, item-multi,
optimizer-non-leaf, layernorm-mixed-cpu, scaled-mm-layout, meta-item, clip-nonfinite,
grad-unused. torchrun with one rank (--nproc_per_node=1): pg-init-twice, allreduce-noncontig,
nccl-no-gpus (run with CUDA_VISIBLE_DEVICES= so that no GPU is visible)."""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

mode = sys.argv[1]
print(f"mode={mode} torch={torch.__version__}", flush=True)

if mode == "interpolate-2d":
    feats = torch.randn(4, 64, device="cuda")  # a batch of feature vectors, no spatial dims
    print(F.interpolate(feats, scale_factor=2, mode="bilinear").shape)
elif mode == "item-multi":
    head = nn.Linear(16, 2).cuda()
    loss = F.mse_loss(head(torch.randn(8, 16, device="cuda")), torch.zeros(8, 2, device="cuda"), reduction="none").mean(0)
    print(f"loss {float(loss):.4f}")  # a per-output loss, two values
elif mode == "optimizer-non-leaf":
    w = torch.randn(16, 16, requires_grad=True)
    opt = torch.optim.SGD([w.cuda()], lr=0.1)  # the copy on the GPU, not the leaf
elif mode == "layernorm-mixed-cpu":
    ln = nn.LayerNorm(64)  # float32 weights
    print(ln(torch.randn(4, 64, dtype=torch.bfloat16)).dtype)
elif mode == "scaled-mm-layout":
    a = torch.randn(32, 64, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(64, 32, device="cuda").to(torch.float8_e4m3fn)  # row-major, not column-major
    one = torch.tensor(1.0, device="cuda")
    print(torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16).shape)
elif mode == "meta-item":
    with torch.device("meta"):
        model = nn.Linear(8, 8)
    print(model.weight.abs().max().item())
elif mode == "clip-nonfinite":
    model = nn.Linear(16, 16).cuda()
    out = model(torch.full((4, 16), 1e38, device="cuda")).pow(2).sum()
    out.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)
elif mode == "grad-unused":
    x = torch.randn(8, requires_grad=True, device="cuda")
    y = torch.randn(8, requires_grad=True, device="cuda")
    print(torch.autograd.grad((x * 2).sum(), [x, y]))
elif mode in ("pg-init-twice", "allreduce-noncontig", "nccl-no-gpus"):
    import torch.distributed as dist

    rank = int(os.environ["RANK"])
    if mode != "nccl-no-gpus":
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl")
    if mode == "pg-init-twice":
        dist.init_process_group("nccl")  # a library call that sets the group up again
    elif mode == "allreduce-noncontig":
        grads = torch.randn(64, 32, device="cuda").t()  # a transposed view
        dist.all_reduce(grads)
    dist.destroy_process_group()
