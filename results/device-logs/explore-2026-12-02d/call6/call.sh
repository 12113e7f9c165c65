#!/bin/bash
# Session call 6 (untracked): ncu source pages and memory counters of the registered TF32 build and CF_ABL_SKIP_ITEM=2. (xk.py: the copy in ../call1.)
D=$OUT/call6; mkdir -p $D; date > $D/start.txt
T=conv3d:04b_wgmma_tf32; K=CF_ABL_SKIP_ITEM=2
timeout 150 python3 xk.py build $T $T@$K > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
M=gpu__time_duration.sum,smsp__sass_inst_executed.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sector_op_read_hit_rate.pct,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
timeout 80 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $T $T@$K > $D/ncu.log 2>&1
echo "ncu rc $?" >> $D/ncu.log
for v in "$T" "$T@$K"; do tag=$(echo $v | tr ':@=' '___')
timeout 80 ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats --page source --print-source sass --csv python3 scripts/ncu_sections.py "$v" 2> $D/ncu_err_$tag.log | gzip > $D/ncu_source_$tag.csv.gz
done
date > $D/end.txt
cd $OUT && tar czf call6.tgz call6
grep -E "gpu__time|inst_exec|dram__|lts__|l1tex__|long_sc" $D/ncu.log | awk '{print $1, $(NF-1), $NF}'
ls -la $D
