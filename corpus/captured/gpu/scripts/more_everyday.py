"""More everyday PyTorch mistakes, each raising what PyTorch really prints. One process (python3
more_everyday.py MODE): embedding-float-ids, conv-wrong-dims, fd-exhausted, load-html-file,
index-out-of-bounds, pin-cuda-tensor, custom-function-grad-shape, healthy-deprecated-amp.
Two ranks sharing one GPU (torchrun --nproc_per_node=2 more_everyday.py MODE): ddp-attribute,
nccl-cpu-tensor."""
import os
import sys
import tempfile
from datetime import timedelta

import torch
import torch.nn as nn

mode = sys.argv[1]
rank = int(os.environ.get("RANK", "0"))
if rank == 0:
    print(f"mode={mode} torch={torch.__version__}", flush=True)

if mode == "embedding-float-ids":
    emb = nn.Embedding(1000, 64).cuda()
    ids = torch.tensor([[1.0, 5.0, 9.0]], device="cuda")  # token ids kept as floats
    print(emb(ids).shape)
elif mode == "conv-wrong-dims":
    conv = nn.Conv2d(3, 16, 3).cuda()
    image = torch.randn(224, 224, device="cuda")  # a grayscale image without channel or batch dims
    print(conv(image).shape)
elif mode == "fd-exhausted":
    import resource

    from torch.utils.data import DataLoader, Dataset

    resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))

    class Pieces(Dataset):
        def __len__(self):
            return 64

        def __getitem__(self, i):
            return [torch.full((4,), float(i)) for _ in range(200)]  # many small tensors a sample

    loader = DataLoader(Pieces(), batch_size=None, num_workers=4)
    for n, sample in enumerate(loader):
        if n % 8 == 0:
            print(f"sample {n}", flush=True)
elif mode == "load-html-file":
    path = os.path.join(tempfile.gettempdir(), "pytorch_model.bin")
    with open(path, "w") as fh:  # what a download of a web page instead of the file leaves
        fh.write("<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body></body></html>\n")
    state = torch.load(path, map_location="cpu")
elif mode == "index-out-of-bounds":
    scores = torch.zeros(5)
    for i in range(6):
        scores[i] += 1.0
elif mode == "pin-cuda-tensor":
    from torch.utils.data import DataLoader, TensorDataset

    data = TensorDataset(torch.randn(64, 16, device="cuda"), torch.zeros(64, device="cuda"))
    for x, y in DataLoader(data, batch_size=16, pin_memory=True):
        print(x.shape, flush=True)
elif mode == "custom-function-grad-shape":

    class ScaleRows(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x * w[:, None]

        @staticmethod
        def backward(ctx, grad):
            x, w = ctx.saved_tensors
            return grad * w[:, None], (grad * x)  # the second gradient keeps x's shape, not w's

    x = torch.randn(8, 4, device="cuda", requires_grad=True)
    w = torch.randn(8, device="cuda", requires_grad=True)
    ScaleRows.apply(x, w).sum().backward()
elif mode == "healthy-deprecated-amp":
    model = nn.Linear(64, 64).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.cuda.amp.GradScaler()
    for step in range(5):
        with torch.cuda.amp.autocast():
            loss = model(torch.randn(16, 64, device="cuda")).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
        print(f"step {step} loss {loss.item():.4f}", flush=True)
    print("training finished", flush=True)

if mode in ("ddp-attribute", "nccl-cpu-tensor"):
    import torch.distributed as dist

    os.environ["NCCL_HOSTID"] = f"box{rank}"  # two ranks share this machine's one GPU
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", timeout=timedelta(seconds=60), device_id=torch.device("cuda", 0))
    if mode == "ddp-attribute":
        from torch.nn.parallel import DistributedDataParallel as DDP

        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(32, 32)

            def forward(self, x):
                return self.proj(x)

            def encode(self, x):
                return self.forward(x).tanh()

        model = DDP(Encoder().cuda(), device_ids=[0])
        print(model.encode(torch.randn(4, 32, device="cuda")).shape)
    else:
        metric = torch.tensor([float(rank)])  # a metric left on the CPU
        dist.all_reduce(metric)
        print(metric.item())
    dist.destroy_process_group()
