#!/bin/bash
# Fourth batch: everyday training-job failures (store timeout, DDP unused parameters, autograd,
# checkpoints, DataLoader and torchrun children killed by signals, AMP).
set -u
. "$(dirname "$0")/capture.sh" logs4
cap c10d-store-timeout 90 python3 train_bugs.py store-timeout &
cap ddp-unused-parameters 90 $TORCHRUN --standalone --nproc_per_node=1 train_bugs.py unused-params &
cap autograd-inplace 60 python3 train_bugs.py inplace &
cap torch-load-weights-only 60 python3 train_bugs.py weights-only &
wait
cap torch-load-truncated-checkpoint 60 python3 train_bugs.py truncated-checkpoint &
cap dataloader-worker-sigkill 60 python3 train_bugs.py loader-killed &
cap no-process-group 60 python3 train_bugs.py no-process-group &
cap backward-without-grad-fn 60 python3 train_bugs.py no-grad &
wait
cap torchrun-child-segfault 90 $TORCHRUN --standalone --nproc_per_node=1 train_bugs.py segfault &
cap torchrun-child-sigkill 90 $TORCHRUN --standalone --nproc_per_node=1 train_bugs.py sigkill &
cap amp-unscale-fp16-gradients 60 python3 train_bugs.py unscale-fp16 &
wait
cap oom-expandable-segments 90 env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python3 train_bugs.py oom-expandable
python3 -c 'import socket,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("0.0.0.0", 29500)); s.listen(); time.sleep(60)' &
HOLD=$!
sleep 2
cap c10d-port-in-use 90 $TORCHRUN --nnodes=1 --nproc_per_node=1 --rdzv-backend=static --master-addr=127.0.0.1 --master-port=29500 --node-rank=0 train_bugs.py inplace
kill $HOLD
cd $OUT && tar czf gpucap4.tar.gz logs4 && rm -rf logs4
echo done
