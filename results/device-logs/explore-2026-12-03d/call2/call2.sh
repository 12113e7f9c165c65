#!/bin/bash
# Twenty-fifth session, call 2 (after the record): why CF_DWIN_SKIP is slower. L2 hit rates and DRAM reads of the
# registered build against CF_DWIN_SKIP alone and with the leftovers dealt by cost (W = 40); a third timing.
D=$OUT/call2; mkdir -p $D; cp "$0" $D/
B=conv3d:04b_wgmma_tf32; S=$B@CF_DWIN_SKIP; S40=$S,CF_DWIN_WEIGHT=40
export PYTHONUNBUFFERED=1
{
date -u
timeout 150 python3 xk.py build $B $S $S40 > $D/build.log 2>&1; echo "build rc $?"; tail -1 $D/build.log
timeout 60 python3 scripts/check_variant.py $B $S $S40 2>&1 | tee $D/time.log | grep -A5 "timing, median"
M=gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum
timeout 60 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $B $S $S40 2>&1 | tee $D/ncu.log | grep -E "gpu__|dram__|lts__|ncu-sections\]|ERR"
M2=lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum
timeout 60 ncu --clock-control none --profile-from-start off --metrics $M2 python3 scripts/ncu_sections.py $B $S $S40 2>&1 | tee $D/ncu2.log | grep -E "lts__|ncu-sections\]|ERR"
date -u
} 2>&1 | tee $D/call.log
