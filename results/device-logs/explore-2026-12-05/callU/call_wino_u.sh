#!/bin/bash
# Call U (prepared by the thirty-third session, 2026-12-04, when no device was lent): conv2d 04e, Winograd F(2x2, 3x3)
# in 3xTF32 (kernels/conv2d/04e_winograd_wgmma.cu, registry.PREPARED), its first run on a GPU. Run it FIRST, before the
# record call of notes/call_record_epi_ilp.sh, so that one record can register 04e too if this call verifies it
# (the plan: the last paragraph of notes/kernel_log.md's thirty-third entry). From the repo root on the device:
#   mkdir -p $OUT; timeout 565 bash notes/call_wino_u.sh; tar czf $OUT/callU.tgz -C $OUT callU
# (1) verified on the odd shapes and the full problem (randn against float64) and timed in one process beside the
# registered 3xTF32 build, eager and torch.compile; with each pair's descriptors in uniform registers
# (CF_WINO_DESC_UNIFORM, thirty-fourth session), with three input stages, with warpgroup 1 a pair behind
# (CF_WINO_SKEW), and that with six weight stages, in clusters of two sharing the weight copies (CF_WINO_CLUSTER=2);
# its TF32 build (04e_wino_tf32), and that with each row's column sums in the tensor core (CF_WINO_ROWS, thirty-fourth
# session), beside 04d's TF32 build;
# (2) compute-sanitizer memcheck, racecheck, synccheck on the sanitizer shapes; (3) the hardening tests (Inf/NaN
# classes, poisoned outputs within bounds, large magnitudes, ten identical runs, >2^31 elements) on the two 04e builds
# alone; (4) ncu: tensor pipe, L2 and shared-memory throughput, DRAM bytes, one launch each. The predictions are in
# notes/kernel_log.md (thirty-third session).
D=$OUT/callU; mkdir -p $D; cp "$0" $D/
W=conv2d:04e_wino_3xtf32
X=conv2d:04d_rs_3xtf32
WT=conv2d:04e_wino_tf32
XT=conv2d:04d_rs_tf32
export PYTHONUNBUFFERED=1
{
date -u
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
timeout 330 python3 scripts/check_variant.py $W $X $W@CF_WINO_DESC_UNIFORM $W@CF_WINO_IN_STAGES=3 $W@CF_WINO_SKEW \
  $W@CF_WINO_SKEW,CF_WINO_W_STAGES=6 $W@CF_WINO_CLUSTER=2 $WT $WT@CF_WINO_ROWS $XT > $D/time.log 2>&1; echo "time rc $?"
grep -E "rel_l2|error|Error" $D/time.log | awk '{print substr($0, 1, 160)}' | head -20; grep -A8 "timing" $D/time.log
if grep -q "04e_wino_3xtf32 (64, 64, 256, 256).*wrong 0.0000" $D/time.log; then
  timeout 110 python3 scripts/sanitize.py --problem conv2d --variant 04e_wino_3xtf32 --variant 04e_wino_tf32 \
    --out $D/sanitize.json --logs $D/san \
    > $D/sanitize.log 2>&1; echo "sanitize rc $?"; tail -5 $D/sanitize.log
  CONVFUSE_HARDEN_VARIANTS=$W,$WT CONVFUSE_LARGE_TENSOR_JSON=$D/large_tensor.json timeout 110 \
    python3 -m pytest -q -m gpu tests/test_gpu_hardening.py > $D/hardening.log 2>&1; echo "hardening rc $?"; tail -4 $D/hardening.log
  Q=sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
  Q=$Q,lts__t_bytes.sum,lts__t_bytes.sum.per_second,lts__throughput.avg.pct_of_peak_sustained_elapsed
  Q=$Q,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active
  Q=$Q,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
  timeout 80 ncu --clock-control none --profile-from-start off --metrics $Q python3 scripts/ncu_sections.py $W $X $WT > $D/ncu.log 2>&1
  echo "ncu rc $?"; grep -E "conv2d_|gpu__|sm__|lts__|l1tex__|smsp__|launch__|dram__|ncu-sections\]|ERR" $D/ncu.log
else
  echo "04e not verified at full size: no sanitizer, hardening or ncu run"; tail -30 $D/time.log
fi
date -u
} 2>&1 | tee $D/call.log
