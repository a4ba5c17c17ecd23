"""torch.compile failures: a backend that raises, fullgraph with a graph break,
Inductor without a C compiler, a Triton kernel that does not compile."""
import sys
import torch
import torch.nn as nn

mode = sys.argv[1]
dev = torch.device("cuda")


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(256, 1024)
        self.fc2 = nn.Linear(1024, 256)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.fc1(x))
        if mode == "fullgraph" and h.mean() > 0:  # data-dependent branch
            h = h * 2
        return x + self.fc2(h)


model = Block().to(dev)
x = torch.randn(64, 256, device=dev)

if mode == "backend":
    def my_backend(gm, example_inputs):
        import my_fused_kernels  # noqa: F401  (not installed)
        return gm.forward
    cmodel = torch.compile(model, backend=my_backend)
    print(cmodel(x).sum().item())
elif mode == "fullgraph":
    cmodel = torch.compile(model, fullgraph=True)
    print(cmodel(x).sum().item())
elif mode == "nocc":
    cmodel = torch.compile(model)
    print(cmodel(x).sum().item())
elif mode == "triton":
    import triton
    import triton.language as tl

    @triton.jit
    def softmax_rows(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, n_cols)  # must be a power-of-two constexpr
        v = tl.load(x_ptr + row * n_cols + cols)
        e = tl.exp(v - tl.max(v, 0))
        tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, 0))

    y = torch.empty_like(x)
    softmax_rows[(x.shape[0],)](x, y, x.shape[1], BLOCK=256)
    print(y.sum().item())
