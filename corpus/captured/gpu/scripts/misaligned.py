"""A hand-written CUDA kernel (via CuPy/NVRTC) that reads float4 from a byte
offset that is not 16-byte aligned, on PyTorch's stream."""
import numpy as np
import cupy as cp
import torch

src = r'''
extern "C" __global__ void pack_rows(const char* base, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float4* v = reinterpret_cast<const float4*>(base + 4 + 16 * i);
        float4 f = v[0];
        out[i] = f.x + f.y + f.z + f.w;
    }
}
'''
kernel = cp.RawKernel(src, "pack_rows")
x = torch.randn(1 << 20, device="cuda")
out = torch.empty(1 << 18, device="cuda")
n = out.numel()
stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
with stream:
    kernel(((n + 255) // 256,), (256,), (np.uint64(x.data_ptr()), np.uint64(out.data_ptr()), np.int32(n)))
print("launched pack_rows", flush=True)
print("result", out.norm().item(), flush=True)
