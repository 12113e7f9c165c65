#!/bin/bash
# Session call 4 (untracked): the live notebooks 04 and 05 on the kernels of the 10:01 UTC record.
D=$OUT/call4; mkdir -p $D; date > $D/start.txt
python3 -m pip install -q --no-deps .whl/*.whl > $D/pip.log 2>&1; echo "pip rc $?" >> $D/pip.log
export CONVFUSE_RESULTS_DIR=$D/live_results
timeout 260 python3 scripts/live_notebooks.py $D/live 04_tensor_core_conv_epilogue > $D/live.log 2>&1; echo "rc $?" >> $D/live.log
date >> $D/start.txt
timeout 150 python3 scripts/live_notebooks.py $D/live 05_roofline_and_traffic >> $D/live.log 2>&1; echo "rc $?" >> $D/live.log
date > $D/end.txt
cd $OUT && tar czf call4.tgz call4
tail -2 $D/pip.log; grep -E "live|rc|Error" $D/live.log | tail
