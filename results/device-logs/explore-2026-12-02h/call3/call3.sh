#!/bin/bash
# Session call 3 (untracked): conv2d 04d with the late stage release, no ping-pong: bitwise, repeats, timing with
# ablations, protocol and hardening, memcheck/synccheck, ncu source page.
D=$OUT/call3; mkdir -p $D; date > $D/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $D/gpu.txt 2>&1
R=conv2d:04d_rs_tf32; RP=$R@CF_PINGPONG; RS=$R@CF_SKEW; RI=$R@CF_MMA_INTERLEAVE; RT=$R@CF_TF32_TRUNC; T0=conv2d:04c_ws_tf32
AL=$R@CF_ABL_NOLDS; AE=$R@CF_ABL_NOEPI; AS=$R@CF_ABL_NOSTORE; APL=$R@CF_PINGPONG,CF_ABL_NOLDS
export PYTHONUNBUFFERED=1
timeout 200 python3 xk.py build $R $RP $RS $RI $RT $T0 $AL $AE $AS $APL > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
date >> $D/start.txt
timeout 90 python3 scripts/check_bitwise.py --deadline 30 $R $RP $RS $RI > $D/bitwise.log 2>&1; echo "rc $?" >> $D/bitwise.log
grep -c "equal (nan 0.0000)" $D/bitwise.log; tail -2 $D/bitwise.log
timeout 60 python3 xk.py repeat $R $RS > $D/repeat.log 2>&1; echo "rc $?" >> $D/repeat.log; grep -E "repeat\]|rc" $D/repeat.log
timeout 150 python3 scripts/check_variant.py $R $RP $RS $RI $RT $T0 $AL $AE $AS $APL > $D/time.log 2>&1; echo "rc $?" >> $D/time.log
grep -E "rc " $D/time.log; grep -A13 "timing, median" $D/time.log
timeout 60 python3 scripts/check_variant.py $T0 $RS $R > $D/time2.log 2>&1
grep -A6 "timing, median" $D/time2.log
date >> $D/start.txt
timeout 60 python3 xk.py verify $R > $D/verify.log 2>&1; echo "verify rc $?" >> $D/verify.log; grep -E "verify\]|FAIL|rc " $D/verify.log | cut -c1-160
timeout 60 compute-sanitizer --tool memcheck python3 xk.py san $R > $D/memcheck.log 2>&1; echo "rc $?" >> $D/memcheck.log; tail -2 $D/memcheck.log
timeout 60 compute-sanitizer --tool synccheck python3 xk.py san $R > $D/synccheck.log 2>&1; echo "rc $?" >> $D/synccheck.log; tail -2 $D/synccheck.log
date >> $D/start.txt
timeout 90 ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats --page source --print-source sass --csv python3 scripts/ncu_sections.py $R 2> $D/ncu_err.log | gzip > $D/ncu_source.csv.gz
date > $D/end.txt
cp call3.sh xk.py $D/
cd $OUT && tar czf call3.tgz call3
ls -la $D/ncu_source.csv.gz
