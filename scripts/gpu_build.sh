#!/usr/bin/env bash
# Builds, on a machine without a GPU, what scripts/gpu_check.sh and bench/run_gpu.sh run on one:
# the CUDA test, the fuzzer on the CUDA backend and the CUDA benchmark, Release, with machine code
# for the GPU (CTFX_CUDA_ARCH, default 90: H100 and H200), so that the GPU's driver loads them
# without compiling their PTX first. For a GPU node without Boost, doctest or a compiler: copy the
# tree with its build directory there and run both scripts with CTFX_PREBUILT=1.
#   bash scripts/gpu_build.sh        (CTFX_BUILD_DIR overrides ./build-gpu)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CTFX_BUILD_DIR:-$root/build-gpu}
CTFX_BUILD_TYPE=Release CTFX_BUILD_DIR=$build bash "$root/scripts/configure.sh" -DCTFX_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES="${CTFX_CUDA_ARCH:-90}" >/dev/null
cmake --build "$build" -j "$(nproc)" --target cuda_exec_cuda ctfx_fuzz_cuda ctfx_cuda_bench
bins=("$build/test/cuda_exec_cuda" "$build/test/fuzz/ctfx_fuzz_cuda" "$build/bench/cuda/ctfx_cuda_bench")
du -h "${bins[@]}"
echo "then, on the GPU machine: CTFX_PREBUILT=1 bash scripts/gpu_check.sh; CTFX_PREBUILT=1 bash bench/run_gpu.sh"
