"""CUDA used in the parent, then used again in a forked child (mode 'process')
or in a DataLoader worker (mode 'dataloader')."""
import sys
import multiprocessing as mp
import torch
from torch.utils.data import DataLoader, Dataset

mode = sys.argv[1] if len(sys.argv) > 1 else "process"
model = torch.nn.Linear(128, 10).cuda()
print("model on", next(model.parameters()).device, flush=True)


def work(i):
    x = torch.randn(32, 128).cuda()
    return model(x).sum().item()


class GpuAugment(Dataset):
    def __len__(self):
        return 1024

    def __getitem__(self, i):
        x = torch.randn(128).to("cuda")  # augmentation on the GPU inside the worker
        return x * 0.5, i % 10


if __name__ == "__main__":
    if mode == "process":
        ctx = mp.get_context("fork")
        with ctx.Pool(2) as pool:
            print(pool.map(work, range(4)))
    else:
        loader = DataLoader(GpuAugment(), batch_size=64, num_workers=2)
        for step, (x, y) in enumerate(loader):
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            print(step, loss.item())
