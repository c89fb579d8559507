// What a user's file costs to compile when it runs a graph it is given at run time (parsed from
// PyTorch's FX text, or built by a tool) with runtime_plan: the run-time pipeline, the program's
// binding, validation and memory plan, and the run-time dispatch of every kernel family, which a
// header-only file compiles and a file with ctfx::runtime (CTFX_SEPARATE_RUNTIME) takes from the
// library. Timed by bench/compile/user_files.sh.
#include <ctfx.hpp>
#include <ctfx/exec/runtime.hpp>

ctfx::run_status run_given(const ctfx::ir& g, ctfx::tensor_refs in, ctfx::tensor_refs out) {
  ctfx::runtime_plan plan(g);
  return plan.run(in, out);
}
