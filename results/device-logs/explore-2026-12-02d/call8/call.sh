#!/bin/bash
# Session call 8 (untracked, given as one command line): the benchmark's new nvidia-smi sampling run on the GPU once,
# conv3d with the registered TF32 kernel only, into a file of its own (bench.json; not a record).
D=$OUT/call8; mkdir -p $D; date > $D/start.txt; timeout 190 python3 -m convfuse bench --problem conv3d --variant 04b_wgmma_tf32 --no-odd --rounds 25 --out $D/bench.json > $D/bench.log 2>&1; echo "rc $?" >> $D/bench.log; date > $D/end.txt; grep -E "during its timing|wrote|rc |Error|error" $D/bench.log | tail -6
