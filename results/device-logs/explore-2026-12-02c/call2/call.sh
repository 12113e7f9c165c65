#!/bin/bash
# Session call 2 (untracked): CF_PRODUCER with TMA boxes and a transposition from shared memory: bitwise, protocol,
# sanitizers, timing with its ablations (handoffs alone, no handoffs), ncu source pages.
D=$OUT/call2; mkdir -p $D; date > $D/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $D/gpu.txt 2>&1
T=conv3d:04b_wgmma_tf32; P=CF_PRODUCER; Z=CF_ABL_NOLOAD,CF_ABL_NOSTAGE
S="$T $T@$P $T@$P,-CF_MMA_ORDER $T@$Z $T@$P,$Z $T@$P,CF_ABL_NOSYNC"
python3 xk.py build $S > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
timeout 120 python3 scripts/check_bitwise.py $T $T@$P $T@$P,-CF_MMA_ORDER > $D/bitwise.log 2>&1; echo "bitwise rc $?" >> $D/bitwise.log
timeout 90 python3 xk.py verify $T@$P > $D/verify.log 2>&1; echo "verify rc $?" >> $D/verify.log
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool python3 xk.py san $T@$P > $D/san_$tool.log 2>&1; echo "rc $?" >> $D/san_$tool.log
done
date >> $D/start.txt
timeout 150 python3 scripts/check_variant.py $S > $D/time.log 2>&1
timeout 80 python3 scripts/check_variant.py $T $T@$P $T@$P,$Z $T@$P,CF_ABL_NOSYNC > $D/time_2.log 2>&1
date >> $D/start.txt
for s in "$T@$P" "$T@$P,$Z"; do
  f=$(echo "$s" | tr ':@,' '___')
  timeout 80 ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats --page source --print-source sass --csv python3 scripts/ncu_sections.py "$s" 2> $D/ncu_err_$f.log | gzip > $D/ncu_source_$f.csv.gz
done
date > $D/end.txt
cd $OUT && tar czf call2.tgz call2
tail -2 $D/bitwise.log; grep -E "verify|FAIL|rc" $D/verify.log | tail -6; for f in $D/san_*.log; do echo "$f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|rc ' $f | tr '\n' ' ')"; done
grep -h -A10 "timing, median" $D/time.log $D/time_2.log | grep -v "^--"
