"""Mistakes in user code: tensors on different devices, different dtypes,
shapes that don't line up, an op without a kernel for the dtype."""
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F

mode = sys.argv[1]
torch.manual_seed(0)
dev = torch.device("cuda") if mode not in ("novisible", "ordinal") else None

if mode == "device":
    model = nn.Sequential(nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10)).to(dev)
    x = torch.randn(32, 512)  # forgot .to(dev)
    print(model(x).shape)
elif mode == "conv":
    model = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1))  # left on the CPU
    x = torch.randn(8, 3, 64, 64, device=dev)
    print(model(x).shape)
elif mode == "dtype-linear":
    model = nn.Sequential(nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10)).to(dev, torch.bfloat16)
    x = torch.randn(32, 512, device=dev)  # float32 input into a bf16 model
    print(model(x).shape)
elif mode == "dtype-matmul":
    q = torch.randn(4, 8, 128, 64, device=dev, dtype=torch.float16)
    k = torch.randn(4, 8, 128, 64, device=dev)
    print(torch.matmul(q, k.transpose(-1, -2)).shape)
elif mode == "shape":
    model = nn.Sequential(nn.Flatten(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10)).to(dev)
    x = torch.randn(32, 2, 16, 32, device=dev)  # flattens to 1024, not 512
    print(model(x).shape)
elif mode == "notimpl":
    logits = torch.randn(64, 10, device=dev)
    labels = torch.randint(0, 10, (64,), device=dev, dtype=torch.int32)
    print(F.cross_entropy(logits, labels).item())
elif mode == "notimpl-cpu":
    x = torch.randn(16, 16, dtype=torch.float16).to(torch.complex32)
    print(torch.linalg.inv(x))
elif mode == "novisible":
    # run with CUDA_VISIBLE_DEVICES set to an empty or wrong value
    print("cuda available:", torch.cuda.is_available(), "devices:", torch.cuda.device_count())
    model = nn.Linear(512, 10).cuda()
elif mode == "ordinal":
    local_rank = 1  # e.g. a launcher that assumes two GPUs per node
    torch.cuda.set_device(local_rank)
    print(torch.zeros(1, device="cuda").item())
