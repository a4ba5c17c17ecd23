#!/bin/bash
# Runs every capture in its own process, each bounded by `timeout`, and packs
# the logs into $OUT/gpucap.tar.gz.  Scripts run from /home/user/jobs.
set -u
. "$(dirname "$0")/capture.sh" logs
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
PYBIN=$(dirname "$(command -v python3)")

# --- lane 0: environment and memory-filling captures, alone on the GPU
{
  python3 -c 'import torch; print(torch.__version__, torch.version.cuda)'
  echo; python3 -m torch.utils.collect_env
  echo; nvidia-smi
  echo; python3 -m pip list 2>/dev/null | grep -i -E '^(torch|triton|nvidia-nccl|nvidia-cuda-runtime|nvidia-cublas|cupy)'
  echo; python3 -c 'import torch; print(torch.cuda.get_arch_list(), torch.cuda.get_device_capability())'
  echo; uname -r; nvcc --version | tail -2
} > $LOGS/env.log 2>&1
cap oom-batch 90 python3 oom.py batch
cap oom-leak 90 python3 oom.py leak
cap cublas-full 90 python3 cublas_fail.py full

# --- lane A: torchrun / NCCL
laneA() {
  cap nccl-duplicate-gpu 90 env NCCL_DEBUG=WARN $TORCHRUN --standalone --nproc_per_node=2 ddp_job.py dup
  cap nccl-timeout-stuck-rank 120 env NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 $TORCHRUN --standalone --nproc_per_node=2 ddp_job.py stuck
  cap healthy-ddp-nccl-info 90 env NCCL_DEBUG=INFO $TORCHRUN --standalone --nproc_per_node=1 ddp_job.py healthy
  cap nccl-timeout-spin 110 $TORCHRUN --standalone --nproc_per_node=1 ddp_job.py spin
  cap device-assert-torchrun 60 $TORCHRUN --standalone --nproc_per_node=1 index_error.py embedding
}
# --- lane B: kernel faults
laneB() {
  cap device-assert-embedding 90 python3 index_error.py embedding
  cap device-assert-embedding-blocking 90 env CUDA_LAUNCH_BLOCKING=1 python3 index_error.py embedding
  cap device-assert-gather 90 python3 index_error.py gather
  cap device-assert-labels 90 python3 index_error.py labels
  cap device-assert-followup 90 python3 index_error.py followup
  cap illegal-address-triton 120 python3 triton_oob.py
  cap misaligned-address-cupy 90 python3 misaligned.py
}
# --- lane C: user-code mistakes, fork, compile
laneC() {
  for m in device conv dtype-linear dtype-matmul shape notimpl notimpl-cpu; do
    cap mismatch-$m 60 python3 mismatch.py $m
  done
  cap cuda-not-visible 60 env CUDA_VISIBLE_DEVICES= python3 mismatch.py novisible
  cap cuda-invalid-ordinal 60 python3 mismatch.py ordinal
  cap fork-reinit-pool 60 python3 fork_reinit.py process
  cap fork-reinit-dataloader 60 python3 fork_reinit.py dataloader
  cap compile-backend-failed 120 python3 compile_fail.py backend
  cap compile-fullgraph-break 120 python3 compile_fail.py fullgraph
  cap compile-triton-error 120 python3 compile_fail.py triton
  cap compile-no-c-compiler 150 env PATH=$PYBIN TRITON_CACHE_DIR=/tmp/tc-nocc TORCHINDUCTOR_CACHE_DIR=/tmp/ic-nocc python3 compile_fail.py nocc
}
# --- lane D: extension build
laneD() {
  cap misaligned-address-extension 200 python3 ext_misaligned.py misaligned
  cap no-kernel-image-extension 200 env TORCH_CUDA_ARCH_LIST=8.0 python3 ext_misaligned.py arch
}
laneA & laneB & laneC & laneD &
start=$(date +%s)
while [ $(( $(date +%s) - start )) -lt 450 ] && [ -n "$(jobs -pr)" ]; do sleep 2; done
echo "lanes finished or cut after $(( $(date +%s) - start ))s" >> $LOGS/_commands.txt
hostname > $LOGS/_hostname.txt; ip -4 addr 2>/dev/null >> $LOGS/_hostname.txt
ls /tmp/nccl_trace* >> $LOGS/_hostname.txt 2>&1
cd $OUT && tar czf gpucap.tar.gz logs && rm -rf logs
echo done
