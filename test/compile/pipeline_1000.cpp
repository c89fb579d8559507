// The whole reinplacing pipeline and the memory plan on a 1,000-node graph, in the compiler: 498
// rounds of "scale a row, scatter it into the one buffer `x`", written back with a copy_ epilogue
// (the traced form of `x[i % 64] = src * (i + 1)` in a loop). CI compiles this file with g++,
// clang++-14 and nvcc (test/CMakeLists.txt), nvcc with its default constexpr limits (each pass,
// and the memory plan, is one constant evaluation within EDG's budget: bench/RESULTS.md §1); each
// must run the six passes with a verify after each (ctfx::pipeline), liveness and buffer reuse,
// and agree on the result below.
#include <ctfx.hpp>
#include "scatter_chain.hpp"
#include <ctfx/analysis/liveness.hpp>
#include <ctfx/exec/inplace_table.hpp>
#include <ctfx/passes/pipeline.hpp>
#include <ctfx/plan/reuse.hpp>

namespace {

constexpr int rounds = 498;  // 2 inputs + 2 nodes per round + the copy_ epilogue + the output = 1,000

// The graph's type: pipeline<> and the size checks below name it.
using chain_t = decltype(ctfx_test::scatter_chain<rounds>);
static_assert(chain_t::sizes.nodes == 2 + 2 * rounds + 2);

// With the table ctfx's executors plan with (every node realized, as in ctfx::compiled). Inductor's
// own table (pipeline<G>'s default) reinplaces only the first scatter and leaves the rest to its
// kernel fusion: its profitability rule, reported as such.
using P = ctfx::pipeline<chain_t, ctfx::executor_inplace_table>;

// Reinplacing: every scatter (a generalized scatter after canonicalization) runs in place in x,
// nothing is cloned, no bytes are missed.
static_assert(P::report.size() == rounds);
static_assert(P::report.reinplaced() == rounds);
static_assert(P::report.all_inplace());
static_assert(P::report.clones() == 0);
static_assert(P::report.missed_bytes() == 0);

constexpr int count(const ctfx::ir& g, ctfx::op_kind k) {
  int n = 0;
  for (const auto& nd : g.nodes) n += nd.op == k;
  return n;
}

// The result: per round the scaled row, a slice view of x and a copy_ into it — except round 0,
// whose `src * 1.0` is a no-op (src is copied directly); no clone of x, no scatter left, and the
// epilogue x.copy_(y) gone (y is x itself now).
constexpr int muls = rounds - 1;
constexpr bool final_graph_right() {
  const ctfx::ir g = P::get();
  return g.size() == 2 + muls + 2 * rounds + 1 && count(g, ctfx::op_kind::clone) == 0 && count(g, ctfx::op_kind::mul) == muls &&
         count(g, ctfx::op_kind::slice) == rounds && count(g, ctfx::op_kind::copy_) == rounds &&
         count(g, ctfx::op_kind::slice_scatter) == 0 && count(g, ctfx::op_kind::generalized_scatter) == 0 &&
         count(g, ctfx::op_kind::generalized_scatter_) == 0 && g.phase == ctfx::graph_phase::reinplaced;
}
static_assert(P::final_stage::sizes.nodes == 2 + muls + 2 * rounds + 1);
static_assert(final_graph_right());

// The memory plan: one 512-byte buffer per scaled row, each dead after its copy_, so all but the
// first reuse an earlier one and the peak stays at one row (x is the caller's and is not planned).
struct plan_facts {
  std::int32_t buffers, reuses, steps;
  std::int64_t peak;
};
constexpr plan_facts plan() {
  const ctfx::ir g = P::get();
  const ctfx::liveness L = ctfx::compute_liveness(g);
  const ctfx::reuse_plan R = ctfx::plan_reuse(L);
  return {static_cast<std::int32_t>(L.buffers.size()), R.reuses, static_cast<std::int32_t>(L.steps.size()), R.peak_static_bytes};
}
constexpr plan_facts facts = plan();
static_assert(facts.steps == muls + rounds);  // the muls and the copy_s (views run no kernel)
static_assert(facts.buffers == muls);
static_assert(facts.reuses == muls - 1);
static_assert(facts.peak == 128 * 4);

}  // namespace

int main() { return 0; }
