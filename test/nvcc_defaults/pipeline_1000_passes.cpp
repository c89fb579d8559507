// The reinplacing pipeline on 1,000-node graphs under nvcc's *default* constexpr limits (no
// -Xcudafe --max_cost_constexpr_call, no -fconstexpr-ops-limit for its host g++).
// Under nvcc each pass is its own constant evaluation (ctfx::stage), and each must stay
// within EDG's default budget (it admits a 950,000-iteration `r += i` loop and refuses 1,000,000;
// bench/RESULTS.md §1). Two graphs: the scatter chain of test/compile/pipeline_1000.cpp and the
// halo exchange of bench/compile/gen.py (nested scatters that canonicalization fuses, re-creating
// views), the costliest canonicalize and decompose stages we measured.
//
// With Inductor's table (pipeline<G>'s default: the first scatter of a chain is reinplaced, the rest
// are left to kernel fusion by its profitability rule). The chain with ctfx::executor_inplace_table
// (every scatter reinplaced) and its memory plan are test/compile/pipeline_1000.cpp, which CI also
// compiles with nvcc's defaults (compile.pipeline_1000.nvcc).
#include <ctfx.hpp>
#include "../compile/scatter_chain.hpp"
#include <ctfx/passes/pipeline.hpp>

namespace {

constexpr int count(const ctfx::ir& g, ctfx::op_kind k) {
  int n = 0;
  for (const auto& nd : g.nodes) n += nd.op == k;
  return n;
}

constexpr int rounds = 498;  // 2 inputs + 2 nodes per round + the copy_ epilogue + the output = 1,000
// The graph's type: pipeline<> and the size checks below name it.
using chain_t = decltype(ctfx_test::scatter_chain<rounds>);
static_assert(chain_t::sizes.nodes == 1000);
using P = ctfx::pipeline<chain_t>;
static_assert(P::report.size() == rounds && P::report.reinplaced() >= 1);
constexpr bool chain_right() {
  const ctfx::ir g = P::get();
  return g.error.ok() && count(g, ctfx::op_kind::generalized_scatter) == 0 &&
         count(g, ctfx::op_kind::generalized_scatter_) == 0;
}
static_assert(chain_right());

constexpr int steps = 142;  // 4 inputs/outputs + 7 nodes a step = 998 nodes
constexpr auto halo = ctfx::graph([](ctfx::builder& g) {
  auto grid = g.input("grid", ctfx::f32, {258, 258});
  auto ghost = g.input("ghost", ctfx::f32, {1, 256});
  auto y = grid;
  for (int i = 0; i < steps; ++i) {
    auto row = ghost + 1.0;
    y = ctfx::slice_scatter(y, ctfx::slice_scatter(y.slice(0, 0, 1), row, 1, 1, 257), 0, 0, 1);
    y = ctfx::slice_scatter(y, ctfx::slice_scatter(y.slice(0, 257, 258), row, 1, 1, 257), 0, 257, 258);
  }
  g.update(grid, y);
});
static_assert(decltype(halo)::sizes.nodes >= 990);
using H = ctfx::pipeline<decltype(halo)>;
// Every nested pair fuses into one generalized scatter: one reinplacing candidate each.
static_assert(H::report.size() == 2 * steps);
constexpr bool halo_right() {
  const ctfx::ir g = H::get();
  return g.error.ok() && count(g, ctfx::op_kind::generalized_scatter) == 0 &&
         count(g, ctfx::op_kind::generalized_scatter_) == 0;
}
static_assert(halo_right());

}  // namespace

int main() { return 0; }
