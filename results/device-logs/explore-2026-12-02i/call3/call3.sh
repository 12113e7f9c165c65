#!/bin/bash
# Session call 3 (untracked): conv2d 04d CF_EPI_OVERLAP: bitwise, repeats, protocol, two timings.
D=$OUT/call3; mkdir -p $D; date > $D/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $D/gpu.txt 2>&1
R=conv2d:04d_rs_tf32; RO=$R@CF_EPI_OVERLAP; RL=$R@CF_EPI_LEAN; T0=conv2d:04c_ws_tf32
export PYTHONUNBUFFERED=1
timeout 200 python3 xk.py build $R $RO $RL $T0 > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
timeout 90 python3 scripts/check_bitwise.py --deadline 30 $R $RO > $D/bitwise.log 2>&1; echo "rc $?" >> $D/bitwise.log
grep -c "equal (nan 0.0000)" $D/bitwise.log; tail -2 $D/bitwise.log
timeout 100 python3 scripts/check_variant.py $R $RO $RL $T0 > $D/time.log 2>&1; echo "rc $?" >> $D/time.log
grep -E "rc " $D/time.log; grep -A7 "timing, median" $D/time.log
timeout 60 python3 scripts/check_variant.py $RO $R > $D/time2.log 2>&1
grep -A5 "timing, median" $D/time2.log
timeout 60 python3 xk.py repeat $RO > $D/repeat.log 2>&1; grep -E "repeat\]" $D/repeat.log
timeout 80 python3 xk.py verify $RO > $D/verify.log 2>&1; echo "verify rc $?" >> $D/verify.log; grep -E "verify\]|FAIL|rc " $D/verify.log | cut -c1-160
timeout 60 compute-sanitizer --tool racecheck python3 xk.py san $RO > $D/racecheck.log 2>&1; echo "rc $?" >> $D/racecheck.log; tail -2 $D/racecheck.log
date > $D/end.txt
cp call3.sh xk.py $D/
cd $OUT && tar czf call3.tgz call3 && rm -rf call3
