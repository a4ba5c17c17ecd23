"""Shape, one-hot, view and data mistakes, each raising what PyTorch really prints (python3
shapes_and_data.py MODE): expand-size, negative-dim, one-hot-float, one-hot-classes,
dim-out-of-range, view-inplace, tensor-of-strings, healthy-scheduler-order."""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

mode = sys.argv[1]
print(f"mode={mode} torch={torch.__version__}", flush=True)

if mode == "expand-size":
    bias = torch.randn(5, device="cuda")
    print(bias.expand(8, 10).shape)  # a 5-wide bias stretched to 10 columns
elif mode == "negative-dim":
    hidden, heads = 64, 96
    print(nn.Linear(hidden, hidden // heads - 1))  # a size computed from a config comes out negative
elif mode == "one-hot-float":
    labels = torch.tensor([0.0, 2.0, 1.0], device="cuda")
    print(F.one_hot(labels, num_classes=3))
elif mode == "one-hot-classes":
    labels = torch.tensor([0, 2, 3])  # 3 is not below num_classes
    print(F.one_hot(labels, num_classes=3))
elif mode == "dim-out-of-range":
    scores = torch.randn(10, device="cuda")  # one sample, no batch dimension
    print(F.softmax(scores, dim=1))
elif mode == "view-inplace":
    x = torch.randn(4, 6, device="cuda", requires_grad=True)
    parts = (x * 2).unbind(0)
    parts[0].mul_(3)  # in-place on a view returned by a multi-output view op
    print(parts[0].sum())
elif mode == "tensor-of-strings":
    rows = [["positive", "negative"], ["negative", "positive"]]  # labels left as text
    print(torch.tensor(rows))
elif mode == "healthy-scheduler-order":
    model = nn.Linear(16, 4).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2)
    for epoch in range(4):
        sched.step()  # called before the first optimizer.step(): only a warning
        loss = model(torch.randn(8, 16, device="cuda")).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        print(f"epoch {epoch} loss {loss.item():.4f} lr {sched.get_last_lr()[0]:.4f}", flush=True)
    print("done", flush=True)
