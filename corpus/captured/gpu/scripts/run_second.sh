#!/bin/bash
# Second batch of captures: cuBLAS errors after an asynchronous fault, and a
# job started on a card that another process fills.
set -u
. "$(dirname "$0")/capture.sh" logs2
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
