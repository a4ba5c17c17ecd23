"""Data-conversion, recurrent-layer and cuDNN mistakes, each raising what PyTorch really prints
(python3 data_and_rnn.py MODE): numpy-object, stack-lists, stack-empty, too-many-indices,
lstm-input-size, lstm-hidden-size, cudnn-no-memory (cuDNN on a nearly full GPU: it found an
algorithm and ran, so that capture is not kept)."""
import sys

import numpy as np
import torch
import torch.nn as nn

mode = sys.argv[1]
print(f"mode={mode} torch={torch.__version__}", flush=True)

if mode == "numpy-object":
    column = np.array([[0.1, 0.2], [0.3], [0.4, 0.5]], dtype=object)  # ragged rows from a DataFrame
    print(torch.from_numpy(column))
elif mode == "stack-lists":
    batch = [[1.0, 2.0], [3.0, 4.0]]  # python lists, not tensors
    print(torch.stack(batch))
elif mode == "stack-empty":
    kept = [t for t in torch.randn(4, 8).unbind(0) if t.sum() > 100]  # a filter that kept nothing
    print(torch.stack(kept))
elif mode == "too-many-indices":
    preds = torch.randn(16, device="cuda")  # already reduced to one score per sample
    print(preds[:, 0])
elif mode == "lstm-input-size":
    lstm = nn.LSTM(input_size=10, hidden_size=32, batch_first=True).cuda()
    print(lstm(torch.randn(4, 7, 20, device="cuda"))[0].shape)
elif mode == "lstm-hidden-size":
    lstm = nn.LSTM(input_size=10, hidden_size=32, num_layers=2, batch_first=True).cuda()
    h0 = torch.zeros(1, 4, 32, device="cuda")  # one layer's worth for a two-layer LSTM
    print(lstm(torch.randn(4, 7, 10, device="cuda"), (h0, h0.clone()))[0].shape)
elif mode == "cudnn-no-memory":
    torch.backends.cudnn.benchmark = True
    conv = nn.Conv2d(64, 64, 3, padding=1).cuda().half()
    x = torch.randn(64, 64, 256, 256, device="cuda", dtype=torch.half)
    free, total = torch.cuda.mem_get_info()
    hog = torch.empty(int(free - (600 << 20)), dtype=torch.uint8, device="cuda")  # leave ~600 MiB
    torch.cuda.empty_cache()
    print(conv(x).shape)
