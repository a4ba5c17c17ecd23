#!/bin/bash
# Twelfth batch: data conversion, recurrent layers and cuDNN on a nearly full GPU.
set -u
. "$(dirname "$0")/capture.sh" logs12
for m in numpy-object stack-lists stack-empty too-many-indices; do
  cap $m 120 python3 data_and_rnn.py $m &
done
wait
for m in lstm-input-size lstm-hidden-size; do
  cap $m 120 python3 data_and_rnn.py $m &
done
wait
cap cudnn-no-memory 120 python3 data_and_rnn.py cudnn-no-memory
cd $OUT && tar czf gpucap12.tar.gz logs12 && rm -rf logs12
echo done
