#!/usr/bin/env bash
# One full call on a lent GPU machine (no Jupyter, no network): build timings, the GPU test suite,
# the benchmark. Everything lands under $OUT; a short table is printed last.
#   usage: bash scripts/device_session.sh [stages...]
#   stages: env build gputest bench (the default), and on request:
#     sanitize  compute-sanitizer memcheck/racecheck/synccheck on every kernel variant -> $OUT/sanitize.json
#     harden    tests/test_gpu_hardening.py -> $OUT/gpu_hardening.log, $OUT/large_tensor.json (~9 GB tensors)
#     profile   Nsight Compute bytes into $OUT/nvidia-h200.json (a bench rewrites the file without them)
#     pack      everything under $OUT except the results JSON into $OUT/logs.tgz (last: for a machine that
#               sends back only a few files)
#   bench copies the hardening fields from $OUT/{sanitize,large_tensor}.json, else results/device-logs/,
#   onto its records, where the log's source hash matches the kernel benchmarked: run sanitize and harden
#   before bench in the same call, or copy their JSON into results/device-logs/ before a later call.
set -uo pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/convfuse-out}; mkdir -p "$OUT"
PY=${PY:-python3}
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
      $PY -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_kernels.py 2>&1 | tee "$OUT/gpu_tests.log" | tail -25 ;;
    bench)
      $PY -m convfuse bench --out "$OUT/nvidia-h200.json" --hardening-dir "$OUT" $([ -f "$OUT/build_times.json" ] && echo --build-times "$OUT/build_times.json") 2>&1 | tee "$OUT/bench.log" | grep -vE "^\[(bench\] (round|warm)|verify\] conv)" ;;
    sanitize)
      $PY -m convfuse.sanitize --out "$OUT/sanitize.json" --logs "$OUT/sanitize-logs" 2>&1 | tee "$OUT/sanitize.log" | tail -40 ;;
    harden)
      CONVFUSE_LARGE_TENSOR_JSON="$OUT/large_tensor.json" $PY -m pytest -q -m gpu -p no:cacheprovider -rfE tests/test_gpu_hardening.py 2>&1 | tee "$OUT/gpu_hardening.log" | tail -30 ;;
    profile)
      [ -f "$OUT/nvidia-h200.json" ] || cp results/nvidia-h200.json "$OUT/nvidia-h200.json"
      $PY -m convfuse.profile --results "$OUT/nvidia-h200.json" --csv-out "$OUT/ncu.csv" 2>&1 | tee "$OUT/profile.log" | tail -30 ;;
    pack)
      (cd "$OUT" && tar czf /tmp/convfuse-logs.tgz --exclude=nvidia-h200.json --exclude=logs.tgz . \
        && find . -mindepth 1 -not -name nvidia-h200.json -delete && mv /tmp/convfuse-logs.tgz logs.tgz && ls -la) ;;
    *) echo "unknown stage $s" ;;
  esac
done
