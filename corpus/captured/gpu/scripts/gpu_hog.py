"""Hold almost all GPU memory (another job on the same card), leaving about
`free_mib` MiB free, for `secs` seconds."""
import sys
import time
import torch

free_mib, secs = int(sys.argv[1]), int(sys.argv[2])
hold = []
for chunk in (1 << 30, 1 << 26, 1 << 21):
    while torch.cuda.mem_get_info()[0] > free_mib * 2**20 + chunk:
        hold.append(torch.empty(chunk, dtype=torch.uint8, device="cuda"))
print(f"hog: free now {torch.cuda.mem_get_info()[0] / 2**20:.0f} MiB", flush=True)
time.sleep(secs)
