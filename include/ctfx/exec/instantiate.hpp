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
#include "../core/diagnostics_push.hpp"
// This instance's chunk loops are compiled at every host ISA level, as in the files that link it
// (kernels/fused.hpp, chunk_loop); it must come before any other ctfx header of its file.
#define CTFX_RUNTIME_INSTANCE 1
#include "runtime.hpp"
#include "static_run.hpp"
#if CTFX_HOST_ISA_LEVELS && !CTFX_CHUNK_ISA_LEVELS
#error "ctfx/exec/instantiate.hpp: include it before any other ctfx header of its file, so that its chunk loops are compiled at every ISA level as the files that link it expect"
#endif

namespace ctfx {
template class basic_program<0>;
template class basic_runtime_plan<0>;
template struct basic_static_runner<0>;
}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
