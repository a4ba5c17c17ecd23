#!/bin/bash
# Thirteenth batch: gradients, optimizers, layers on the wrong input, and process-group set-up.
set -u
. "$(dirname "$0")/capture.sh" logs13
for m in interpolate-2d item-multi optimizer-non-leaf layernorm-mixed-cpu; do
  cap $m 120 python3 grads_and_setup.py $m &
done
wait
for m in scaled-mm-layout meta-item clip-nonfinite grad-unused; do
  cap $m 120 python3 grads_and_setup.py $m &
done
wait
cap pg-init-twice 120 $TORCHRUN --standalone --nproc_per_node=1 grads_and_setup.py pg-init-twice
cap allreduce-noncontig 120 $TORCHRUN --standalone --nproc_per_node=1 grads_and_setup.py allreduce-noncontig
CUDA_VISIBLE_DEVICES= cap nccl-no-gpus 120 $TORCHRUN --standalone --nproc_per_node=1 grads_and_setup.py nccl-no-gpus
cd $OUT && tar czf gpucap13.tar.gz logs13 && rm -rf logs13
echo done
