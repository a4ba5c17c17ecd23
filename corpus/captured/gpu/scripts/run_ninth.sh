#!/bin/bash
# Ninth batch: more everyday mistakes on one GPU, and two DDP / NCCL mistakes with two ranks on
# one GPU.
set -u
. "$(dirname "$0")/capture.sh" logs9
cap embedding-float-ids 120 python3 more_everyday.py embedding-float-ids &
cap conv-wrong-dims 120 python3 more_everyday.py conv-wrong-dims &
cap fd-exhausted 120 python3 more_everyday.py fd-exhausted &
cap load-html-file 120 python3 more_everyday.py load-html-file &
wait
cap index-out-of-bounds 120 python3 more_everyday.py index-out-of-bounds &
cap pin-cuda-tensor 120 python3 more_everyday.py pin-cuda-tensor &
cap custom-function-grad-shape 120 python3 more_everyday.py custom-function-grad-shape &
cap healthy-deprecated-amp 120 python3 more_everyday.py healthy-deprecated-amp &
wait
cap ddp-attribute 150 env NCCL_DEBUG=WARN NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 $TORCHRUN --standalone --nproc_per_node=2 more_everyday.py ddp-attribute
cap nccl-cpu-tensor 150 env NCCL_DEBUG=WARN NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 $TORCHRUN --standalone --nproc_per_node=2 more_everyday.py nccl-cpu-tensor
cd $OUT && tar czf gpucap9.tar.gz logs9 && rm -rf logs9
echo done
