#!/usr/bin/env bash
# One full call on a lent GPU machine (no Jupyter, no network): build timings, the GPU test suite,
# the benchmark. Everything lands under $OUT; a short table is printed last. The optional nvidia-cudnn-frontend
# (cuDNN's fused-graph rows) travels as a wheel: put it under .whl/ and carry it; it is installed first.
#   usage: bash scripts/device_session.sh [stages...]
#   stages: env build gputest bench (the default), and on request:
#     cudnn     the plans cuDNN offers for each problem's fused graph, each timed -> $OUT/cudnn_plans.log
#     sanitize  compute-sanitizer memcheck/racecheck/synccheck on every kernel variant -> $OUT/sanitize.json
#     harden    tests/test_gpu_hardening.py -> $OUT/gpu_hardening.log, $OUT/large_tensor.json (~9 GB tensors)
#     profile   Nsight Compute bytes into $OUT/<gpu-slug>.json (a bench rewrites the file without them)
#     ops       the library face: tests/test_gpu_ops.py (opcheck, compiled fuse within its class) -> $OUT/gpu_ops.log,
#               then fuse(model) timed beside eager and torch.compile(model) -> $OUT/fuse.json, $OUT/fuse.log
#     family    the generated family kernels (scripts/family_gpu.py): built in parallel, verified, timed beside eager,
#               torch.compile and cuDNN's fused graph -> $OUT/family_<gpu>.json, $OUT/family_plan.json, $OUT/family.log,
#               its table last (the generated sources stay in /tmp/convfuse-family: a reply brings back few files);
#               FAMILY_RUN_DESIGNS=a,b,... limits the designs, FAMILY_PROBLEMS=1,54,... the problems, FAMILY_INTO=a record
#               of this GPU to add them to (--into: a second call finishing a first one's record), FAMILY_LIMIT_S cuts the
#               stage (default 400 s: the record is written after every problem, so a cut run brings back those it finished)
#     familyops fuse(model) on every other family model, compiled, within its class (tests/test_gpu_ops.py -k family)
#               -> $OUT/family_ops.log
#     scales    the conv3d kernels the H100's scale sweep of 2026-12-07 failed (the three FP32-class ones) or did not
#               reach, at every input scale beside eager and eager FP32 (python -m convfuse verify --scales)
#               -> $OUT/scales.log
#     pack      everything under $OUT except the results JSON (and the family's) into $OUT/logs.tgz (last: for a machine that
#               sends back only a few files)
#   The record is $OUT/<gpu-slug>.json (the slug from this GPU's name), started from results/<gpu-slug>.json: bench
#   keeps its hardening and evidence where the machine code is unchanged, and applies $OUT's sanitize.json,
#   large_tensor.json, gpu_tests.log and gpu_hardening.log where they checked the code it timed: run gputest,
#   sanitize and harden before bench in the same call (or `python -m convfuse.results merge-hardening` after).
#   REQUIRE_GPU=NAME: stop with status 3 before any stage unless this GPU's name contains NAME (a call meant to record
#   one GPU that lands on another would spend its time re-recording that one)
set -uo pipefail
export PYTHONUNBUFFERED=1
if [ -n "${REQUIRE_GPU:-}" ]; then
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
  case "$gpu" in
    *"$REQUIRE_GPU"*) ;;
    *) echo "device_session: this GPU is '${gpu:-none found}', not $REQUIRE_GPU (REQUIRE_GPU): nothing run"; exit 3 ;;
  esac
fi
OUT=${OUT:-/tmp/convfuse-out}; mkdir -p "$OUT"
PY=${PY:-python3}
SLUG=$($PY -c "import torch; from convfuse.results import slug; print(slug(torch.cuda.get_device_name(0)))" 2>/dev/null || echo unknown-gpu)
REC="$OUT/$SLUG.json"
if ls .whl/*.whl >/dev/null 2>&1; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
stages=${*:-env build gputest bench}
for s in $stages; do
  case $s in
    env)
      nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$OUT/nvidia-smi.csv" 2>&1
      cat "$OUT/nvidia-smi.csv"; nproc; $PY -c "import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())" ;;
    build)
      if ! $PY -m convfuse.build --timing "$OUT/build_times.json" > "$OUT/build.log" 2>&1; then
        echo "build failed; retrying with torch headers visible to nvcc"; tail -20 "$OUT/build.log"
        export CONVFUSE_NVCC_TORCH_HEADERS=1
        $PY -m convfuse.build --timing "$OUT/build_times.json" > "$OUT/build.log" 2>&1
      fi
      grep -E "^\[build\] (times|all)|FAILED|error" "$OUT/build.log" ;;
    gputest)
      $PY -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_kernels.py 2>&1 | tee "$OUT/gpu_tests.log" | tail -25
      $PY -m pytest -q -m gpu -p no:cacheprovider -rs tests/test_cudnn_fused.py tests/test_kernelbench.py 2>&1 \
        | tee "$OUT/gpu_reference_tests.log" | tail -8 ;;
    cudnn)
      $PY -m convfuse.cudnn_fused 2>&1 | tee "$OUT/cudnn_plans.log" ;;
    bench)
      [ -f "$REC" ] || [ ! -f "results/$SLUG.json" ] || cp "results/$SLUG.json" "$REC"
      $PY -m convfuse bench --out "$REC" --hardening-dir "$OUT" $([ -f "$OUT/build_times.json" ] && echo --build-times "$OUT/build_times.json") 2>&1 | tee "$OUT/bench.log" | grep -vE "^\[(bench\] (round|warm)|verify\] conv)" ;;
    sanitize)
      $PY -m convfuse.sanitize --out "$OUT/sanitize.json" --record "$REC" --logs "$OUT/sanitize-logs" 2>&1 | tee "$OUT/sanitize.log" | tail -40 ;;
    harden)
      CONVFUSE_LARGE_TENSOR_JSON="$OUT/large_tensor.json" $PY -m pytest -q -m gpu -p no:cacheprovider -rfE tests/test_gpu_hardening.py 2>&1 | tee "$OUT/gpu_hardening.log" | tail -30 ;;
    profile)
      [ -f "$REC" ] || cp "results/$SLUG.json" "$REC"
      $PY -m convfuse.profile --results "$REC" --csv-out "$OUT/ncu.csv" 2>&1 | tee "$OUT/profile.log" | tail -30 ;;
    ops)
      $PY -m pytest -q -m gpu -p no:cacheprovider -rfE tests/test_gpu_ops.py 2>&1 | tee "$OUT/gpu_ops.log" | tail -15
      $PY -m convfuse fuse --out "$OUT/fuse.json" 2>&1 | tee "$OUT/fuse.log" | grep -E "^\[fuse\] (conv|.*first)" ;;
    family)
      timeout "${FAMILY_LIMIT_S:-400}" $PY scripts/family_gpu.py --out /tmp/convfuse-family \
        ${FAMILY_RUN_DESIGNS:+--designs "$FAMILY_RUN_DESIGNS"} ${FAMILY_PROBLEMS:+--problems "$FAMILY_PROBLEMS"} \
        ${FAMILY_INTO:+--into "$FAMILY_INTO"} > "$OUT/family.log" 2>&1; echo "family: exit $?"
      grep -E "^\[family\] |FAIL" "$OUT/family.log" | tail -30; tail -14 "$OUT/family.log"
      cp /tmp/convfuse-family/family_*.json "$OUT/" 2>/dev/null; cp /tmp/convfuse-family/plan.json "$OUT/family_plan.json" ;;
    familyops)
      $PY -m pytest -q -m gpu -p no:cacheprovider -rfE tests/test_gpu_ops.py -k family 2>&1 | tee "$OUT/family_ops.log" | tail -6 ;;
    scales)
      $PY -m convfuse verify --scales --problem conv3d --variant 04_mma_3xtf32 --variant 04b_wgmma_3xtf32 \
        --variant 04b_wgmma_3xfp16 --variant 04b_wgmma_fp16 --variant 04d_rs_tf32 2>&1 | tee "$OUT/scales.log" | tail -40 ;;
    pack)
      (cd "$OUT" && tar czf /tmp/convfuse-logs.tgz --exclude="$SLUG.json" --exclude="family_*.json" --exclude=logs.tgz . \
        && find . -mindepth 1 -not -name "$SLUG.json" -not -name "family_*.json" -delete \
        && mv /tmp/convfuse-logs.tgz logs.tgz && ls -la) ;;
    *) echo "unknown stage $s" ;;
  esac
done
