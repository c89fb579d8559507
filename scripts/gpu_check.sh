#!/usr/bin/env bash
# GPU validation, for a machine with an NVIDIA GPU: builds with nvcc, runs the CUDA tests and the
# fuzzer on the CUDA backend against the host reference, then compute-sanitizer memcheck and
# racecheck over the CUDA test. Prints each step's outcome; exits non-zero if any fails.
#   bash scripts/gpu_check.sh [CASES]     (default 10000 fuzz cases)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CTFX_BUILD_DIR:-$root/build-gpu}
cases=${1:-10000}
status=0
step() { echo "== $*"; "$@"; local rc=$?; echo "== rc=$rc: $*"; [ $rc -eq 0 ] || status=1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || { echo "no GPU visible"; exit 77; }
CTFX_BUILD_DIR=$build step bash "$root/scripts/configure.sh" -DCTFX_CUDA=ON -DCMAKE_BUILD_TYPE=Release
step cmake --build "$build" -j "$(nproc)" --target cuda_exec_cuda ctfx_fuzz_cuda
step "$build/test/cuda_exec_cuda"
step "$build/test/fuzz/ctfx_fuzz_cuda" --seed 5 --cases "$cases" --backend cuda --quiet
if command -v compute-sanitizer >/dev/null; then
  step compute-sanitizer --tool memcheck --error-exitcode 1 "$build/test/cuda_exec_cuda"
  step compute-sanitizer --tool racecheck --error-exitcode 1 "$build/test/cuda_exec_cuda"
  step compute-sanitizer --tool memcheck --error-exitcode 1 "$build/test/fuzz/ctfx_fuzz_cuda" --seed 6 --cases 200 --backend cuda --quiet
fi
exit $status
