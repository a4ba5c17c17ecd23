"""Determinism switches, device placement and data-split mistakes, each raising what PyTorch
really prints (python3 determinism_and_devices.py MODE): det-cublas, det-op, mse-long-target,
rnn-device, dp-params-on-cpu, random-split-lengths, ce-target-int."""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

mode = sys.argv[1]
print(f"mode={mode} torch={torch.__version__}", flush=True)

if mode == "det-cublas":
    torch.use_deterministic_algorithms(True)  # CUBLAS_WORKSPACE_CONFIG left unset
    layer = nn.Linear(64, 64).cuda()
    print(layer(torch.randn(8, 64, device="cuda")).sum().item())
elif mode == "det-op":
    torch.use_deterministic_algorithms(True)
    x = torch.randn(2, 3, 16, 16, device="cuda", requires_grad=True)
    y = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
    y.sum().backward()
elif mode == "mse-long-target":
    head = nn.Linear(16, 1).cuda()
    pred = head(torch.randn(8, 16, device="cuda")).squeeze(1)
    target = torch.randint(0, 5, (8,), device="cuda")  # integer ratings read from a CSV
    loss = F.mse_loss(pred, target)
    loss.backward()
elif mode == "rnn-device":
    rnn = nn.GRU(32, 64, batch_first=True).cuda()
    out, _ = rnn(torch.randn(4, 10, 32))  # the batch stayed on the CPU
elif mode == "dp-params-on-cpu":
    model = nn.DataParallel(nn.Linear(32, 8))  # wrapped before .cuda()
    print(model(torch.randn(4, 32, device="cuda")).shape)
elif mode == "random-split-lengths":
    data = torch.utils.data.TensorDataset(torch.randn(1001, 4))
    train, val = torch.utils.data.random_split(data, [800, 200])
elif mode == "ce-target-int":
    logits = torch.randn(8, 5, device="cuda", requires_grad=True)
    labels = torch.randint(0, 5, (8,), device="cuda", dtype=torch.int32)
    print(F.cross_entropy(logits, labels).item())
