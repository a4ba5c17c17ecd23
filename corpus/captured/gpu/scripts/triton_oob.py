"""A Triton row-scale kernel launched with a row stride in bytes instead of
elements and no mask: it writes far past the end of the buffer."""
import torch
import triton
import triton.language as tl


@triton.jit
def scale_rows(x_ptr, out_ptr, stride_row, n_cols, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_row + cols)
    tl.store(out_ptr + row * stride_row + cols, x * scale)


x = torch.randn(4096, 1024, device="cuda")
out = torch.empty_like(x)
print(f"triton {triton.__version__}, x {tuple(x.shape)} {x.dtype}", flush=True)
# bug: stride given in bytes and multiplied by a large factor
scale_rows[(x.shape[0],)](x, out, x.stride(0) * x.element_size() * 1048576, x.shape[1], 0.5, BLOCK=1024)
print("checksum", out.sum().item(), flush=True)
