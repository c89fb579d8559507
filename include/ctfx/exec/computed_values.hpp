// ctfx/exec/computed_values.hpp — values read with item() from a tensor the graph computes
// (`(x > 0).sum().item()`, counts for a split): the part of the functional graph the value depends
// on (its cone) becomes a graph of its own, which a call runs on the host when it binds, before
// anything of the call is written. The cone reads only inputs: the functional graph writes its
// inputs only in its epilogue, after every value it reads. So the value, and every check on it,
// is known before the first write into a caller buffer; the price is that the cone's ops run
// twice (ahead, and in the run).
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <algorithm>
#include <string>
#include <vector>
#include "../graph/data_dependent.hpp"
#include "run_checks.hpp"
#include "tensor.hpp"

namespace ctfx {

/// A value the graph computes and reads with item(): symbol `sym`, the one element of the single
/// output of `graph` (the cone of the functional graph's node), whose inputs are the caller's
/// inputs at positions `inputs`.
struct value_cone {
  std::size_t sym = 0;               ///< the symbol it binds
  ir graph{};                        ///< the cone, its output the value's tensor
  std::vector<std::int32_t> inputs;  ///< per cone input: the caller's input position
};

/// The cones of every computed value of `functional` (a graph as written); a failure names the
/// node when a cone cannot be run ahead (its sizes depend on another value read with item()).
inline run_status value_cones(const ir& functional, std::vector<value_cone>& out) {
  out.clear();
  const ir& g = functional;
  for (std::size_t s = 0; s < g.syms.size(); ++s) {
    if (!is_computed_value(g.syms[s])) continue;
    const std::int32_t root = g.syms[s].dim;
    if (root >= g.size()) return run_status::failure(-1, "rule unbacked-symbol: the node of a computed value is not in the graph");
    std::vector<unsigned char> in(static_cast<std::size_t>(g.size()), 0);
    in[static_cast<std::size_t>(root)] = 1;
    for (std::int32_t i = root; i >= 0; --i)
      if (in[static_cast<std::size_t>(i)])
        for (const std::int32_t a : g.args_of(i))
          if (a >= 0) in[static_cast<std::size_t>(a)] = 1;
    value_cone c;
    c.sym = s;
    c.graph.syms = g.syms;
    for (symbol& y : c.graph.syms)  // the cone's sizes use none of them (checked below)
      if (is_read_value(y)) { y.input = -1; y.dim = -1; }
    c.graph.customs = g.customs;
    c.graph.subgraphs = g.subgraphs;  // a cond or while_loop in the cone names them by position
    c.graph.next_storage = g.next_storage;
    // placeholders renumbered in input order
    std::vector<std::int32_t> ph;
    for (std::int32_t i = 0; i <= root; ++i)
      if (in[static_cast<std::size_t>(i)] && g[i].op == op_kind::placeholder) ph.push_back(i);
    std::sort(ph.begin(), ph.end(), [&](std::int32_t a, std::int32_t b) { return g[a].aux < g[b].aux; });
    std::vector<std::int32_t> to(static_cast<std::size_t>(g.size()), -1);
    std::vector<std::int32_t> args;
    for (std::int32_t i = 0; i <= root; ++i) {
      if (!in[static_cast<std::size_t>(i)]) continue;
      const node& n = g[i];
      for (int d = 0; d < n.meta.rank; ++d)
        for (std::size_t u = 0; u < g.syms.size(); ++u)
          if (g.syms[u].kind == symbol_kind::unbacked && (n.meta.size[d].uses(static_cast<int>(u)) || n.meta.stride[d].uses(static_cast<int>(u))))
            return run_status::failure(i, "rule unbacked-symbol: node '" + std::string(g[root].name.view()) + "', read with item(), depends on node '" +
                                              std::string(n.name.view()) + "', whose size depends on another value read with item(); ctfx computes "
                                              "such values ahead of the run from the inputs only: pass one of them as an input");
      args.clear();
      for (const std::int32_t a : g.args_of(i)) args.push_back(a < 0 ? -1 : to[static_cast<std::size_t>(a)]);
      node copy = n;
      copy.origin = -1;
      if (n.op == op_kind::placeholder) {
        const auto k = std::find(ph.begin(), ph.end(), i) - ph.begin();
        copy.aux = static_cast<std::int32_t>(k);
        c.inputs.push_back(n.aux);
      }
      to[static_cast<std::size_t>(i)] = c.graph.append(copy, args, g.params_of(n));
    }
    // c.inputs was filled in node order: put it in the renumbered (input) order
    std::sort(c.inputs.begin(), c.inputs.end());
    node o{};
    o.op = op_kind::output;
    o.name = name_t("output");
    const std::int32_t r = to[static_cast<std::size_t>(root)];
    c.graph.append(o, std::span<const std::int32_t>(&r, 1), {});
    infer_meta(c.graph, c.graph.size() - 1);
    out.push_back(static_cast<value_cone&&>(c));
  }
  return {};
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
