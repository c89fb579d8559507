// test/fuzz/compiled_sample.hpp — the compile-time half of the differential fuzzer: a generated
// graph, parsed from its FX text by the compiler, must be the graph the generator builds at run
// time, and its compile-time plan (ctfx::compiled) must match the reference bit for bit.
#pragma once
#include <cstdio>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_parse.hpp>
#include "buffers.hpp"
#include "generator.hpp"

namespace ctfx_fuzz {

inline int static_plans = 0;  // samples whose plan ran as a static plan (exec/static_plan.hpp)
inline int static_index_plans = 0;    // those among them with index ops
inline int static_scatter_plans = 0;  // with scatters
inline int static_list_plans = 0;     // with list ops
inline int static_computed_plans = 0; // with indices computed in the graph (checked during the run)
inline int static_mask_plans = 0;     // with bool-mask puts
inline int static_symbolic_plans = 0; // with symbolic extents (evaluated on each call)
inline int row_chain_plans = 0;       // plans with steps run row by row as a chain (plan/row_chain.hpp)

template <class G>
int check_compiled(std::uint64_t seed, bool kernel_steps_only = false, bool symbolic = false) {
  generator gen(seed, true, kernel_steps_only, symbolic);
  const fuzz_case c = gen.make();
  const ctfx::kernel_table kernels = fuzz_kernels();
  if (ctfx::to_text(G::get()) != ctfx::to_text(c.graph)) {
    std::printf("FAIL seed %llu: the compile-time parse differs from the generated graph\n", static_cast<unsigned long long>(seed));
    return 1;
  }
  using plan = ctfx::compiled<G>;
  if (kernel_steps_only && !plan::run_plan.usable)
    std::printf("seed %llu: no static plan: %s\n", static_cast<unsigned long long>(seed), plan::run_plan.why);
  static_plans += plan::run_plan.usable;
  bool chained = false;
  for (std::size_t i = 0; i < plan::node_count; ++i) chained = chained || plan::chains.next[i] >= 0;
  row_chain_plans += chained;
  static_index_plans += plan::run_plan.usable && plan::run_plan.n_index_steps > 0;
  static_scatter_plans += plan::run_plan.usable && plan::run_plan.n_scatters > 0;
  static_computed_plans += plan::run_plan.usable && plan::run_plan.n_late_checks > 0;
  static_symbolic_plans += plan::run_plan.usable && plan::run_plan.n_symbols > 0;
  if (plan::run_plan.usable) {
    bool mask = false;
    for (const auto& s : plan::run_plan.ref().index_steps) mask = mask || s.mask;
    static_mask_plans += mask;
  }
  if (plan::run_plan.usable) {
    const ctfx::ir pg = plan::graph();
    bool list = false;
    for (const std::int32_t i : plan::run_plan.ref().steps) list = list || ctfx::is_list_op(pg[i].op);
    static_list_plans += list;
  }
  std::vector<ctfx::tensor_desc> descs;
  for (const auto& i : c.inputs) descs.push_back(i.desc);
  const auto b = plan::bind(descs);
  buffers got = make_buffers(c, b.outputs), ref = make_buffers(c, b.outputs);
  const auto st = plan::run(got.in_refs, got.out_refs, {}, {}, &kernels);
  const auto sr = ctfx::reference_run(c.graph, ref.in_refs, ref.out_refs, &kernels);
  if (!st.ok || !sr.ok || got.in != ref.in || got.out != ref.out) {
    std::printf("FAIL seed %llu: %s%s\n%s\n", static_cast<unsigned long long>(seed), st.message.c_str(),
                (got.in != ref.in || got.out != ref.out) ? " results differ from the reference" : "", ctfx::to_text(c.graph).c_str());
    return 1;
  }
  return 0;
}

}  // namespace ctfx_fuzz
