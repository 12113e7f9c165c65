#!/bin/bash
# Prepared by the twenty-third session (2026-12-03; not run: its device time was spent). Run from the repo root with the
# session helper beside it: cp results/device-logs/explore-2026-12-02h/call4/xk.py . && bash <this file>
# About 250 s: conv3d 04b TF32 with the degree-3 clamped GELU (CF_GELU_Q3), with the descriptors' high words kept in
# registers (CF_DESC_HI), and both, against the registered build; two timings, bitwise for CF_DESC_HI alone (same
# arithmetic), protocol for all (the polynomial changes the outputs), memcheck, ncu counters, a source page of both.
D=$OUT/call1; mkdir -p $D; cp "$0" $D/
B=conv3d:04b_wgmma_tf32; Q=$B@CF_GELU_Q3; H=$B@CF_DESC_HI; QH=$B@CF_DESC_HI,CF_GELU_Q3
export PYTHONUNBUFFERED=1
{
date -u
timeout 90 python3 xk.py build $B $Q $H $QH > /tmp/build.log 2>&1; echo "build rc $?"; tail -2 /tmp/build.log
timeout 45 python3 scripts/check_variant.py $B $Q $H $QH 2>&1 | grep -A6 "timing, median"
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
timeout 40 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $B $Q $H $QH 2>&1 | grep -E "inst_executed|issue_active|gpu__time|ncu-sections\]"
timeout 40 python3 scripts/check_variant.py $QH $H $Q $B 2>&1 | grep -A6 "timing, median"
timeout 60 python3 scripts/check_bitwise.py --deadline 15 $B $H > $D/bitwise.log 2>&1; echo "bitwise rc $?"; grep -c ": equal" $D/bitwise.log; grep -E "check_bitwise\]" $D/bitwise.log | tail -1
timeout 60 python3 xk.py verify $B $Q $H $QH > /tmp/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" /tmp/verify.log
export XK_SHAPES="2,8,6,10,64;3,8,4,8,64"
timeout 60 compute-sanitizer --tool memcheck python3 xk.py san $QH > $D/san_memcheck.log 2>&1; echo "memcheck rc $?"; grep -E "ERROR SUMMARY" $D/san_memcheck.log | tail -1
date -u
} 2>&1 | tee $D/call.log
timeout 60 ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats --page source --print-source sass --csv python3 scripts/ncu_sections.py "$QH" 2> /dev/null | gzip > $D/ncu_source_desc_hi_gelu_q3.csv.gz
