#!/bin/bash
# Prepared by the twenty-third session (2026-12-03; not run: its device time was spent). Run from the repo root with the
# session helper beside it: cp results/device-logs/explore-2026-12-02h/call4/xk.py . && bash <this file>
# About 200 s: conv3d 04b TF32 with the degree-3 clamped GELU (CF_GELU_Q3) against the registered build; two timings,
# protocol (not bitwise: a different polynomial), memcheck, ncu counters and a source page.
D=$OUT/call1; mkdir -p $D; cp "$0" $D/
B=conv3d:04b_wgmma_tf32; Q=$B@CF_GELU_Q3
export PYTHONUNBUFFERED=1
{
date -u
timeout 90 python3 xk.py build $B $Q > /tmp/build.log 2>&1; echo "build rc $?"; tail -2 /tmp/build.log
timeout 45 python3 scripts/check_variant.py $B $Q 2>&1 | grep -A4 "timing, median"
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
timeout 40 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $B $Q 2>&1 | grep -E "inst_executed|issue_active|gpu__time|ncu-sections\]"
timeout 40 python3 scripts/check_variant.py $Q $B 2>&1 | grep -A4 "timing, median"
timeout 60 python3 xk.py verify $B $Q > /tmp/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" /tmp/verify.log
export XK_SHAPES="2,8,6,10,64;3,8,4,8,64"
timeout 60 compute-sanitizer --tool memcheck python3 xk.py san $Q > $D/san_memcheck.log 2>&1; echo "memcheck rc $?"; grep -E "ERROR SUMMARY" $D/san_memcheck.log | tail -1
date -u
} 2>&1 | tee $D/call.log
timeout 60 ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats --page source --print-source sass --csv python3 scripts/ncu_sections.py "$Q" 2> /dev/null | gzip > $D/ncu_source_gelu_q3.csv.gz
