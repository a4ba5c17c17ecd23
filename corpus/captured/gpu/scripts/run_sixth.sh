#!/bin/bash
# Sixth batch: CUDA graph capture, autograd and state_dict mistakes, NCCL on a full GPU.
set -u
. "$(dirname "$0")/capture.sh" logs6
cap cuda-graph-capture-host-sync 60 python3 more_bugs.py graph-capture-sync &
cap autograd-backward-twice 60 python3 more_bugs.py backward-twice &
cap inference-tensor-in-training 60 python3 more_bugs.py inference-tensor &
cap state-dict-missing-unexpected-keys 60 python3 more_bugs.py state-missing &
wait
cap state-dict-size-mismatch 60 python3 more_bugs.py state-size &
cap state-dict-module-prefix 60 python3 more_bugs.py state-prefix &
cap optimizer-empty-parameter-list 60 python3 more_bugs.py empty-params &
wait
cap nccl-init-gpu-full 120 env NCCL_DEBUG=WARN $TORCHRUN --standalone --nproc_per_node=1 more_bugs.py nccl-oom
cd $OUT && tar czf gpucap6.tar.gz logs6 && rm -rf logs6
echo done
