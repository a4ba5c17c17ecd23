#!/bin/bash
# Third batch: distributed-training mistakes and a Triton kernel too big for shared memory.
set -u
SRC=$(cd "$(dirname "$0")" && pwd)
JOBS=/home/user/jobs
mkdir -p $JOBS && cp "$SRC"/*.py $JOBS/ && cd $JOBS
LOGS=$OUT/logs3; mkdir -p $LOGS
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
TORCHRUN=$(command -v torchrun || echo "python3 -m torch.distributed.run")
cap() {
  local name=$1 t=$2; shift 2
  local t0=$(date +%s)
  timeout -k 10 "$t" "$@" > "$LOGS/$name.log" 2>&1
  echo "$name rc=$? secs=$(( $(date +%s) - t0 )) :: $*" >> "$LOGS/_commands.txt"
}
cap triton-out-of-shared-memory 240 python3 dist_bugs.py triton-smem
cap nccl-collective-mismatch-detail 120 env TORCH_DISTRIBUTED_DEBUG=DETAIL NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 $TORCHRUN --standalone --nproc_per_node=2 dist_bugs.py mismatch
cap ddp-param-ready-twice 90 $TORCHRUN --standalone --nproc_per_node=1 dist_bugs.py ready-twice
cap fsdp-mixed-dtype 90 $TORCHRUN --standalone --nproc_per_node=1 dist_bugs.py fsdp-dtype
cd $OUT && tar czf gpucap3.tar.gz logs3 && rm -rf logs3
echo done
