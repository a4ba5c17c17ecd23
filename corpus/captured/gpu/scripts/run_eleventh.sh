#!/bin/bash
# Eleventh batch: shape, one-hot, view and data mistakes on one GPU, and a healthy run with a
# scheduler-order warning.
set -u
. "$(dirname "$0")/capture.sh" logs11
for m in expand-size negative-dim one-hot-float one-hot-classes; do
  cap $m 120 python3 shapes_and_data.py $m &
done
wait
for m in dim-out-of-range view-inplace tensor-of-strings healthy-scheduler-order; do
  cap $m 120 python3 shapes_and_data.py $m &
done
wait
cd $OUT && tar czf gpucap11.tar.gz logs11 && rm -rf logs11
echo done
