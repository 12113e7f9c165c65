#!/bin/bash
# Thirtieth session, call G: what an SM's tensor pipe retires with nothing but wgmmas (kernels/micro/wgmma_rate.cu,
# scripts/wgmma_rate.py): register-A N = 32 and 64 (04d's shapes, CONCAT's pair), shared-A N = 64 to 256; then the
# tensor-pipe counters ncu has on this GPU, on the microbenchmark (calibration) and on the registered 04d / 04b kernels.
# Run from the root: `mkdir -p $OUT; timeout 500 bash notes/call_wgmma_rate_g.sh; tar czf $OUT/callG.tgz -C $OUT callG`.
D=$OUT/callG; mkdir -p $D; cp "$0" $D/
export PYTHONUNBUFFERED=1
{
date -u
timeout 150 python3 scripts/wgmma_rate.py $D/wgmma_rate.json > $D/rate.log 2>&1; echo "rate rc $?"; tail -12 $D/rate.log
timeout 60 python3 scripts/wgmma_rate.py /tmp/rate2.json --iters 16000 > $D/rate_long.log 2>&1; echo "rate (4x iters) rc $?"
grep "wgmma_rate\]" $D/rate_long.log
timeout 30 ncu --query-metrics --chip gh100 > /tmp/qm.txt 2>&1; grep -E "tensor|gmma" /tmp/qm.txt | cut -c1-150 > $D/ncu_metrics.txt
wc -l $D/ncu_metrics.txt; awk '{print $1}' $D/ncu_metrics.txt | head -40
Q=gpu__time_duration.sum,sm__cycles_elapsed.avg,sm__cycles_elapsed.avg.per_second
for m in $(awk '{print $1}' $D/ncu_metrics.txt | grep -E "^sm__pipe_.*(tensor|gmma).*cycles_active$"); do
  Q=$Q,$m.avg.pct_of_peak_sustained_active,$m.avg
done
echo "metrics: $Q"
timeout 90 ncu --clock-control none --metrics $Q python3 scripts/wgmma_rate.py /tmp/rate3.json --iters 2000 --repeats 1 \
  > $D/ncu_micro.log 2>&1; echo "ncu micro rc $?"
grep -E "rate_kernel|pct_of_peak|cycles_elapsed.avg |__time" $D/ncu_micro.log | cut -c1-160 | head -80
timeout 120 ncu --clock-control none --profile-from-start off --metrics $Q python3 scripts/ncu_sections.py \
  conv2d:04d_rs_3xtf32 conv2d:04d_rs_tf32 conv3d:04b_wgmma_tf32 conv2d:04c_ws_3xfp16 > $D/ncu_kernels.log 2>&1
echo "ncu kernels rc $?"; grep -E "ncu-sections\]|pct_of_peak|cycles_elapsed.avg |__time|ERR" $D/ncu_kernels.log | cut -c1-160
date -u
} 2>&1 | tee $D/call.log
