"""cuBLAS calls made after an earlier kernel has faulted asynchronously (an
out-of-bounds Triton store): the GEMM is where the error shows up.
modes: gemm (a @ b, handle already created), linear (F.linear with bias),
nohandle (the first GEMM of the process comes after the fault); full: fill the
card first, then run the first GEMM of the process."""
import sys
import time
import torch
import torch.nn.functional as F
import triton
import triton.language as tl

mode = sys.argv[1] if len(sys.argv) > 1 else "gemm"


@triton.jit
def scatter_rows(x_ptr, out_ptr, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    tl.store(out_ptr + row * stride_row + cols, tl.load(x_ptr + cols))


dev = torch.device("cuda")
a = torch.randn(4096, 4096, device=dev)
b = torch.randn(4096, 4096, device=dev)
bias = torch.randn(4096, device=dev)
if mode == "full":
    hold = []
    for chunk in (1 << 30, 1 << 26, 1 << 21, 1 << 20, 1 << 16):
        while True:
            try:
                hold.append(torch.empty(chunk, dtype=torch.uint8, device=dev))
            except torch.OutOfMemoryError:
                break
    free, total = torch.cuda.mem_get_info()
    print(f"holding {sum(h.numel() for h in hold)/2**30:.2f} GiB, free {free/2**20:.1f} MiB of {total/2**30:.2f} GiB", flush=True)
    c = a @ b
    print("c", c.sum().item(), flush=True)
    sys.exit(0)
if mode != "nohandle":
    c = a @ b
    torch.cuda.synchronize()
    print("warm-up gemm ok", flush=True)
out = torch.empty(4096, 1024, device=dev)
scatter_rows[(4096,)](a, out, 1 << 32, BLOCK=1024)
time.sleep(2)  # no synchronize: the fault is still pending
if mode == "linear":
    d = F.linear(a, b, bias)
else:
    d = a @ b
print("d", d.sum().item(), flush=True)
