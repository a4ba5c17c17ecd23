#!/bin/bash
# Eighth batch: everyday training mistakes on one GPU, a wrong all_gather output size and a
# collective timeout with the flight recorder on, with two ranks on one GPU.
set -u
. "$(dirname "$0")/capture.sh" logs8
cap target-out-of-bounds 120 python3 everyday.py target-out-of-bounds &
cap attn-mask-dtype 120 python3 everyday.py attn-mask-dtype &
cap inference-inplace 120 python3 everyday.py inference-inplace &
cap collate-resize 120 python3 everyday.py collate-resize &
wait
cap half-bias 120 python3 everyday.py half-bias &
cap cudagraph-overwritten 300 python3 everyday.py cudagraph-overwritten &
cap healthy-warnings 300 python3 everyday.py healthy-warnings &
cap allgather-size 150 env NCCL_DEBUG=WARN NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 $TORCHRUN --standalone --nproc_per_node=2 everyday.py allgather-size
mkdir -p /tmp/fr
cap timeout-flight-recorder 200 env NCCL_DEBUG=WARN NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 TORCH_FR_DUMP_TEMP_FILE=/tmp/fr/nccl_trace_rank_ $TORCHRUN --standalone --nproc_per_node=2 everyday.py timeout-flight-recorder
ls -la /tmp/fr >> $LOGS/_commands.txt 2>&1
wait
cd $OUT && tar czf gpucap8.tar.gz logs8 && rm -rf logs8
echo done
