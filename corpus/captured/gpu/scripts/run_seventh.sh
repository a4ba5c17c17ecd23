#!/bin/bash
# Seventh batch: PyTorch's newer distributed APIs (DTensor, device meshes, FSDP2, DCP) with two
# ranks on one GPU, failures of one rank among two, and everyday training mistakes on one GPU.
set -u
. "$(dirname "$0")/capture.sh" logs7
cap sdpa-no-kernel 120 python3 dist_api.py sdpa-no-kernel &
cap gradscaler-bf16 120 python3 dist_api.py gradscaler-bf16 &
cap multinomial-nan 120 python3 dist_api.py multinomial-nan &
cap meta-to-cuda 120 python3 dist_api.py meta-to-cuda &
wait
cap collate-size 120 python3 dist_api.py collate-size &
cap embedding-index-cpu 120 python3 dist_api.py embedding-index-cpu &
cap detect-anomaly-nan 120 python3 dist_api.py detect-anomaly-nan &
cap checkpoint-reentrant 120 python3 dist_api.py checkpoint-reentrant &
wait
cap healthy-compile-autotune 400 python3 dist_api.py healthy-compile-autotune &
for m in dtensor-mixed mesh-too-big fsdp2-load-full dcp-missing-key ddp-model-differs rank-raises healthy-fsdp2; do
  cap $m 150 env NCCL_DEBUG=WARN NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 $TORCHRUN --standalone --nproc_per_node=2 dist_api.py $m
done
cap rank-oom 150 env NCCL_DEBUG=WARN NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 $TORCHRUN --standalone --nproc_per_node=2 dist_api.py rank-oom
wait
cd $OUT && tar czf gpucap7.tar.gz logs7 && rm -rf logs7
echo done
