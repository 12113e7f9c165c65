#!/bin/bash
# Session call 3 (untracked): why CF_XWIN is no faster. synccheck again with room for more mbarriers; ncu memory
# counters and source pages of fp16 with the group stores, with the window, and with the group stores and no staging.
D=$OUT/call3; mkdir -p $D; date > $D/start.txt
F=conv3d:04b_wgmma_fp16; G=CF_GROUP_STORE; X=CF_GROUP_STORE,CF_XWIN; S=CF_GROUP_STORE,CF_ABL_STAGE_ONCE
timeout 100 python3 xk.py build $F@$G $F@$X $F@$S > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
compute-sanitizer --help 2>&1 | grep -i -A2 "barrier" > $D/san_help.txt
timeout 60 compute-sanitizer --tool synccheck --num-cuda-barriers 64 python3 xk.py san $F@$X > $D/san_synccheck.log 2>&1; echo "rc $?" >> $D/san_synccheck.log
timeout 60 compute-sanitizer --tool synccheck --num-cuda-barriers 64 python3 xk.py san $F@$G > $D/san_synccheck_group.log 2>&1; echo "rc $?" >> $D/san_synccheck_group.log
M=gpu__time_duration.sum,smsp__sass_inst_executed.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__t_sector_hit_rate.pct,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,lts__t_sector_op_read_hit_rate.pct,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
timeout 50 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $F@$G $F@$X $F@$S > $D/ncu.log 2>&1
echo "ncu rc $?" >> $D/ncu.log
for v in "$F@$G" "$F@$X" "$F@$S"; do
  tag=$(echo "$v" | tr ':@,=' '____')
  timeout 75 ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats --page source --print-source sass --csv python3 scripts/ncu_sections.py "$v" 2> $D/ncu_err_$tag.log | gzip > $D/ncu_source_$tag.csv.gz
done
date > $D/end.txt
cd $OUT && tar czf call3.tgz call3
cat $D/san_help.txt | head -6
for f in $D/san_*.log; do echo "$f: $(grep -E 'ERROR SUMMARY|Warning|rc ' $f | tr '\n' ' ')"; done
grep -E "gpu__time|inst_exec|dram__|lts__|l1tex__|long_sc" $D/ncu.log | awk '{print $1, $(NF-1), $NF}'
ls -la $D/*.csv.gz
