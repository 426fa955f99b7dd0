#!/usr/bin/env bash
# One call on the lent GPU machine: install what its image lacks, then run the named stages, logs under $OUT.
#   bash benchmarks/gpu_session.sh accuracy gpu-tests      (carry: .whl benchmarks/accuracy/public)
# Stages: accuracy | gpu-tests | gpu-tests-server | runtime-bench | profiler-bench | optimize-bench | optimize-cold-ncu | ncu-phases | server-bench | fast-build | verdicts | timing-overhead
# Each stage has a time limit that keeps a whole call inside the 10-minute one.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site
fi
python3 -m pip install -q --no-deps --no-build-isolation -e . >"$OUT/install.log" 2>&1 || { tail "$OUT/install.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
for stage in "$@"; do
  echo "=== $stage $(date +%T)"
  case $stage in
    accuracy) timeout 200 python3 benchmarks/accuracy/measure.py --out "$OUT/accuracy" --jobs 16 2>&1 | tail -4 ;;
    gpu-tests) timeout 450 python3 -m pytest -m gpu -q -rs -p no:cacheprovider tests 2>&1 | tee "$OUT/gpu-tests.log" | tail -25 ;;
    gpu-tests-server) timeout 400 python3 -m pytest -m gpu -q -rs -p no:cacheprovider tests/server tests/runtime 2>&1 | tee "$OUT/gpu-tests-server.log" | tail -25 ;;
    runtime-bench) python3 benchmarks/gpu_runtime.py 2>&1 | tee "$OUT/runtime-bench.log" | tail -40 ;;
    profiler-bench) python3 benchmarks/profiler_speed.py --full 2>&1 | tee "$OUT/profiler-bench.log" | tail -20 ;;
    optimize-bench) timeout 300 python3 benchmarks/gpu_optimize_loop.py 2>&1 | tee "$OUT/optimize-bench.log" | tail -60 ;;
    optimize-cold-ncu) timeout 300 python3 benchmarks/gpu_optimize_loop.py --no-ncu-standby 2>&1 | tee "$OUT/optimize-cold-ncu.log" | tail -60 ;;
    ncu-phases) timeout 120 python3 benchmarks/ncu_phases.py 2>&1 | tee "$OUT/ncu-phases.log" ;;
    server-bench) python3 benchmarks/server_gpu_save.py --repeat 2 --think 5 2>&1 | tee "$OUT/server-bench.log" | tail -20 ;;
    fast-build) timeout 200 python3 -m pytest -m gpu -q -rs -p no:cacheprovider tests/runtime/test_runtime_gpu.py -k optimize_problems \
                  tests/server/test_on_save_gpu.py 2>&1 | tee "$OUT/fast-build.log" | tail -25 ;;
    verdicts) timeout 420 python3 -m pytest -m gpu -q -rs -s -p no:cacheprovider tests/runtime/test_verdicts_gpu.py \
                tests/runtime/test_runtime_gpu.py 2>&1 | tee "$OUT/verdicts.log" | tail -30 ;;
    timing-overhead) timeout 300 python3 benchmarks/timing_overhead.py 2>&1 | tee "$OUT/timing-overhead.log" | tail -60 ;;
    *) echo "unknown stage $stage" ;;
  esac
  # a stage cut short by its timeout leaves workers and ncu targets (own process groups) running: they would
  # share the GPU with the next stage's measurements
  pkill -9 -f "profile_target.py|worker_main.py|compute-sanitizer" 2>/dev/null; pkill -9 -x ncu 2>/dev/null
done
echo "=== done $(date +%T)"
