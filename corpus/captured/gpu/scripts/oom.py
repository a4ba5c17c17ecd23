"""Train a wide MLP with a batch that does not fit (mode 'batch'), or keep
activations alive across steps until the card is full (mode 'leak')."""
import sys
import torch
import torch.nn as nn

mode = sys.argv[1] if len(sys.argv) > 1 else "batch"
torch.manual_seed(0)
dev = torch.device("cuda")
print(f"torch {torch.__version__} cuda {torch.version.cuda} device {torch.cuda.get_device_name(0)}", flush=True)

model = nn.Sequential(nn.Linear(8192, 32768), nn.GELU(), nn.Linear(32768, 8192)).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
print(f"params: {sum(p.numel() for p in model.parameters())/1e6:.1f}M", flush=True)

if mode == "batch":
    for bs in (4096, 65536, 1048576):
        x = torch.randn(bs, 8192, device=dev)
        loss = model(x).float().pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        print(f"batch_size={bs} loss={loss.item():.4f} "
              f"max_allocated={torch.cuda.max_memory_allocated()/2**30:.2f} GiB", flush=True)
else:
    history = []
    step = 0
    while True:
        x = torch.randn(16384, 8192, device=dev)
        out = model(x)
        loss = out.float().pow(2).mean()
        history.append(loss)  # keeps the whole graph of every step alive
        step += 1
        if step % 5 == 0:
            print(f"step {step} allocated={torch.cuda.memory_allocated()/2**30:.2f} GiB", flush=True)
