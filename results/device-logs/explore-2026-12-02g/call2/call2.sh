#!/bin/bash
# Session call 2 (untracked): compute-sanitizer memcheck, racecheck, synccheck on the bulk-store candidates.
D=$OUT/call2; mkdir -p $D; date > $D/start.txt
T2=conv2d:04c_ws_tf32@CF_SHARED_RING,CF_STAGES=3,CF_BULK_STORE; F1=conv2d:04c_ws_fp16@CF_BULK_STORE
export PYTHONUNBUFFERED=1
timeout 200 python3 xk.py build $T2 $F1 > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
for tool in memcheck synccheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool python3 xk.py san $T2 $F1 > $D/san_$tool.log 2>&1; echo "rc $?" >> $D/san_$tool.log
done
date > $D/end.txt; cp call2.sh $D/
for f in $D/san_*.log; do echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Warning|rc ' $f | tr '\n' ' ')"; done
grep -h "conv2d" $D/san_*.log | cut -c1-200 | head -20
