#!/bin/bash
# Twenty-fourth session, call 2 (diagnostic): why fewer instructions ran slower in call 1. The tensor pipe's active
# fraction and the SM clock for the registered build, CF_GELU_Q3, CF_GELU_HALF, CF_DWIN_N128, and the registered and
# N128 sweeps with no epilogue and no stores (ablations, wrong outputs on purpose: timed only).
D=$OUT/call2; mkdir -p $D; cp "$0" $D/
B=conv3d:04b_wgmma_tf32; Q=$B@CF_GELU_Q3; F=$B@CF_GELU_HALF; N=$B@CF_DWIN_N128
BA=$B@CF_ABL_RAWEPI,CF_ABL_NOSTORE; NA=$B@CF_DWIN_N128,CF_ABL_RAWEPI,CF_ABL_NOSTORE
export PYTHONUNBUFFERED=1
{
date -u
timeout 120 python3 xk.py build $B $Q $F $N $BA $NA > /tmp/build.log 2>&1; echo "build rc $?"; tail -1 /tmp/build.log
timeout 60 python3 scripts/check_variant.py $B $Q $F $N $BA $NA 2>&1 | grep -A8 "timing, median"
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
timeout 90 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $B $Q $F $N $BA $NA 2>&1 | grep -E "gpu__|sm__|smsp__|ncu-sections\]"
timeout 60 python3 scripts/check_variant.py $NA $BA $N $F $Q $B 2>&1 | grep -A8 "timing, median"
date -u
} 2>&1 | tee $D/call.log
timeout 60 ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats --page source --print-source sass --csv python3 scripts/ncu_sections.py "$F" 2> /dev/null | gzip > $D/ncu_source_gelu_half.csv.gz
