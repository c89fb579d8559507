// ctfx/graph/verify.hpp — the invariants of DESIGN.md, checked after building and after every pass:
// arguments defined before use, metadata equal to what each op's rule computes, views sharing their
// base's storage, a functional graph except the copy_ epilogue into inputs (before reinplacing),
// unique names, and one output node at the end. Linear except for the N·log N name check.
#pragma once
#include <algorithm>
#include <vector>
#include "../ops/meta.hpp"

namespace ctfx {

namespace detail {
constexpr bool same_meta_except_storage(const tensor_meta& a, const tensor_meta& b) {
  if (a.dt != b.dt || a.rank != b.rank || !(a.offset == b.offset)) return false;
  for (int i = 0; i < a.rank; ++i)
    if (!(a.size[i] == b.size[i]) || !(a.stride[i] == b.stride[i])) return false;
  return true;
}
}  // namespace detail

// How much verify() checks. `full` recomputes every node's metadata with its op's rule (after a
// pass); `structure` trusts the metadata (right after the builder, which computed it with the
// same rules) and checks everything else — it saves half the compile time of a large graph.
enum class verify_level : std::uint8_t { full, structure };

// Returns the first broken rule, naming the node; ok() when the graph is valid.
constexpr diagnostic verify(ir g, verify_level level = verify_level::full) {
  using namespace detail;
  if (!g.error.ok()) return g.error;
  const std::int32_t n = g.size();
  if (n == 0 || g[n - 1].op != op_kind::output) {
    g.fail(rule::bad_argument, n - 1, "the graph does not end with its output node [rule valid-argument]");
    return g.error;
  }
  bool in_epilogue = false;
  for (std::int32_t i = 0; i < n; ++i) {
    const node& nd = g[i];
    if (nd.op == op_kind::output && i != n - 1) {
      auto m = about(g, i); m << "a second output node"; fail(g, i, rule::bad_argument, m); return g.error;
    }
    if (level == verify_level::structure) {
      for (auto a : g.args_of(i))
        if (a < -1 || a >= i) {
          auto t = about(g, i); t << "argument '" << arg_name(g, a) << "' is not defined before its use";
          fail(g, i, rule::use_before_definition, t); return g.error;
        }
    }
    tensor_meta m = nd.meta;
    if (level == verify_level::full && !compute_meta(g, i, m)) return g.error;
    // Aliases (views, in-place results) must share the storage the rule names; fresh results
    // must not share a storage with their arguments; tuples have none.
    bool ok = same_meta_except_storage(m, nd.meta);
    if (ok && m.storage >= 0) ok = m.storage == nd.meta.storage;
    if (ok && m.storage == -1) ok = nd.meta.storage == -1;
    if (ok && m.storage == fresh) {
      ok = nd.meta.storage >= 0;
      for (auto a : g.args_of(i))
        if (a >= 0 && g.meta(a).storage == nd.meta.storage) ok = false;
    }
    if (!ok) {
      auto t = about(g, i); t << "stored metadata "; put_type(t, g, nd.meta); t << " (storage " << nd.meta.storage
        << ") differs from its op's rule "; put_type(t, g, m);
      fail(g, i, rule::metadata_inconsistent, t);
      return g.error;
    }
    if (g.phase == graph_phase::functional) {
      if (nd.op == op_kind::copy_) {
        if (g[g.arg(i, 0)].op != op_kind::placeholder) {
          auto t = about(g, i); t << "copy_ into '" << arg_name(g, g.arg(i, 0)) << "', which is not a graph input";
          fail(g, i, rule::epilogue_target, t); return g.error;
        }
        in_epilogue = true;
        continue;
      }
      bool mutates = is_mutating(nd.op) ||
                     (nd.op == op_kind::custom && g.customs[static_cast<std::size_t>(nd.aux)].mutates != 0);
      if (mutates) {
        auto t = about(g, i);
        t << "mutates '" << arg_name(g, g.arg(i, 0)) << "' in a functional graph; write the functional op and "
          << "put the result back with an epilogue update (g.update(input, value))";
        fail(g, i, rule::mutation_outside_epilogue, t); return g.error;
      }
      if (in_epilogue && nd.op != op_kind::output) {
        auto t = about(g, i); t << "follows the copy_ epilogue; only copy_ into inputs may come after it";
        fail(g, i, rule::mutation_outside_epilogue, t); return g.error;
      }
    }
  }
  // Unique names: sort (hash, id) pairs, N·log N on integers (sorting the names themselves costs
  // seconds of constant evaluation at 1,000 nodes), then compare names only where hashes meet.
  std::vector<std::pair<std::uint64_t, std::int32_t>> order;
  order.reserve(static_cast<std::size_t>(n));
  for (std::int32_t i = 0; i < n; ++i) {
    std::uint64_t h = 1469598103934665603ull;
    for (char c : g[i].name.s) { if (!c) break; h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull; }
    order.push_back({h, i});
  }
  std::sort(order.begin(), order.end());
  for (std::size_t k = 1; k < order.size(); ++k)
    if (order[k].first == order[k - 1].first && g[order[k].second].name == g[order[k - 1].second].name) {
      auto t = about(g, order[k].second); t << "has the same name as node " << order[k - 1].second;
      fail(g, order[k].second, rule::duplicate_name, t);
      return g.error;
    }
  return g.error;
}

}  // namespace ctfx
