#!/bin/bash
# Third batch: distributed-training mistakes and a Triton kernel too big for shared memory.
set -u
. "$(dirname "$0")/capture.sh" logs3
cap triton-out-of-shared-memory 240 python3 dist_bugs.py triton-smem
cap nccl-collective-mismatch-detail 120 env TORCH_DISTRIBUTED_DEBUG=DETAIL NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 $TORCHRUN --standalone --nproc_per_node=2 dist_bugs.py mismatch
cap ddp-param-ready-twice 90 $TORCHRUN --standalone --nproc_per_node=1 dist_bugs.py ready-twice
cap fsdp-mixed-dtype 90 $TORCHRUN --standalone --nproc_per_node=1 dist_bugs.py fsdp-dtype
cd $OUT && tar czf gpucap3.tar.gz logs3 && rm -rf logs3
echo done
