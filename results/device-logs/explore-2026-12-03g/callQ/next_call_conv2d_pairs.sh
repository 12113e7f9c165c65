#!/bin/bash
# Twenty-eighth session, call 2: conv2d 04d with pixel pairs (CF_PIXEL_PAIRS), at four rows and at five rows on two
# stages, against the registered build and the unpaired five-row build. Copy results/device-logs/explore-2026-12-02h/
# call4/xk.py to the repo root for the call (remove it after); run from the root as
# `mkdir -p $OUT; timeout 560 bash notes/next_call_conv2d_pairs.sh`. Prediction: notes/kernel_log.md (twenty-eighth).
D=$OUT/callQ; mkdir -p $D; cp "$0" $D/
B=conv2d:04d_rs_tf32; Q=$B@CF_PIXEL_PAIRS
R5=$B@CF_ROWS=5,CF_PITCH=72,CF_STAGES=2,CF_SET_CARRY,CF_PARAMS_SMEM; Q5=$R5,CF_PIXEL_PAIRS
export PYTHONUNBUFFERED=1
{
date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv,noheader
timeout 150 python3 xk.py build $B $Q $R5 $Q5 > $D/build.log 2>&1; echo "build rc $?"; tail -1 $D/build.log
grep -i "C7518\|serializ\|spill" $D/build.log | head -3
for so in build/convfuse_*/*.so; do
  case $so in *04d_rs_tf32*) ;; *) continue ;; esac
  n=$(basename $so .so); cuobjdump -sass $so > /tmp/$n.sass 2>/dev/null
  printf "[sass] %-70s HGMMA %4s LDS %4s LDS.64 %4s STG %4s STG.64 %4s F2FP %4s MUFU %4s LDL %s STL %s total %s\n" "$n" \
    "$(grep -c HGMMA /tmp/$n.sass)" "$(grep -c 'LDS ' /tmp/$n.sass)" "$(grep -c 'LDS.64' /tmp/$n.sass)" \
    "$(grep -c 'STG.E.EF ' /tmp/$n.sass)" "$(grep -c 'STG.E.EF.64' /tmp/$n.sass)" "$(grep -c F2FP /tmp/$n.sass)" \
    "$(grep -c MUFU /tmp/$n.sass)" "$(grep -c LDL /tmp/$n.sass)" "$(grep -c STL /tmp/$n.sass)" "$(grep -c '/\*[0-9a-f]*\*/' /tmp/$n.sass)"
done
timeout 80 python3 scripts/check_bitwise.py --deadline 20 $B $Q > $D/bitwise.log 2>&1; echo "bitwise rc $?"; tail -1 $D/bitwise.log
timeout 60 python3 scripts/check_bitwise.py --deadline 15 $R5 $Q5 >> $D/bitwise.log 2>&1; echo "bitwise5 rc $?"; tail -1 $D/bitwise.log
timeout 80 python3 scripts/check_variant.py $B $Q $R5 $Q5 2>&1 | grep -A6 "timing, median"
timeout 70 python3 scripts/check_variant.py $Q5 $R5 $Q $B 2>&1 | grep -A6 "timing, median"
timeout 50 python3 xk.py verify $Q $Q5 > $D/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" $D/verify.log
for t in memcheck racecheck synccheck; do
  timeout 50 compute-sanitizer --tool $t python3 xk.py san $Q > /tmp/san_$t.log 2>&1; echo "$t rc $?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY" /tmp/san_$t.log | tail -1; cat /tmp/san_$t.log >> $D/san.log
done
S=smsp__average_warps_issue_stalled; R=per_issue_active.ratio
M=gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,smsp__inst_executed_op_shared_ld.sum
M=$M,smsp__inst_executed_op_global_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,lts__t_sectors_op_write.sum
for r in barrier long_scoreboard short_scoreboard wait lg_throttle; do M=$M,${S}_${r}_$R; done
timeout 60 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $B $Q $R5 $Q5 2>&1 | grep -E "gpu__|smsp__|dram__|l1tex__|lts__|ncu-sections\]|ERR"
timeout 100 ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats --page source \
  --print-source sass --csv python3 scripts/ncu_sections.py $B $Q 2> /dev/null | gzip > $D/ncu_source.csv.gz; echo "source page rc $?"
ls -la $D/ncu_source.csv.gz
date -u
} 2>&1 | tee $D/call.log
