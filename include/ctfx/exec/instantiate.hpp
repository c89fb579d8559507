// ctfx/exec/instantiate.hpp — the run-time half of ctfx compiled once: include this header in
// exactly one translation unit of a program whose other files are compiled with
// CTFX_SEPARATE_RUNTIME defined (CMake: link ctfx::runtime, which does both). Those files then
// only call the executor (basic_program, basic_runtime_plan, basic_static_runner) instead of
// compiling it each time.
//
// The instance compiled here runs the host and OMP backends (as this file's THRUST_DEVICE_SYSTEM
// says); a program that runs on CUDA compiles this header with nvcc (or keeps the header-only
// default) — otherwise a CUDA run fails with `rule backend`.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "runtime.hpp"
#include "static_run.hpp"

namespace ctfx {
template class basic_program<0>;
template class basic_runtime_plan<0>;
template struct basic_static_runner<0>;
}  // namespace ctfx
