#!/bin/bash
# Session call 4 (untracked): conv2d 04c TF32 staging balance (CF_STAGE_HALF) and the counted refill (CF_RAW_COUNT).
D=$OUT/call4; mkdir -p $D; date > $D/start.txt
T0=conv2d:04c_ws_tf32; T2=$T0@CF_SHARED_RING,CF_STAGES=3,CF_BULK_STORE
T8=$T2,CF_RAW_COUNT; T9=$T2,CF_STAGE_HALF; T10=$T2,CF_STAGE_HALF,CF_RAW_COUNT
export PYTHONUNBUFFERED=1
timeout 200 python3 xk.py build $T0 $T2 $T8 $T9 $T10 > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
timeout 80 python3 scripts/check_bitwise.py --deadline 30 $T0 $T8 $T9 $T10 > $D/bitwise.log 2>&1; echo "rc $?" >> $D/bitwise.log
tail -n 2 $D/bitwise.log
timeout 90 python3 scripts/check_variant.py $T0 $T2 $T8 $T9 $T10 > $D/time.log 2>&1
grep -A8 "timing, median" $D/time.log
timeout 90 python3 scripts/check_variant.py $T10 $T9 $T8 $T2 $T0 > $D/time2.log 2>&1
grep -A8 "timing, median" $D/time2.log
for tool in memcheck synccheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool python3 xk.py san $T10 > $D/san_$tool.log 2>&1; echo "rc $?" >> $D/san_$tool.log
done
date > $D/end.txt; cp call4.sh $D/
cd $OUT && tar czf call4.tgz call4
for f in $D/san_*.log; do echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|rc ' $f | tr '\n' ' ')"; done
