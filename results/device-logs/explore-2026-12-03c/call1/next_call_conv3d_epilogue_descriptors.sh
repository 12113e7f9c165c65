#!/bin/bash
# Prepared by the twenty-third session (2026-12-03; not run: its device time was spent), extended by the twenty-fourth
# (CF_GELU_HALF, CF_DWIN_N128). Run from the repo root with the session helper beside it:
#   cp results/device-logs/explore-2026-12-02h/call4/xk.py . && bash <this file>
# About 400 s: conv3d 04b TF32 with the degree-3 clamped GELU (CF_GELU_Q3), the descriptors' high words kept in
# registers (CF_DESC_HI), the GELU of the halved clamp (CF_GELU_HALF), the three together, the sweep on 2 warpgroups
# of m64n128k8 (CF_DWIN_N128) and that with the three, against the registered build. Bitwise first (a hang in the new
# kernel ends at its deadline and drops it from what follows), two timings, ncu counters, the protocol for all,
# memcheck, a source page.
D=$OUT/call1; mkdir -p $D; cp "$0" $D/
B=conv3d:04b_wgmma_tf32; Q=$B@CF_GELU_Q3; H=$B@CF_DESC_HI; QH=$B@CF_DESC_HI,CF_GELU_Q3; F=$B@CF_GELU_HALF
FQH=$B@CF_DESC_HI,CF_GELU_Q3,CF_GELU_HALF; N=$B@CF_DWIN_N128; NFQH=$B@CF_DWIN_N128,CF_DESC_HI,CF_GELU_Q3,CF_GELU_HALF
export PYTHONUNBUFFERED=1
{
date -u
timeout 170 python3 xk.py build $B $Q $H $QH $F $FQH $N $NFQH > /tmp/build.log 2>&1; echo "build rc $?"; tail -2 /tmp/build.log
timeout 60 python3 scripts/check_bitwise.py --deadline 15 $B $H $N > $D/bitwise.log 2>&1; rc=$?; echo "bitwise rc $rc"
grep -c ": equal" $D/bitwise.log; grep -E "differ|check_bitwise\]" $D/bitwise.log | tail -4
ALL="$B $Q $H $QH $F $FQH $N $NFQH"; SAN="$FQH $NFQH"; PAGE="$NFQH"
if [ $rc = 124 ]; then echo "N128 hung: dropped"; ALL="$B $Q $H $QH $F $FQH"; SAN="$FQH"; PAGE="$FQH"; fi
timeout 75 python3 scripts/check_variant.py $ALL 2>&1 | grep -A10 "timing, median"
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
timeout 70 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $ALL 2>&1 | grep -E "inst_executed|issue_active|gpu__time|ncu-sections\]"
timeout 75 python3 scripts/check_variant.py $(echo $ALL | tr ' ' '\n' | tac | tr '\n' ' ') 2>&1 | grep -A10 "timing, median"
timeout 80 python3 xk.py verify $ALL > /tmp/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" /tmp/verify.log
export XK_SHAPES="2,8,6,10,64;3,8,4,8,64"
timeout 70 compute-sanitizer --tool memcheck python3 xk.py san $SAN > $D/san_memcheck.log 2>&1; echo "memcheck rc $?"; grep -E "ERROR SUMMARY" $D/san_memcheck.log | tail -2
date -u
} 2>&1 | tee $D/call.log
P=$(grep -q "N128 hung" $D/call.log && echo "$B@CF_DESC_HI,CF_GELU_Q3,CF_GELU_HALF" || echo "$B@CF_DWIN_N128,CF_DESC_HI,CF_GELU_Q3,CF_GELU_HALF")
timeout 60 ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats --page source --print-source sass --csv python3 scripts/ncu_sections.py "$P" 2> /dev/null | gzip > $D/ncu_source_page.csv.gz
