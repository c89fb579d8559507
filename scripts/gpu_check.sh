#!/usr/bin/env bash
# GPU validation, for a machine with an NVIDIA GPU: builds with nvcc, runs the CUDA tests and the
# fuzzer on the CUDA backend against the host reference, then compute-sanitizer memcheck and
# racecheck over the CUDA test. Prints each step's outcome; exits non-zero if any fails.
#   bash scripts/gpu_check.sh [CASES]     (default 10000 fuzz cases)
# CTFX_PREBUILT=1 runs the binaries already in the build directory (built with nvcc on another
# machine, e.g. a login node with Boost and doctest, for a GPU node without them).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CTFX_BUILD_DIR:-$root/build-gpu}
cases=${1:-10000}
status=0
step() { echo "== $*"; "$@"; local rc=$?; echo "== rc=$rc: $*"; [ $rc -eq 0 ] || status=1; }
# The runs under a time limit (CTFX_STEP_TIMEOUT seconds, default 600): a kernel that never ends
# must not hold the GPU machine; rc 124 says the limit stopped it.
run() { step timeout "${CTFX_STEP_TIMEOUT:-600}" "$@"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || { echo "no GPU visible"; exit 77; }
if [ "${CTFX_PREBUILT:-0}" != 1 ]; then
  CTFX_BUILD_DIR=$build step bash "$root/scripts/configure.sh" -DCTFX_CUDA=ON -DCMAKE_BUILD_TYPE=Release
  step cmake --build "$build" -j "$(nproc)" --target cuda_exec_cuda ctfx_fuzz_cuda
fi
run "$build/test/cuda_exec_cuda"
run "$build/test/fuzz/ctfx_fuzz_cuda" --seed 5 --cases "$cases" --backend cuda --quiet
if command -v compute-sanitizer >/dev/null; then
  run compute-sanitizer --tool memcheck --error-exitcode 1 "$build/test/cuda_exec_cuda"
  run compute-sanitizer --tool racecheck --error-exitcode 1 "$build/test/cuda_exec_cuda"
  run compute-sanitizer --tool memcheck --error-exitcode 1 "$build/test/fuzz/ctfx_fuzz_cuda" --seed 6 --cases 200 --backend cuda --quiet
fi
exit $status
