"""A training job started on a GPU that another process already fills."""
import torch
import torch.nn as nn

print(f"torch {torch.__version__}, cuda available {torch.cuda.is_available()}", flush=True)
model = nn.Sequential(nn.Linear(4096, 16384), nn.GELU(), nn.Linear(16384, 4096)).cuda()
opt = torch.optim.AdamW(model.parameters())
x = torch.randn(8192, 4096, device="cuda")
loss = model(x).pow(2).mean()
loss.backward()
opt.step()
print("step ok", loss.item(), flush=True)
