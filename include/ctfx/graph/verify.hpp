// ctfx/graph/verify.hpp — the invariants of DESIGN.md, checked after building and after every pass:
// arguments defined before use, metadata equal to what each op's rule computes, views sharing their
// base's storage, a functional graph except the copy_ epilogue into inputs (before reinplacing),
// unique names, and one output node at the end. Linear in nodes + edges.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <algorithm>
#include <vector>
#include "../detail/cvec.hpp"
#include "../detail/fnv.hpp"
#include "../ops/meta.hpp"

namespace ctfx {

namespace detail {
// The stride of an extent-1 dimension addresses nothing, and rules may differ on it (a
// stride-preserving copy of a one-element slice with step 2 after its contiguous clone was removed
// as a no-op, found by the fuzzer): it is not compared.
constexpr bool same_meta_except_storage(const tensor_meta& a, const tensor_meta& b) {
  if (a.dt != b.dt || a.rank != b.rank || !(a.offset == b.offset)) return false;
  for (int i = 0; i < a.rank; ++i)
    if (!(a.size[i] == b.size[i]) || (!(a.size[i] == sym_expr(1)) && !(a.stride[i] == b.stride[i]))) return false;
  return true;
}
}  // namespace detail

/// How much verify() checks. `full` recomputes every node's metadata with its op's rule (after a
/// pass); `structure` trusts the metadata (right after the builder, which computed it with the
/// same rules) and checks everything else — it saves half the compile time of a large graph;
/// `links` also leaves out the unique-name table (hashing every name): it is what the compile-time
/// pipeline checks between passes, where the full check after the last pass covers names and
/// metadata, and any failure reruns the pipeline with `full` after each pass to name the pass.
enum class verify_level : std::uint8_t { full, structure, links };

namespace detail {
constexpr diagnostic fail_metadata(ir& g, std::int32_t i, const tensor_meta& rule_meta) {
  const node& nd = g.nodes.data()[i];
  auto t = about(g, i); t << "stored metadata "; put_type(t, g, nd.meta); t << " (storage " << nd.meta.storage
    << ") differs from its op's rule "; put_type(t, g, rule_meta);
  fail(g, i, rule::metadata_inconsistent, t);
  return g.error;
}

// The checks, on g itself: a broken rule is recorded in g.error (and returned).
constexpr diagnostic verify_in(ir& g, verify_level level) {
  if (!g.error.ok()) return g.error;
  const std::int32_t n = g.size();
  if (n == 0 || g[n - 1].op != op_kind::output) {
    g.fail(rule::bad_argument, n - 1, "the graph does not end with its output node [rule valid-argument]");
    return g.error;
  }
  bool in_epilogue = false;
  // Through raw pointers: in constant evaluation a call (g[i], g.arg, g.meta) costs more than the
  // check it wraps, and this loop runs after every pass.
  const node* N = g.nodes.data();
  const std::int32_t* A = g.args.data();
  for (std::int32_t i = 0; i < n; ++i) {
    const node& nd = N[i];
    if (nd.op == op_kind::output && i != n - 1) {
      auto m = about(g, i); m << "a second output node"; fail(g, i, rule::bad_argument, m); return g.error;
    }
    if (level != verify_level::full) {
      for (const std::int32_t *a = A + nd.arg0, *e = a + nd.nargs; a != e; ++a)
        if (*a < -1 || *a >= i) {
          auto t = about(g, i); t << "argument '" << arg_name(g, *a) << "' is not defined before its use";
          fail(g, i, rule::use_before_definition, t); return g.error;
        }
    }
    if (level == verify_level::full) {
      tensor_meta m = nd.meta;  // what the op's rule gives
      if (!compute_meta(g, i, m)) return g.error;
      // Aliases (views, in-place results) must share the storage the rule names; fresh results
      // must not share a storage with their arguments; tuples have none.
      bool ok = same_meta_except_storage(m, nd.meta);
      if (ok && m.storage >= 0) ok = m.storage == nd.meta.storage;
      if (ok && m.storage == -1) ok = nd.meta.storage == -1;
      if (ok && m.storage == fresh) {
        ok = nd.meta.storage >= 0;
        for (const std::int32_t *a = A + nd.arg0, *e = a + nd.nargs; a != e; ++a)
          if (*a >= 0 && N[*a].meta.storage == nd.meta.storage) ok = false;
      }
      if (!ok) return fail_metadata(g, i, m);
    } else if (nd.meta.storage == fresh) {
      // The structure and links levels take the stored metadata as the rule's: of the checks above, only a
      // storage never assigned can fail. (No tensor_meta made per node here: in constant evaluation
      // even a default one costs as much as a loop iteration's work.)
      return fail_metadata(g, i, nd.meta);
    }
    if (g.phase == graph_phase::functional) {
      if (nd.op == op_kind::copy_) {
        if (nd.nargs < 1 || A[nd.arg0] < 0 || N[A[nd.arg0]].op != op_kind::placeholder) {
          auto t = about(g, i); t << "copy_ into '" << arg_name(g, nd.nargs > 0 ? A[nd.arg0] : -1) << "', which is not a graph input";
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
      // Views may follow it (PyTorch prints `return x[:, 1], x.t()` after `x[0] = 7`'s copy_, and
      // Inductor accepts that): they read the inputs as the epilogue leaves them.
      if (in_epilogue && nd.op != op_kind::output && !is_view_op(nd.op)) {
        auto t = about(g, i); t << "follows the copy_ epilogue; only copy_ into inputs, and views, may come after it";
        fail(g, i, rule::mutation_outside_epilogue, t); return g.error;
      }
    }
  }
  // Each subgraph of a control-flow node is a graph of its own, verified as one; its broken rule is
  // reported on the node that holds it.
  for (std::int32_t i = 0; i < n; ++i) {
    if (!is_control_op(N[i].op)) continue;
    for (int which = 0; which < 2; ++which) {
      const std::size_t k = static_cast<std::size_t>(N[i].aux + which);
      if (k >= g.subgraphs.size()) break;  // (control_meta names it at the full level)
      ir sub = g.subgraphs[k];
      const diagnostic d = verify_in(sub, level);
      if (d.ok()) continue;
      auto t = about(g, i);
      t << "in its " << subgraph_role(N[i].op, which) << ": " << d.message();
      fail(g, i, d.r, t);
      return g.error;
    }
  }
  if (level == verify_level::links) return g.error;
  // Unique names: an open-addressing table of node ids keyed by the names' hashes, linear in nodes
  // (sorting (hash, id) pairs cost ~5x more in constant evaluation, the names themselves far
  // more); names are compared only where full hashes meet. The first node, in program order,
  // whose name an earlier node already has is reported.
  std::size_t cap = 16;
  while (cap < 2 * static_cast<std::size_t>(n)) cap *= 2;
  detail::cvec<std::int32_t> slot(cap, -1);
  detail::cvec<std::uint64_t> hashes(static_cast<std::size_t>(n));
  std::int32_t* S = slot.data();
  std::uint64_t* H = hashes.data();
  for (std::int32_t i = 0; i < n; ++i) {
    const std::uint64_t h = detail::hash_name(N[i].name);
    H[i] = h;
    for (std::size_t k = static_cast<std::size_t>(h) & (cap - 1);; k = (k + 1) & (cap - 1)) {
      const std::int32_t other = S[k];
      if (other < 0) { S[k] = i; break; }
      if (H[other] == h && N[other].name == N[i].name) {
        auto t = about(g, i); t << "has the same name as node " << other;
        fail(g, i, rule::duplicate_name, t);
        return g.error;
      }
    }
  }
  return g.error;
}
}  // namespace detail

/// A graph ctfx::graph builds at compile time holds no subgraphs (it is frozen into fixed arrays,
/// which have none): `d`, or a broken rule naming the first control-flow node.
constexpr diagnostic refuse_subgraphs(const ir& g, diagnostic d) {
  if (!d.ok()) return d;
  for (std::int32_t i = 0; i < g.size(); ++i)
    if (is_control_op(g[i].op)) {
      ir t = g;
      auto m = detail::about(t, i);
      m << "holds subgraphs, which compile-time graphs do not take yet; run it with ctfx::runtime_plan";
      detail::fail(t, i, rule::bad_argument, m);
      return t.error;
    }
  return d;
}

/// Returns the first broken rule, naming the node; ok() when the graph is valid.
constexpr diagnostic verify(ir g, verify_level level = verify_level::full) { return detail::verify_in(g, level); }

/// The same on a graph in hand, without copying it; g is left as it was (the verdict is returned).
constexpr diagnostic verify_keeping(ir& g, verify_level level = verify_level::full) {
  const diagnostic kept = g.error;
  diagnostic d = detail::verify_in(g, level);
  g.error = kept;
  return d;
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
