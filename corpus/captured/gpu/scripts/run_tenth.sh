#!/bin/bash
# Tenth batch: loss, layer and checkpoint mistakes on one GPU.
set -u
. "$(dirname "$0")/capture.sh" logs10
for m in cast-result-type bce-range bce-target-size pool-too-small; do
  cap $m 120 python3 loss_and_layers.py $m &
done
wait
for m in cat-sizes batchnorm-single checkpoint-other-gpu; do
  cap $m 120 python3 loss_and_layers.py $m &
done
wait
cd $OUT && tar czf gpucap10.tar.gz logs10 && rm -rf logs10
echo done
