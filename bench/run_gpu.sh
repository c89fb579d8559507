#!/usr/bin/env bash
# GPU benchmarks, for a machine with an NVIDIA GPU: builds bench/cuda with nvcc
# (Release, in ./build-gpu; CTFX_BUILD_DIR overrides), runs the CUDA workloads against the
# device-to-device copy bound, CUDA-graph replay against per-op launches, and the programs that
# compute (compiled<G>, runtime_plan) against their copy bound; then — where torch with CUDA is
# installed — PyTorch eager and torch.compile on the same GPU. Progress on stderr,
# markdown tables on stdout.   bash bench/run_gpu.sh [--quick] [--reps N]
# CTFX_PREBUILT=1 runs the benchmark binary already in the build directory (built elsewhere).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CTFX_BUILD_DIR:-$root/build-gpu}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || { echo "no GPU visible"; exit 77; }
if [ "${CTFX_PREBUILT:-0}" != 1 ]; then
  CTFX_BUILD_DIR=$build bash "$root/scripts/configure.sh" -DCTFX_CUDA=ON -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j "$(nproc)" --target ctfx_cuda_bench
fi
echo "== run time on the GPU (bench/cuda)"
"$build/bench/cuda/ctfx_cuda_bench" "$@"
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  echo "== against PyTorch on the GPU (bench/torch/compare.py --device cuda)"
  python3 "$root/bench/torch/compare.py" --device cuda --ctfx "$build/bench/cuda/ctfx_cuda_bench" "$@"
  echo "== the programs that compute, PyTorch eager and torch.compile on the GPU (bench/torch/compute.py --device cuda)"
  python3 "$root/bench/torch/compute.py" --device cuda
else
  echo "== torch with CUDA not installed: PyTorch comparison skipped"
fi
