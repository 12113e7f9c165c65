#!/usr/bin/env bash
# One full call on a lent GPU machine (no Jupyter, no network): build timings, the GPU test suite,
# the benchmark. Everything lands under $OUT; a short table is printed last.
#   usage: bash scripts/device_session.sh [stages...]   stages: env build gputest bench (default: all)
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
      $PY -m convfuse bench --out "$OUT/nvidia-h200.json" $([ -f "$OUT/build_times.json" ] && echo --build-times "$OUT/build_times.json") 2>&1 | tee "$OUT/bench.log" | grep -vE "^\[(bench\] (round|warm)|verify\] conv)" ;;
    sass)   # instruction mix of every built kernel: tensor-core HMMA, FFMA, local memory (LDL/STL)
      for so in build/convfuse_*/*.so; do
        n=$(basename "$so" .so); cuobjdump -sass "$so" > "/tmp/$n.sass" 2>/dev/null
        printf "%-40s HMMA %6s FFMA %6s LDL %4s STL %4s LDGSTS %5s MUFU %5s\n" "$n" \
          "$(grep -c HMMA /tmp/$n.sass)" "$(grep -c FFMA /tmp/$n.sass)" "$(grep -c LDL /tmp/$n.sass)" \
          "$(grep -c STL /tmp/$n.sass)" "$(grep -c LDGSTS /tmp/$n.sass)" "$(grep -c MUFU /tmp/$n.sass)"
      done | tee "$OUT/sass_summary.txt" ;;
    *) echo "unknown stage $s" ;;
  esac
done
