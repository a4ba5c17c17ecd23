#!/bin/bash
# Second batch of captures: cuBLAS errors after an asynchronous fault, and a
# job started on a card that another process fills.
set -u
SRC=$(cd "$(dirname "$0")" && pwd)
JOBS=/home/user/jobs
mkdir -p $JOBS && cp "$SRC"/*.py $JOBS/ && cd $JOBS
LOGS=$OUT/logs2; mkdir -p $LOGS
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
cap() {
  local name=$1 t=$2; shift 2
  local t0=$(date +%s)
  timeout -k 10 "$t" "$@" > "$LOGS/$name.log" 2>&1
  echo "$name rc=$? secs=$(( $(date +%s) - t0 )) :: $*" >> "$LOGS/_commands.txt"
}
cap cublas-after-fault-gemm 60 python3 cublas_fail.py gemm
cap cublas-after-fault-linear 60 python3 cublas_fail.py linear
cap cublas-after-fault-nohandle 60 python3 cublas_fail.py nohandle
# another process holds the card: (a) ~200 MiB left, (b) ~3 GiB left
python3 gpu_hog.py 200 40 > $LOGS/hog-a.txt 2>&1 & HOG=$!
sleep 20
cap oom-other-process-context 40 python3 second_job.py
nvidia-smi > $LOGS/nvidia-smi-busy.txt 2>&1
kill $HOG; wait $HOG 2>/dev/null
python3 gpu_hog.py 3000 40 > $LOGS/hog-b.txt 2>&1 & HOG=$!
sleep 20
cap oom-other-process 40 python3 second_job.py
kill $HOG; wait $HOG 2>/dev/null
cd $OUT && tar czf gpucap2.tar.gz logs2 && rm -rf logs2
echo done
