#!/bin/bash
# Prepared by the twenty-seventh session (its device-seconds ran out): conv2d 04d on one pool of stages dealt by need
# (CF_POOL), at five rows and at four, against the registered build and the five-row build on two-stage rings. Copy
# results/device-logs/explore-2026-12-02h/call4/xk.py to the repo root for the call (and remove it after); run from the
# root as `mkdir -p $OUT; timeout 500 bash notes/next_call_conv2d_pool.sh`, then move this script beside its logs.
# Predicted (notes/kernel_log.md, twenty-seventh session): both pool builds bitwise equal (the same boxes, dealt to
# other slots); racecheck / synccheck clean (a new handoff: tickets and a shared pool); five rows on the pool 1-3.6 %
# faster than the registered build (its floor without the epilogue is 3.6 % lower), four rows on six pooled stages
# within 1 % of the registered build (three stages a ring do not run dry now).
D=$OUT/callP; mkdir -p $D; cp "$0" $D/
B=conv2d:04d_rs_tf32
R5=$B@CF_ROWS=5,CF_PITCH=72,CF_STAGES=2,CF_SET_CARRY,CF_PARAMS_SMEM
P5=$B@CF_ROWS=5,CF_PITCH=72,CF_SET_CARRY,CF_PARAMS_SMEM,CF_POOL=5; P6=$B@CF_POOL=6
export PYTHONUNBUFFERED=1
{
date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv,noheader
timeout 150 python3 xk.py build $B $R5 $P5 $P6 > $D/build.log 2>&1; echo "build rc $?"; tail -1 $D/build.log
timeout 80 python3 scripts/check_bitwise.py --deadline 20 $B $P5 $P6 > $D/bitwise.log 2>&1; echo "bitwise rc $?"; tail -2 $D/bitwise.log
timeout 80 python3 scripts/check_variant.py $B $R5 $P5 $P6 2>&1 | grep -A6 "timing, median"
timeout 70 python3 scripts/check_variant.py $P6 $P5 $R5 $B 2>&1 | grep -A6 "timing, median"
timeout 50 python3 xk.py verify $P5 $P6 > $D/verify.log 2>&1; echo "verify rc $?"; grep -E "verify\]|FAIL" $D/verify.log
for t in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $t python3 xk.py san $P5 $P6 > $D/san_$t.log 2>&1; echo "$t rc $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $D/san_$t.log | tail -2
done
S=smsp__average_warps_issue_stalled; R=per_issue_active.ratio
M=gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum
for r in barrier long_scoreboard short_scoreboard wait; do M=$M,${S}_${r}_$R; done
timeout 50 ncu --clock-control none --profile-from-start off --metrics $M python3 scripts/ncu_sections.py $B $R5 $P5 $P6 2>&1 | grep -E "gpu__|smsp__|dram__|ncu-sections\]|ERR"
# What the registered build's epilogue waits for, per SASS region and stall reason: an ncu report with PC sampling, read
# through ncu's own Python interface (extras/python, ncu_report). Written without a GPU and never run: if it fails, the
# line says so and the rest of the call stands.
timeout 60 ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats \
  -o $D/r04d python3 scripts/ncu_sections.py $B > /dev/null 2>&1; echo "ncu report rc $?"
PYTHONPATH=$(dirname $(readlink -f $(which ncu)))/extras/python timeout 60 python3 - $D/r04d.ncu-rep <<'PY' || echo "per-PC stalls: failed"
import collections, sys
import ncu_report
a = ncu_report.load_report(sys.argv[1]).range_by_idx(0).action_by_idx(0)
pre = "smsp__pcsamp_warps_issue_stalled_"
reasons = [n for n in a.metric_names() if n.startswith(pre) and not n.endswith("not_issued")]
per_pc = collections.defaultdict(collections.Counter)
for r in reasons:
    m = a[r]
    ids = m.correlation_ids()
    for i in range(m.num_instances()):
        per_pc[ids.as_uint64(i)][r[len(pre):]] += m.as_uint64(i)
marks = [("USETMAXREG.TRY_ALLOC", "consumer loop"), ("WARPGROUP.DEPBAR.LE gsb0, 0x0", "consumer epilogue"),
         ("USETMAXREG.DEALLOC", "producer")]
region, by_region = "prologue", collections.defaultdict(collections.Counter)
for pc in sorted(per_pc):
    sass = a.sass_by_pc(pc) or ""
    for mark, name in marks:
        if mark in sass:
            region = name
    by_region[region].update(per_pc[pc])
total = sum(sum(c.values()) for c in by_region.values())
for name, c in by_region.items():
    top = ", ".join(f"{k} {100 * v / total:.1f}" for k, v in c.most_common(6))
    print(f"[pc-stalls] {name}: {100 * sum(c.values()) / total:.1f} % of samples; {top}")
PY
rm -f $D/r04d.ncu-rep
date -u
} 2>&1 | tee $D/call.log
