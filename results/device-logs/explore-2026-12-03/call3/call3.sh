#!/bin/bash
# Session call 3 (untracked): the sweep with Ho even only; bitwise, sanitizers; the handoff ablation; stall breakdown.
D=$OUT/call3; mkdir -p $D; date > $D/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $D/gpu.txt 2>&1
B=conv3d:04b_wgmma_tf32; W=$B@CF_DWIN; V=$B@CF_DWIN,CF_DWIN_WAVES; E=$V,CF_DWIN_EARLY; N=$E,CF_ABL_DWIN_NOWAIT; S=$B@CF_ABL_STAGE_ONCE
export PYTHONUNBUFFERED=1
timeout 200 python3 xk.py build $B $W $V $E $N $S > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
date >> $D/start.txt
timeout 70 python3 scripts/check_variant.py $B $E $V $N $S > $D/time.log 2>&1; echo "rc $?" >> $D/time.log
grep -E "rc " $D/time.log; grep -A8 "timing, median" $D/time.log
timeout 120 python3 scripts/check_bitwise.py --deadline 20 $B $W $V $E > $D/bitwise.log 2>&1; echo "bitwise rc $?" >> $D/bitwise.log
grep -c "equal" $D/bitwise.log; grep -E "DIFFERENT|rc |Error|check_bitwise\]" $D/bitwise.log | cut -c1-200 | tail -5
date >> $D/start.txt
timeout 100 python3 xk.py verify $E > $D/verify.log 2>&1; echo "verify rc $?" >> $D/verify.log; grep -E "verify\]|FAIL|rc " $D/verify.log | cut -c1-160
export XK_SHAPES="2,8,6,10,64;3,8,4,8,64;2,8,4,7,20;3,8,4,9,64"
for T in memcheck racecheck synccheck; do
  X=""; [ $T = synccheck ] && X="--num-cuda-barriers 64"
  timeout 80 compute-sanitizer --tool $T $X python3 xk.py san $E $W > $D/san_$T.log 2>&1; echo "$T rc $?" >> $D/san_$T.log
  grep -E "ERROR SUMMARY|HAZARD|RACECHECK SUMMARY|rc " $D/san_$T.log | tail -3
done 2>/dev/null
date >> $D/start.txt
timeout 70 python3 scripts/check_variant.py $S $N $V $E $B > $D/time2.log 2>&1
grep -A8 "timing, median" $D/time2.log
M='smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
timeout 120 ncu --clock-control none --profile-from-start off --metrics "$M" python3 scripts/ncu_sections.py $B $E > $D/ncu.log 2>&1; echo "ncu rc $?" >> $D/ncu.log
date > $D/end.txt
cp call3.sh xk.py $D/
python3 - <<'PY'
import re,os
t=re.split(r"conv3d_wgmma_kernel\S*\(", open(os.environ["OUT"]+"/call3/ncu.log").read())
rows=[dict(re.findall(r"(smsp__\S+)\s+\S+\s+([\d.,]+)\s*$",blk,re.M)) for blk in t[1:]]
if len(rows)>=2:
  for k in rows[0]:
    a,b=rows[0][k],rows[1].get(k,"?")
    if a!=b and (a.replace(",","")!="0" or b!="0"): print(f"{k.replace('smsp__average_warps_issue_stalled_','').replace('_per_issue_active.ratio',''):60s} {a:>14} {b:>14}")
PY
cd $OUT && tar czf call3.tgz call3 && rm -rf call3
