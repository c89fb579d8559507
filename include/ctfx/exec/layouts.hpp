// ctfx/exec/layouts.hpp — from symbolic metadata to numbers: binding the symbols of a graph from
// the shapes of the caller's inputs, and evaluating every node's extents, strides and offset.
// Every failure names the input or node and the rule, and happens before anything is written.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <algorithm>
#include <span>
#include <string>
#include <vector>
#include "../graph/ir.hpp"
#include "../graph/sym_ops.hpp"
#include "../ops/meta_util.hpp"
#include "../kernels/strided.hpp"
#include "input_values.hpp"
#include "run_checks.hpp"
#include "tensor.hpp"

namespace ctfx {

// A node's layout with its symbols evaluated: offset and strides in elements of its storage.
struct bound_layout {
  dtype dt = dtype::f32;
  int rank = 0;
  index_t size[max_rank]{};
  index_t stride[max_rank]{};
  index_t offset = 0;
  std::int32_t storage = -1;

  index_t numel() const {
    index_t n = 1;
    for (int i = 0; i < rank; ++i) n *= size[i];
    return n;
  }
  // One past the largest element offset reached, or 0 when empty.
  index_t extent() const {
    index_t hi = offset;
    for (int i = 0; i < rank; ++i) {
      if (size[i] == 0) return 0;
      hi += (size[i] - 1) * stride[i];
    }
    return hi + 1;
  }
  tensor_desc desc() const {
    tensor_desc d;
    d.dt = dt;
    d.rank = rank;
    for (int i = 0; i < rank; ++i) { d.size[i] = size[i]; d.stride[i] = stride[i]; }
    return d;
  }
  // The view without its data: what a static plan's kernels know of it in the compiler.
  constexpr strided shape() const {
    strided s;
    s.dt = dt;
    s.rank = rank;
    for (int i = 0; i < rank; ++i) { s.size[i] = size[i]; s.stride[i] = stride[i]; }
    return s;
  }
  // Its first element's address in a storage that starts at base.
  std::byte* address(std::byte* base) const { return base + offset * size_of(dt); }
  strided at(std::byte* base) const {
    strided s = shape();
    s.p = address(base);
    return s;
  }
};

namespace detail {

inline std::string node_label(const ir& g, std::int32_t id) {
  return id >= 0 && id < g.size() ? "node '" + std::string(g[id].name.view()) + "'" : std::string("the graph");
}

// The tensor placeholders in input order (placeholder.aux is the input position).
constexpr std::vector<std::int32_t> input_nodes_of(const ir& g) {
  std::vector<std::int32_t> in;
  for (std::int32_t i = 0; i < g.size(); ++i)
    if (g[i].op == op_kind::placeholder && g[i].meta.is_tensor()) in.push_back(i);
  std::sort(in.begin(), in.end(), [&](std::int32_t a, std::int32_t b) { return g[a].aux < g[b].aux; });
  return in;
}

// The node named `name` in graph g, or -1 (a guard's message names the node laid out under it).
inline std::int32_t node_named(const ir& g, const name_t& name) {
  for (std::int32_t i = 0; i < g.size(); ++i)
    if (g[i].name == name) return i;
  return -1;
}
// A symbol table without its graph: a static plan's (exec/static_plan.hpp), with its nodes' names.
struct symbol_table_ref {
  std::span<const symbol> syms;   ///< the graph's symbols
  std::span<const name_t> names;  ///< per node: its name
};
inline std::int32_t node_named(const symbol_table_ref& t, const name_t& name) {
  for (std::size_t i = 0; i < t.names.size(); ++i)
    if (t.names[i] == name) return static_cast<std::int32_t>(i);
  return -1;
}
}  // namespace detail

// Evaluates the derived symbols (floor division, modulo, Max, Min, guards) from the symbols bound
// before them, in table order (a derived symbol uses only earlier ones). One whose operands use an
// unbound data-dependent symbol stays unbound (-1), as that symbol does. G: the graph, or what
// holds its symbol table as `syms` with a detail::node_named (a static plan's: exec/static_run.hpp).
template <class G = ir>
run_status bind_derived(const G& g, std::vector<index_t>& values) {
  auto text = [&](std::size_t s) {
    detail::msg m;
    detail::put_symbol(m, g, s);
    return std::string(m.view());
  };
  // Unbound: a plain symbol with no value, or a derived one over an unbound one (a derived value
  // may be negative, so -1 alone does not say it).
  std::vector<unsigned char> unbound(g.syms.size(), 0);
  for (std::size_t s = 0; s < g.syms.size(); ++s) {
    const symbol& x = g.syms[s];
    if (x.kind != symbol_kind::derived) {
      unbound[s] = values[s] < 0 && !is_read_value(x);
      continue;
    }
    bool bound = true;
    for (std::size_t u = 0; u < s && bound; ++u)
      if (unbound[u] && (x.a.uses(static_cast<int>(u)) || x.b.uses(static_cast<int>(u)))) bound = false;
    if (!bound) { values[s] = -1; unbound[s] = 1; continue; }
    if (eval_derived(g, s, values)) continue;
    if (x.op == sym_op::order) continue;  // a guard's comparison: checked below, a guard at a time
    if (x.op == sym_op::guard && !x.name.empty())  // an assertion on a tensor's value (aten._assert_async)
      return run_status::failure(-1, "rule tensor-assertion: node '" + std::string(x.name.view()) +
                                         "' (aten._assert_async) asserts a tensor that is false (zero) for these inputs, where PyTorch "
                                         "raises; nothing was written (check the inputs the assertion guards, e.g. one_hot's classes)");
    if (x.op == sym_op::guard)
      return run_status::failure(-1, "rule symbolic-guard: the graph was traced assuming " + text(s) + " (a PyTorch guard); these inputs give " +
                                         std::to_string(x.a.eval(values)) + " and " + std::to_string(x.b.eval(values)));
    return run_status::failure(-1, "rule symbolic-division: " + text(s) + " divides by zero for these inputs");
  }
  // A result laid out as PyTorch printed it needs one of its guard's sets of comparisons to hold
  // (ops/result_layout.hpp: printed_order). (A comparison whose sizes are not bound yet holds.)
  for (std::size_t s = 0; s < g.syms.size();) {
    const symbol& x = g.syms[s];
    if (x.kind != symbol_kind::derived || x.op != sym_op::order) { ++s; continue; }
    std::size_t end = s;
    bool held = false, set_holds = true;
    std::size_t broken = g.syms.size();  // the first comparison of the first set that fails
    for (; end < g.syms.size() && g.syms[end].op == sym_op::order && g.syms[end].guard == x.guard; ++end) {
      const symbol& c = g.syms[end];
      if (end > s && c.alternative != g.syms[end - 1].alternative) {
        held = held || set_holds;
        set_holds = true;
      }
      const bool holds = values[end] != 0;
      if (!holds && broken == g.syms.size() && c.alternative == 0) broken = end;
      set_holds = set_holds && holds;
    }
    held = held || set_holds;
    if (!held) {
      const symbol& c = g.syms[broken < g.syms.size() ? broken : s];
      const std::size_t at = broken < g.syms.size() ? broken : s;
      const int sets = g.syms[end - 1].alternative + 1;
      const std::int32_t node = detail::node_named(g, x.name);
      return run_status::failure(node, "rule result-stride-order: node '" + std::string(x.name.view()) +
                                           "' is laid out in the strides PyTorch printed, which it ordered by the sizes it traced with; they need " +
                                           text(at) + (sets == 2 ? " (or the comparisons of one other set)" : sets > 2 ? " (or those of one of " + std::to_string(sets - 1) + " other sets)" : std::string()) +
                                           ", and these inputs give " + std::to_string(c.a.eval(values)) + " and " + std::to_string(c.b.eval(values)) +
                                           "; fix: trace the program at sizes that order its strides as these do (or mark the sizes static), "
                                           "or make the operands contiguous() first");
    }
    s = end;
  }
  return {};
}

// Binds every symbol that an input's extent names, and checks the inputs against the graph:
// count, dtype, rank, static extents, symbolic extents that must agree, and strides; and, when
// `data` holds the inputs (host memory), the values the graph reads from them with item().
inline run_status bind_symbols(const ir& g, const std::vector<std::int32_t>& inputs, std::span<const tensor_desc> given,
                               std::vector<index_t>& values, std::span<const tensor_ref> data = {},
                               std::span<const computed_value> computed = {}) {
  values.assign(g.syms.size(), -1);
  if (auto st = detail::check_input_count(inputs.size(), given.size()); !st) return st;
  // First pass: plain symbols bind; second pass: everything must agree.
  // (Names are built only for a failure: a run that passes pays for no string.)
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const tensor_meta& m = g.meta(inputs[k]);
    const tensor_desc& t = given[k];
    if (auto st = detail::check_input_kind(inputs[k], g[inputs[k]].name.view(), k, m.dt, m.rank, t); !st) return st;
    for (int d = 0; d < m.rank; ++d) {
      const sym_expr& e = m.size[d];
      if (const int s = e.as_symbol(); s >= 0) {
        auto& v = values[static_cast<std::size_t>(s)];
        if (v < 0) v = t.size[d];
      }
    }
  }
  for (std::size_t s = 0; s < g.syms.size(); ++s)
    if (values[s] < 0 && g.syms[s].kind == symbol_kind::backed) {
      bool used = false;
      for (const auto& nd : g.nodes)
        for (int d = 0; d < nd.meta.rank && !used; ++d) used = nd.meta.size[d].uses(static_cast<int>(s));
      if (used)
        return run_status::failure(-1, "rule symbol-bound: symbol '" + std::string(g.syms[s].name.view()) +
                                           "' is not the extent of any input dimension, so no call can bind it");
    }
  if (reads_input_values(g))
    if (const run_status st = bind_input_values(g, inputs, data, values, computed); !st.ok) return st;
  for (std::size_t s = 0; s < g.syms.size(); ++s)
    if (values[s] < 0 && g.syms[s].kind == symbol_kind::unbacked && !is_read_value(g.syms[s])) {
      bool used = false;
      for (const auto& nd : g.nodes)
        for (int d = 0; d < nd.meta.rank && !used; ++d) used = nd.meta.size[d].uses(static_cast<int>(s));
      if (used)
        return run_status::failure(-1, "rule unbacked-symbol: data-dependent symbol '" + std::string(g.syms[s].name.view()) +
                                           "' is not bound by an input's shape; the executor cannot size what depends on it yet");
    }
  if (const run_status st = bind_derived(g, values); !st.ok) return st;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const tensor_meta& m = g.meta(inputs[k]);
    const tensor_desc& t = given[k];
    index_t want[max_rank]{}, wstride[max_rank]{};
    for (int d = 0; d < m.rank; ++d) {
      want[d] = m.size[d].eval(values);
      wstride[d] = m.stride[d].eval(values);
    }
    if (auto st = detail::check_input_layout(inputs[k], g[inputs[k]].name.view(), k, want, wstride, m.rank, t); !st) return st;
  }
  return {};
}

inline bound_layout evaluate(const tensor_meta& m, const std::vector<index_t>& values) {
  bound_layout b;
  b.dt = m.dt;
  b.rank = m.rank;
  b.storage = m.storage;
  for (int i = 0; i < m.rank; ++i) {
    b.size[i] = m.size[i].eval(values);
    b.stride[i] = m.stride[i].eval(values);
  }
  b.offset = m.offset.eval(values);
  return b;
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
