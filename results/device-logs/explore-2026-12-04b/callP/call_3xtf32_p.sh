#!/bin/bash
# Call P, prepared by the thirty-first session (its device-seconds ran out): (1) the wgmma rate microbenchmark with its
# cases 22-25 (RS m64n64k8, SS m64n64k8 and CONCAT's pair beside a warpgroup of 8-byte shared loads; the pair beside a
# warpgroup of 8-byte global stores in 04d's pattern); (2) ncu's L1 / shared-memory counters on conv2d 04d 3xTF32 as
# registered, its epilogue-warpgroup build, and that build without math and stores. From the repo root:
# `mkdir -p $OUT; timeout 560 bash notes/call_3xtf32_p.sh; tar czf $OUT/callP.tgz -C $OUT callP`; afterwards move this
# script beside its logs (results/device-logs/<dir>/callP/).
D=$OUT/callP; mkdir -p $D; cp "$0" $D/
A=conv2d:04d_rs_3xtf32
E=$A@CF_3X_EPI_WG,CF_STAGES=2,-CF_3X_SETS=3
export PYTHONUNBUFFERED=1
{
date -u
timeout 200 python3 scripts/wgmma_rate.py $D/wgmma_rate.json > $D/rate.log 2>&1; echo "rate rc $?"; grep "wgmma_rate\]" $D/rate.log
# the counters this ncu knows, of those that may tell the shared-memory path's load (names differ between versions)
ncu --query-metrics --chip gh100 > $D/metrics.txt 2>&1
Q=gpu__time_duration.sum,sm__cycles_elapsed.avg,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active
for m in l1tex__data_bank_reads l1tex__data_bank_writes l1tex__data_pipe_lsu_wavefronts_mem_shared \
         l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld l1tex__t_sectors_pipe_lsu_mem_global_op_st l1tex__throughput \
         l1tex__lsu_writeback_active smsp__inst_executed_op_shared_ld smsp__inst_executed_op_global_st; do
  grep -q "^$m " $D/metrics.txt && Q=$Q,$m.sum,$m.avg.pct_of_peak_sustained_active
done
Q=$Q,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio
echo "metrics: $Q"
timeout 200 ncu --clock-control none --profile-from-start off --metrics $Q python3 scripts/ncu_sections.py $A $E $E,CF_ABL_NOEPI > $D/ncu.log 2>&1
echo "ncu rc $?"; grep -E "gpu__|sm__|l1tex__|smsp__|ncu-sections\]|ERR" $D/ncu.log
date -u
} 2>&1 | tee $D/call.log
