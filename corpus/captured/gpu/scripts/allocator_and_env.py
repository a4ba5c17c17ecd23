"""Settings read from the environment that PyTorch or NCCL refuse, each as PyTorch really reports
it (the setting comes from the command line in run_fifteenth.sh): one process
(python3 allocator_and_env.py alloc) allocates on the GPU; torchrun with one rank
(python3 allocator_and_env.py allreduce) runs one NCCL all_reduce."""
import os
import sys

import torch

mode = sys.argv[1]
print(f"mode={mode} torch={torch.__version__}", flush=True)

if mode == "alloc":
    x = torch.randn(1024, 1024, device="cuda")
    print(float(x.sum()))
elif mode == "allreduce":
    import torch.distributed as dist

    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl")
    t = torch.ones(1 << 20, device="cuda")
    dist.all_reduce(t)
    torch.cuda.synchronize()
    print("sum", float(t[0]))
    dist.destroy_process_group()
