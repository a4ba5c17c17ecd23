"""A C++/CUDA extension built with load_inline: mode 'misaligned' reads float4
from a misaligned address; mode 'arch' is a correct kernel built with
TORCH_CUDA_ARCH_LIST set for another GPU generation."""
import sys
import torch
from torch.utils.cpp_extension import load_inline

mode = sys.argv[1] if len(sys.argv) > 1 else "misaligned"
cuda_src = r'''
#include <torch/extension.h>
#define OFFSET ''' + ("4" if mode == "misaligned" else "0") + r'''
__global__ void pack_rows_kernel(const char* base, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float4* v = reinterpret_cast<const float4*>(base + OFFSET + 16 * i);
        float4 f = v[0];
        out[i] = f.x + f.y + f.z + f.w;
    }
}
torch::Tensor pack_rows(torch::Tensor x) {
    int n = x.numel() / 4;
    auto out = torch::empty({n}, x.options());
    pack_rows_kernel<<<(n + 255) / 256, 256>>>((const char*)x.data_ptr(), out.data_ptr<float>(), n);
    return out;
}
'''
cpp_src = "torch::Tensor pack_rows(torch::Tensor x);"
ext = load_inline(name=f"pack_ext_{mode}", cpp_sources=cpp_src, cuda_sources=cuda_src,
                  functions=["pack_rows"], verbose=True, extra_cuda_cflags=["-O2"])
x = torch.randn(1 << 20, device="cuda")
y = ext.pack_rows(x)
print("result", y.norm().item(), flush=True)
