#!/bin/bash
# Session call 4 (untracked): ncu source pages (SASS, stall samples) of the registered conv3d TF32 loop, the sweep
# (waves, early) and the registered loop without staging: where each spends its warps' samples.
D=$OUT/call4; mkdir -p $D; date > $D/start.txt
B=conv3d:04b_wgmma_tf32; E=$B@CF_DWIN,CF_DWIN_WAVES,CF_DWIN_EARLY; S=$B@CF_ABL_STAGE_ONCE
export PYTHONUNBUFFERED=1
timeout 150 python3 xk.py build $B $E $S > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
for f in registered:$B sweep:$E stage_once:$S; do
  n=${f%%:*}; s=${f#*:}
  timeout 100 ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats --page source --print-source sass --csv python3 scripts/ncu_sections.py "$s" 2> $D/ncu_err_$n.log | gzip > $D/ncu_source_$n.csv.gz
  echo "$n rc ${PIPESTATUS[0]} $(stat -c %s $D/ncu_source_$n.csv.gz)"
done
date > $D/end.txt
cp call4.sh $D/
cd $OUT && tar czf call4.tgz call4 && rm -rf call4
