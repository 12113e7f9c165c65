#!/bin/bash
# xk.py: results/device-logs/explore-2026-12-02e/call1/xk.py, unchanged (copied to the repository root for the call)
# Session call 2 (untracked): CF_GROUP_LAZY on the registered FP16 build: bitwise, two timings, the protocol and
# special-value tests, the three sanitizers on all their shapes.
D=$OUT/call2; mkdir -p $D; date > $D/start.txt
F=conv3d:04b_wgmma_fp16; Z=$F@CF_GROUP_LAZY; T=conv3d:04b_wgmma_tf32
timeout 100 python3 xk.py build $F $Z $T > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
timeout 60 python3 scripts/check_bitwise.py --deadline 30 $F $Z > $D/bitwise.log 2>&1; echo "bitwise rc $?" >> $D/bitwise.log
timeout 55 python3 scripts/check_variant.py $Z $F $T > $D/time.log 2>&1
timeout 55 python3 scripts/check_variant.py $F $Z $T > $D/time2.log 2>&1
timeout 50 python3 xk.py verify $Z > $D/verify.log 2>&1; echo "verify rc $?" >> $D/verify.log
for tool in memcheck synccheck racecheck; do
  timeout 45 compute-sanitizer --tool $tool python3 xk.py san $Z > $D/san_$tool.log 2>&1; echo "rc $?" >> $D/san_$tool.log
done
date > $D/end.txt
cd $OUT && tar czf call2.tgz call2
tail -2 $D/bitwise.log; grep -E "verify\]|harden|rc" $D/verify.log | tail -12
for f in $D/san_*.log; do echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Warning|rc ' $f | tr '\n' ' ')"; done
grep -h -A7 "timing, median" $D/time.log $D/time2.log
