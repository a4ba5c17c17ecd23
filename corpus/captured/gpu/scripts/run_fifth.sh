#!/bin/bash
# Fifth batch: distributed set-up mistakes (NCCL environment, a rank that never joins,
# a per-process memory cap).
set -u
. "$(dirname "$0")/capture.sh" logs5
cap nccl-socket-ifname-missing 120 env NCCL_DEBUG=WARN NCCL_SOCKET_IFNAME=ib7 $TORCHRUN --standalone --nproc_per_node=1 dist_setup.py allreduce &
cap nccl-net-ib-forced-no-device 120 env NCCL_DEBUG=WARN NCCL_NET=IB $TORCHRUN --standalone --nproc_per_node=1 dist_setup.py allreduce &
cap nccl-invalid-algo 120 env NCCL_DEBUG=WARN NCCL_ALGO=Fastest $TORCHRUN --standalone --nproc_per_node=1 dist_setup.py allreduce &
wait
cap nccl-missing-rank 90 python3 dist_setup.py missing-rank &
cap gloo-missing-rank 90 python3 dist_setup.py gloo-missing-rank &
cap oom-memory-fraction 60 python3 dist_setup.py memory-fraction &
cap healthy-nccl-debug-info-allreduce 120 env NCCL_DEBUG=INFO $TORCHRUN --standalone --nproc_per_node=1 dist_setup.py allreduce &
wait
cd $OUT && tar czf gpucap5.tar.gz logs5 && rm -rf logs5
echo done
