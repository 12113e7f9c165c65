#!/bin/bash
# Session call 4 (untracked): notebooks 04 and 05 executed in live mode on the 18:08 UTC record's kernels.
D=$OUT/live; mkdir -p $D; date > $D/start.txt
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > $D/pip.log 2>&1; echo "pip rc $?" >> $D/pip.log
export PYTHONPATH=/tmp/site; python3 -c "import ipykernel, nbclient, nbformat; print(ipykernel.__version__, nbclient.__version__)" >> $D/pip.log 2>&1
export CONVFUSE_RESULTS_DIR=$D/live_results PYTHONUNBUFFERED=1
timeout 300 python3 scripts/live_notebooks.py $D/nb 04_tensor_core_conv_epilogue > $D/live.log 2>&1; echo "rc $?" >> $D/live.log
date >> $D/start.txt
timeout 200 python3 scripts/live_notebooks.py $D/nb 05_roofline_and_traffic >> $D/live.log 2>&1; echo "rc $?" >> $D/live.log
date > $D/end.txt; cp call_live.sh $D/
cd $OUT && tar czf live.tgz live && rm -rf live
tar xzf live.tgz -O live/pip.log | tail -3; tar xzf live.tgz -O live/live.log | grep -E "live\]|rc " 
