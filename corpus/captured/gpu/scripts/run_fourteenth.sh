#!/bin/bash
# Fourteenth batch: determinism switches, device placement and data splits.
set -u
. "$(dirname "$0")/capture.sh" logs14
for m in det-cublas det-op mse-long-target rnn-device; do
  cap $m 120 python3 determinism_and_devices.py $m &
done
wait
for m in dp-params-on-cpu random-split-lengths ce-target-int; do
  cap $m 120 python3 determinism_and_devices.py $m &
done
wait
cd $OUT && tar czf gpucap14.tar.gz logs14 && rm -rf logs14
echo done
