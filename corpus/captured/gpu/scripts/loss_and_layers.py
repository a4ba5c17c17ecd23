"""Loss, layer and checkpoint mistakes, each raising what PyTorch really prints (python3
loss_and_layers.py MODE): cast-result-type, bce-range, bce-target-size, pool-too-small,
cat-sizes, batchnorm-single, checkpoint-other-gpu."""
import os
import sys
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F

mode = sys.argv[1]
print(f"mode={mode} torch={torch.__version__}", flush=True)

if mode == "cast-result-type":
    counts = torch.zeros(10, dtype=torch.long, device="cuda")
    counts += torch.rand(10, device="cuda")  # adding floats into an integer tensor in place
elif mode == "bce-range":
    head = nn.Linear(16, 1).cuda()
    logits = head(torch.randn(8, 16, device="cuda")).squeeze(1)  # raw scores, no sigmoid
    loss = F.binary_cross_entropy(logits, torch.ones(8, device="cuda"))
    print(loss.item())
elif mode == "bce-target-size":
    head = nn.Linear(16, 1).cuda()
    logits = head(torch.randn(16, 16, device="cuda"))  # [16, 1]
    labels = torch.randint(0, 2, (16,), device="cuda").float()  # [16]
    loss = nn.BCEWithLogitsLoss()(logits, labels)
elif mode == "pool-too-small":
    features = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.MaxPool2d(2),
    ).cuda()
    print(features(torch.randn(2, 3, 4, 4, device="cuda")).shape)  # 4x4 thumbnails
elif mode == "cat-sizes":
    up = nn.ConvTranspose2d(64, 32, 2, stride=2).cuda()
    skip = torch.randn(1, 32, 63, 63, device="cuda")  # an odd-sized encoder feature map
    x = up(torch.randn(1, 64, 31, 31, device="cuda"))  # 62x62 after upsampling
    print(torch.cat([x, skip], dim=1).shape)
elif mode == "batchnorm-single":
    head = nn.Sequential(nn.Linear(256, 128), nn.BatchNorm1d(128), nn.ReLU()).cuda().train()
    for batch in (32, 32, 1):  # the last batch of an epoch holds one sample
        print(head(torch.randn(batch, 256, device="cuda")).shape, flush=True)
elif mode == "checkpoint-other-gpu":
    import torch.serialization as ser

    path = os.path.join(tempfile.gettempdir(), "model_gpu1.pt")
    real_tag = ser.location_tag

    def saved_on_gpu1(storage):  # write the file as a job on a second GPU would have
        tag = real_tag(storage)
        return "cuda:1" if tag.startswith("cuda") else tag

    ser.location_tag = saved_on_gpu1
    torch.save(nn.Linear(8, 8).cuda().state_dict(), path)
    ser.location_tag = real_tag
    state = torch.load(path)
    print(list(state))
