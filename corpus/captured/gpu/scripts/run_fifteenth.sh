#!/bin/bash
# Fifteenth batch: allocator and NCCL settings from the environment that are refused.
set -u
. "$(dirname "$0")/capture.sh" logs15
PYTORCH_CUDA_ALLOC_CONF=expandable_segment:True cap alloc-conf-typo 120 python3 allocator_and_env.py alloc &
PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:10 cap alloc-conf-split-too-small 120 python3 allocator_and_env.py alloc &
PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync,expandable_segments:True cap alloc-conf-async-expandable 120 python3 allocator_and_env.py alloc &
PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:1.5 cap alloc-conf-gc-threshold 120 python3 allocator_and_env.py alloc &
wait
NCCL_ALGO=Ringg cap nccl-algo-invalid 120 $TORCHRUN --standalone --nproc_per_node=1 allocator_and_env.py allreduce
NCCL_PROTO=Simplee cap nccl-proto-invalid 120 $TORCHRUN --standalone --nproc_per_node=1 allocator_and_env.py allreduce
cd $OUT && tar czf gpucap15.tar.gz logs15 && rm -rf logs15
echo done
