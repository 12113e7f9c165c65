#!/bin/bash
# Call Q (thirty-second session): (1) the wgmma rate microbenchmark with its cases 26-31 (CONCAT's pair beside GELUs,
# shared stores and 04d's epilogue; RS m64n64k8, RS m64n32k8 and SS m64n64k8 beside global stores); (2) conv2d 04d
# 3xTF32 as registered against four rows without CONCAT (three m64n32k8 a tap, two fragment sets: ptxas serializes
# three), verified and timed, twice in turn; (3) an ncu source page of the registered build. From the repo root:
# `mkdir -p $OUT; timeout 560 bash notes/call_3xtf32_q.sh; tar czf $OUT/callQ.tgz -C $OUT callQ`
D=$OUT/callQ; mkdir -p $D; cp "$0" $D/
A=conv2d:04d_rs_3xtf32
R4=$A@-CF_ROWS=3,-CF_PITCH=72,-CF_3X_CONCAT,-CF_3X_SETS=3,CF_ROWS=4,CF_PITCH=68
export PYTHONUNBUFFERED=1
{
date -u
timeout 150 python3 scripts/wgmma_rate.py $D/wgmma_rate.json > $D/rate.log 2>&1; echo "rate rc $?"; grep "wgmma_rate\]" $D/rate.log | tail -8
timeout 200 python3 scripts/check_variant.py $A $R4 > $D/time1.log 2>&1; echo "time1 rc $?"
grep -E "rel_l2" $D/time1.log | cut -c1-150; grep -A5 "timing" $D/time1.log
timeout 120 python3 scripts/check_variant.py $R4 $A > $D/time2.log 2>&1; echo "time2 rc $?"; grep -A5 "timing" $D/time2.log
date -u
timeout 120 ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats \
  --page source --print-source sass --csv python3 scripts/ncu_sections.py $A 2> $D/ncu_err.log | gzip > $D/ncu_source.csv.gz
echo "ncu rc $?"; ls -la $D/ncu_source.csv.gz; tail -3 $D/ncu_err.log
date -u
} 2>&1 | tee $D/call.log
