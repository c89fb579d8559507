#!/usr/bin/env bash
# Runs the host benchmarks with a progress line per workload: run time (bench/runtime), planned
# peak memory of the example graphs (bench/memory), memory planning on the public traces
# (bench/memplan), compile-time scaling (bench/compile; slow, skip
# with CTFX_SKIP_COMPILE_BENCH=1). Builds what it needs in ./build (CTFX_BUILD_DIR overrides).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CTFX_BUILD_DIR:-$root/build}
[ -f "$build/CMakeCache.txt" ] || bash "$root/scripts/configure.sh"
targets=(ctfx_runtime_bench ctfx_compute_bench ctfx_peak_bench)
[ -f "$root/tools/ctfx_plan/CMakeLists.txt" ] && targets+=(ctfx_plan)
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
# The compute benchmark also for this CPU (-march=native) and on the OMP backend, and the call
# cost benchmark, when they build.
extra=()
for t in ctfx_compute_bench_native ctfx_compute_bench_omp ctfx_call_cost_bench; do
  cmake --build "$build" -j "$(nproc)" --target "$t" >/dev/null 2>&1 && extra+=("$t")
done
echo "== run time on the host (bench/runtime)"
"$build/bench/runtime/ctfx_runtime_bench" "$@"
echo "== run time of programs that compute, against the hand loops, PyTorch eager and torch.compile"
python3 "$root/bench/compute_table.py" --build "$build"
if [ -x "$build/bench/runtime/ctfx_call_cost_bench" ]; then
  echo "== what a call costs beyond its arithmetic (bench/runtime/call_cost.cpp)"
  "$build/bench/runtime/ctfx_call_cost_bench"
fi
echo "== planned peak memory of the example graphs (bench/memory)"
"$build/bench/memory/ctfx_peak_bench"
if [ -x "$root/bench/memplan/run.sh" ] || [ -f "$root/bench/memplan/run.sh" ]; then
  echo "== memory planning (bench/memplan)"
  CTFX_BUILD_DIR=$build bash "$root/bench/memplan/run.sh"
fi
if [ -z "${CTFX_SKIP_COMPILE_BENCH:-}" ] && [ -f "$root/bench/compile/run.sh" ]; then
  echo "== compile time (bench/compile)"
  bash "$root/bench/compile/run.sh"
fi
