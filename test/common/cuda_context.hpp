// Whether a kernel fault (a trap, an illegal address) left the CUDA context unusable: after one,
// every CUDA call fails with it, so the CUDA test and the fuzzer stop there rather than report
// each later case as failed.
#pragma once
#include <cuda_runtime.h>

namespace ctfx_test {

inline bool cuda_context_lost() {
  void* p = nullptr;
  if (cudaMalloc(&p, 1) != cudaSuccess) return true;
  cudaFree(p);
  return false;
}

}  // namespace ctfx_test
