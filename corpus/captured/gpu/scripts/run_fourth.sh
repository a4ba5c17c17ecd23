#!/bin/bash
# Fourth batch: everyday training-job failures (store timeout, DDP unused parameters, autograd,
# checkpoints, DataLoader and torchrun children killed by signals, AMP).
set -u
SRC=$(cd "$(dirname "$0")" && pwd)
JOBS=/home/user/jobs
mkdir -p $JOBS && cp "$SRC"/*.py $JOBS/ && cd $JOBS
LOGS=$OUT/logs4; mkdir -p $LOGS
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
TORCHRUN=$(command -v torchrun || echo "python3 -m torch.distributed.run")
cap() {
  local name=$1 t=$2; shift 2
  local t0=$(date +%s)
  timeout -k 10 "$t" "$@" > "$LOGS/$name.log" 2>&1
  echo "$name rc=$? secs=$(( $(date +%s) - t0 )) :: $*" >> "$LOGS/_commands.txt"
}
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
