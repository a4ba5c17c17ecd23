#!/bin/bash
# Fifth batch: distributed set-up mistakes (NCCL environment, a rank that never joins,
# a per-process memory cap).
set -u
SRC=$(cd "$(dirname "$0")" && pwd)
JOBS=/home/user/jobs
mkdir -p $JOBS && cp "$SRC"/*.py $JOBS/ && cd $JOBS
LOGS=$OUT/logs5; mkdir -p $LOGS
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
TORCHRUN=$(command -v torchrun || echo "python3 -m torch.distributed.run")
cap() {
  local name=$1 t=$2; shift 2
  local t0=$(date +%s)
  timeout -k 10 "$t" "$@" > "$LOGS/$name.log" 2>&1
  echo "$name rc=$? secs=$(( $(date +%s) - t0 )) :: $*" >> "$LOGS/_commands.txt"
}
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
