#!/bin/bash
# Session call 2 (untracked): clock and power per registered kernel (scripts/power_draw.py), then the live notebooks
# 04 and 05 on the 02:14 UTC record's kernels.
D=$OUT/call2; mkdir -p $D; date > $D/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.limit --format=csv > $D/gpu.txt 2>&1
pip install -q --no-index --find-links .whl nbclient ipykernel nbformat > $D/pip.log 2>&1; echo "pip rc $?" >> $D/pip.log
S="conv3d:04b_wgmma_tf32 conv3d:04b_wgmma_fp16 conv3d:04b_wgmma_3xfp16 conv3d:eager conv2d:04c_ws_tf32 conv2d:04c_ws_fp16 conv2d:eager"
timeout 170 python3 scripts/power_draw.py --out $D/power.json $S > $D/power.log 2>&1; echo "power rc $?" >> $D/power.log
date >> $D/start.txt
export CONVFUSE_RESULTS_DIR=$D/live_results CONVFUSE_MODE=live
timeout 220 python3 scripts/live_notebooks.py $D/live 04_tensor_core_conv_epilogue > $D/live.log 2>&1; echo "rc $?" >> $D/live.log
date >> $D/start.txt
timeout 140 python3 scripts/live_notebooks.py $D/live 05_roofline_and_traffic >> $D/live.log 2>&1; echo "rc $?" >> $D/live.log
date > $D/end.txt
cd $OUT && tar czf call2.tgz call2
tail -2 $D/pip.log; grep -v "^\[build\|Warn" $D/power.log | tail -26; grep -E "live|rc" $D/live.log
