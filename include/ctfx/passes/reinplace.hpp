// ctfx/passes/reinplace.hpp — reinplace_inplaceable_ops_core: run functional ops in place where no one
// can tell the difference (Inductor's fx_passes/reinplace.py, A.6 of the reference, made sound).
//
// Candidates, in program order: the ops of the inplace table (index_put, _unsafe_index_put,
// _generalized_scatter with should_reinplace_scatter, all_reduce, foreach lists, user op pairs), and
// functionalized user ops / user kernels (`auto_functionalized`), refined argument by argument: a
// reinplaced argument loses its clone, the others stay in the node's clone_mask, and the node becomes
// a direct `custom` call.
//
// Writing tensor `ma` in place (region W: ma, or the view chain of a scatter) is legal iff
//   - ma has a storage and no internal overlap;
//   - no other argument of the node reads what would be written (overlap test), except an identical
//     layout for elementwise ops (pytorch#198031, #197829: `x[1:] = x[:-1]` stays functional);
//   - no node after it reads an alias of ma that may overlap W (meta-only users and views do not read;
//     a copy_ into ma overwrites, it does not read) — checked over every storage merged into ma's by
//     earlier reinplacing;
//   - if ma lives in a graph input x (x itself, a view of x, or a value already reinplaced into x):
//     the program writes x back with a copy_ C, reads of x at or after C do not count, and the result
//     is not read at or after C except by C itself as an exact self-copy (so C disappears). This is the
//     #198094 fix (Inductor checks only the first copy_ and ignores what it writes), it rejects results
//     that would escape as aliases of an input (#195451), and it accepts the KV-cache pattern
//     `cache.view(...)[pos] = v` through a layout-preserving copy-back (#137416) and chains such as
//     scatter -> index_put -> copy-back (#195285) without special cases.
// Everything is linear in nodes + edges, except the scan of later reads of one storage, which stops
// at the first overlapping read (N·log N with the binary search in the common case); storages of a
// merged class that no later node reads are dropped from it as the candidates pass them.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <span>
#include <vector>
#include "../detail/cvec.hpp"
#include "../analysis/overlap.hpp"
#include "../analysis/users.hpp"
#include "../ops/meta.hpp"
#include "dce.hpp"
#include "inplace_tables.hpp"
#include "report.hpp"
#include "rewrite.hpp"

namespace ctfx {

// What extra checks may look at: the graph and its users (private CSR; see analysis/users.hpp).
struct reinplace_context {
  const ir* g = nullptr;
  detail::cvec<std::int32_t> user_off, user_ids;
  detail::cvec<std::int32_t> first_copy;  // per placeholder: its first copy_ epilogue node, or -1

  constexpr std::span<const std::int32_t> users(std::int32_t i) const {
    auto b = static_cast<std::size_t>(user_off[static_cast<std::size_t>(i)]);
    auto e = static_cast<std::size_t>(user_off[static_cast<std::size_t>(i) + 1]);
    return {user_ids.data() + b, e - b};
  }
};

namespace detail {

constexpr reinplace_context make_reinplace_context(const ir& g) {
  reinplace_context c;
  c.g = &g;
  const auto n = static_cast<std::size_t>(g.size());
  user_csr(g, c.user_off, c.user_ids);  // users in program order, a node that reads one twice once
  c.first_copy.assign(n, -1);
  const node* N = g.nodes.data();
  const std::int32_t* A = g.args.data();
  std::int32_t* first = c.first_copy.data();
  for (std::int32_t i = 0; i < g.size(); ++i)
    if (N[i].op == op_kind::copy_ && N[i].nargs > 0) {
      const std::int32_t dst = A[N[i].arg0];
      if (dst >= 0 && N[dst].op == op_kind::placeholder && first[dst] < 0) first[dst] = i;
    }
  return c;
}

// The root of a view chain (the first non-view node).
constexpr std::int32_t view_root(const ir& g, std::int32_t i) {
  while (i >= 0 && is_view_op(g[i].op)) i = g.arg(i, 0);
  return i;
}

// Inductor's is_node_realized: a buffer (input, output, user op call, list op, or an element of
// one), or a node whose users need realized inputs: fallback kernels (user ops, collectives, list
// ops) and as_strided, which Inductor's lowering realizes its input for (needs_realized_inputs), so
// `x[1:3] = s; x.as_strided(...).add_(1)` reinplaces the slice write as Inductor does.
constexpr bool needs_realized_inputs(op_kind k) {
  return k == op_kind::custom || k == op_kind::auto_functionalized || facts(k).family == op_family::collective ||
         is_list_op(k) || k == op_kind::as_strided || is_control_op(k);
}
constexpr bool is_buffer(const ir& g, std::int32_t i) {
  op_kind k = g[i].op;
  if (k == op_kind::placeholder || k == op_kind::output || k == op_kind::custom || k == op_kind::auto_functionalized ||
      is_list_op(k) || is_control_op(k))
    return true;
  return k == op_kind::getitem && is_buffer(g, g.arg(i, 0));
}
constexpr bool is_node_realized(const reinplace_context& c, std::int32_t i) {
  if (is_buffer(*c.g, i)) return true;
  for (auto u : c.users(i)) {
    op_kind k = (*c.g)[u].op;
    if (k == op_kind::output || needs_realized_inputs(k)) return true;
  }
  return false;
}

}  // namespace detail

struct no_check {
  static constexpr bool check(const reinplace_context&, std::int32_t) { return true; }
};

// A.7: reinplace a generalized scatter only where the functional form would not fuse anyway.
struct should_reinplace_scatter {
  static constexpr bool check(const reinplace_context& c, std::int32_t i) {
    const ir& g = *c.g;
    // as_strided / diagonal scatters always lower to mutation.
    for (detail::chain_cursor cur{g.params_of(g[i])}; !cur.done(); cur.next())
      if (cur.kind() == op_kind::as_strided || cur.kind() == op_kind::diagonal) return true;
    std::int32_t inp = g.arg(i, 0);
    if (detail::is_node_realized(c, inp) && detail::is_node_realized(c, i)) return true;
    // Copied back into the input (or the input a view of which it updates), directly, through views,
    // or through a single-user chain of in-place-able index ops (pytorch#195285).
    std::int32_t base = detail::view_root(g, inp);
    if (base < 0 || g[base].op != op_kind::placeholder) return false;
    std::int32_t cur = i;
    for (int guard = 0; guard < g.size(); ++guard) {
      auto us = c.users(cur);
      std::int32_t next = -1, live = 0;
      for (auto u : us) {
        const node& un = g[u];
        if (un.op == op_kind::copy_ && g.arg(u, 0) == base && g.arg(u, 1) == cur) return true;
        if (is_meta_only(un.op)) continue;
        ++live;
        next = u;
      }
      if (live != 1) return false;
      op_kind k = g[next].op;
      bool chain = is_view_op(k) ||
                   ((k == op_kind::index_put || k == op_kind::unsafe_index_put || k == op_kind::generalized_scatter) &&
                    g.arg(next, 0) == cur);
      if (!chain) return false;
      cur = next;
    }
    return false;
  }
};

namespace detail {

struct reinplace_verdict {
  reinplace_reason why = reinplace_reason::reinplaced;
  std::int32_t blocker = -1;
  bool layout_changed = false;
  std::int32_t old_input = -1;   // blocking_use: the graph input whose old value the blocker reads
  constexpr bool ok() const { return why == reinplace_reason::reinplaced; }
};

// The pass's working state over one graph.
struct reinplacer {
  const ir& g;
  const inplace_row* rows = nullptr;  // (not a std::span member: nvcc 13 then rejects the type as non-literal)
  std::size_t n_rows = 0;
  reinplace_context ctx;
  std::int32_t n = 0, S = 0;
  // Reads per original storage, in program order: (reader, the alias it reads).
  detail::cvec<std::int32_t> read_off;
  detail::cvec<std::pair<std::int32_t, std::int32_t>> reads;
  // Storage classes merged by reinplacing: union-find, members, the input a class lives in, and
  // whether every member keeps its own coordinates (no layout change).
  detail::cvec<std::int32_t> parent, class_input, member_next, member_last;
  detail::cvec<std::uint8_t> coords;  // (vector<bool> is not constexpr under clang 14 + libstdc++)
  // The rewrite.
  detail::cvec<op_kind> new_op;
  detail::cvec<std::int32_t> new_aux, repl;
  detail::cvec<std::uint32_t> clone_mask;
  detail::cvec<std::uint8_t> covered;
  detail::cvec<std::uint8_t> returns_self;  // reinplaced single-tensor op: its result is argument 0
  detail::cvec<custom_schema> extra_customs;
  std::int32_t first_row[static_cast<std::size_t>(op_kind::count_)]{};
  reinplace_log log;

  constexpr reinplacer(const ir& graph, std::span<const inplace_row> r)
      : g(graph), rows(r.data()), n_rows(r.size()), ctx(make_reinplace_context(graph)) {
    n = g.size();
    S = g.next_storage;
    auto N = static_cast<std::size_t>(n), SS = static_cast<std::size_t>(S);
    // Reads: every data argument of every node, except views (they read nothing), meta-only ops,
    // getitem (it selects, it does not read) and the destination of copy_ (written, not read).
    // (The graph's pools through raw pointers: each accessor call costs in constant evaluation.)
    const node* Nd = g.nodes.data();
    const std::int32_t* A = g.args.data();
    read_off.assign(SS + 1, 0);
    std::int32_t* off = read_off.data();
    auto each_read = [&](auto&& f) {
      for (std::int32_t i = 0; i < n; ++i) {
        const node& nd = Nd[i];
        const op_kind k = nd.op;
        if (is_view_op(k) || is_meta_only(k) || k == op_kind::getitem || k == op_kind::placeholder) continue;
        for (std::int32_t p = k == op_kind::copy_ ? 1 : 0; p < nd.nargs; ++p) {
          const std::int32_t a = A[nd.arg0 + p];
          if (a < 0 || Nd[a].meta.storage < 0) continue;
          f(Nd[a].meta.storage, i, a);
        }
      }
    };
    each_read([&](std::int32_t s, std::int32_t, std::int32_t) { ++off[s + 1]; });
    for (std::int32_t s = 0; s < S; ++s) off[s + 1] += off[s];
    detail::cvec<std::int32_t> fill(read_off.begin(), read_off.end() - 1);
    reads.assign(static_cast<std::size_t>(off[S]), {-1, -1});
    std::int32_t* at = fill.data();
    std::pair<std::int32_t, std::int32_t>* R = reads.data();
    each_read([&](std::int32_t s, std::int32_t i, std::int32_t a) { R[at[s]++] = {i, a}; });
    // Sized once, then filled by index: an appended element costs 2-4x more in constant evaluation.
    parent.resize(SS); class_input.assign(SS, -1); member_next.assign(SS, -1); member_last.resize(SS);
    coords.assign(SS, 1);
    std::int32_t* par = parent.data();
    std::int32_t* last = member_last.data();
    for (std::int32_t s = 0; s < S; ++s) { par[s] = s; last[s] = s; }
    for (std::int32_t i = 0; i < n; ++i)
      if (Nd[i].op == op_kind::placeholder && Nd[i].meta.storage >= 0) class_input[static_cast<std::size_t>(Nd[i].meta.storage)] = i;
    new_op.resize(N); new_aux.resize(N); repl.assign(N, -1); clone_mask.resize(N); covered.resize(N); returns_self.resize(N);
    op_kind* op = new_op.data();
    std::int32_t* aux = new_aux.data();
    std::uint32_t* cm = clone_mask.data();
    for (std::int32_t i = 0; i < n; ++i) { op[i] = Nd[i].op; aux[i] = Nd[i].aux; cm[i] = Nd[i].clone_mask; }
    // The first table row of each op kind (user ops are told apart by name in row_for).
    for (auto& slot : first_row) slot = -1;
    for (std::size_t k = n_rows; k-- > 0;) first_row[static_cast<std::size_t>(rows[k].functional)] = static_cast<std::int32_t>(k);
  }

  constexpr std::int32_t find(std::int32_t s) {
    std::int32_t r = s;
    while (parent[static_cast<std::size_t>(r)] != r) r = parent[static_cast<std::size_t>(r)];
    while (parent[static_cast<std::size_t>(s)] != r) { auto nx = parent[static_cast<std::size_t>(s)]; parent[static_cast<std::size_t>(s)] = r; s = nx; }
    return r;
  }
  // Merges storage `s` (a reinplaced result) into the class of `into`.
  constexpr void merge(std::int32_t s, std::int32_t into, bool same_coords) {
    std::int32_t a = find(s), b = find(into);
    if (a == b) return;
    auto A = static_cast<std::size_t>(a), B = static_cast<std::size_t>(b);
    parent[A] = b;
    member_next[static_cast<std::size_t>(member_last[B])] = a;
    member_last[B] = member_last[A];
    if (class_input[B] < 0) class_input[B] = class_input[A];
    coords[B] = coords[B] && coords[A] && same_coords ? 1 : 0;
  }

  // The index (into `reads`) of the first read of storage `s` by a node at or after `from`.
  constexpr std::int32_t reads_from(std::int32_t s, std::int32_t from) const {
    std::int32_t lo = read_off[static_cast<std::size_t>(s)], hi = read_off[static_cast<std::size_t>(s) + 1];
    while (lo < hi) {  // binary search: reads are in program order
      std::int32_t mid = lo + (hi - lo) / 2;
      if (reads[static_cast<std::size_t>(mid)].first < from) lo = mid + 1; else hi = mid;
    }
    return lo;
  }
  // The last node that reads storage `s`, or -1.
  constexpr std::int32_t last_read(std::int32_t s) const {
    std::int32_t e = read_off[static_cast<std::size_t>(s) + 1];
    return e > read_off[static_cast<std::size_t>(s)] ? reads[static_cast<std::size_t>(e - 1)].first : -1;
  }

  // The region a candidate writes: the whole mutated tensor, or the view a generalized scatter
  // writes — derived only when an overlap test needs it (walking the view chain costs more than
  // most candidates' other checks).
  struct region {
    const ir* graph = nullptr;
    std::int32_t scatter = -1;  // the scatter whose view is still to derive, or -1
    tensor_meta m{};
    constexpr const tensor_meta& get() {
      if (scatter >= 0) {
        ir& scratch = const_cast<ir&>(*graph);  // scatter_view_meta reports errors only on malformed nodes
        const node& nd = (*graph)[scatter];
        tensor_meta view{};
        if (scatter_view_meta(scratch, scatter, nd.op, m, graph->params_of(nd), view)) { view.storage = m.storage; m = view; }
        scatter = -1;
      }
      return m;
    }
  };

  // Whether node u is node v or one of its transitive arguments (a walk back from v; only asked
  // when a candidate is blocked by a read of a graph input).
  constexpr bool feeds(std::int32_t u, std::int32_t v) const {
    if (u == v) return true;
    if (v < u) return false;
    std::vector<std::uint8_t> seen(static_cast<std::size_t>(v) + 1, 0);
    std::vector<std::int32_t> todo{v};
    while (!todo.empty()) {
      const std::int32_t x = todo.back();
      todo.pop_back();
      for (auto a : g.args_of(x)) {
        if (a == u) return true;
        if (a > u && !seen[static_cast<std::size_t>(a)]) {
          seen[static_cast<std::size_t>(a)] = 1;
          todo.push_back(a);
        }
      }
    }
    return false;
  }

  // The first read of storage `s` by a node in (after, before) of an alias that may overlap `w`.
  constexpr std::int32_t first_read(std::int32_t s, std::int32_t after, std::int32_t before, region* w) const {
    for (std::int32_t k = reads_from(s, after + 1); k < read_off[static_cast<std::size_t>(s) + 1]; ++k) {
      auto [u, a] = reads[static_cast<std::size_t>(k)];
      if (u >= before) break;
      if (!w || may_overlap(g.meta(a), w->get())) return u;
    }
    return -1;
  }

  // Is writing `ma` (argument position `pos` of node i, region `w`) in place legal? `results` are the
  // nodes that hold the functional result for ma. `skip` masks argument positions that do not count
  // as readers (ma's own, elementwise twins).
  constexpr reinplace_verdict legal(std::int32_t i, std::int32_t pos, std::int32_t ma, region& w,
                                    std::span<const std::int32_t> results, std::uint64_t skip, bool elementwise) {
    reinplace_verdict v{};
    auto fail = [&](reinplace_reason r, std::int32_t b) { v.why = r; v.blocker = b; return v; };
    if (ma < 0 || g.meta(ma).storage < 0) return fail(reinplace_reason::no_storage, -1);
    const tensor_meta& mm = g.meta(ma);
    if (has_internal_overlap(mm)) return fail(reinplace_reason::internal_overlap, ma);
    const std::int32_t s = mm.storage, root = find(s);
    // Other arguments of this node that read what would be written.
    auto a = g.args_of(i);
    for (std::size_t k = 0; k < a.size(); ++k) {
      if (static_cast<std::int32_t>(k) == pos || (k < 64 && ((skip >> k) & 1u))) continue;
      if (a[k] < 0 || g.meta(a[k]).storage < 0 || find(g.meta(a[k]).storage) != root) continue;
      if (elementwise && g.meta(a[k]).same_layout(mm)) continue;
      if (may_overlap(g.meta(a[k]), w.get())) return fail(reinplace_reason::read_by_other_argument, a[k]);
    }
    // The result takes ma's layout; views of it would change.
    for (auto r : results) {
      if (g.meta(r).same_layout(mm)) continue;
      v.layout_changed = true;
      for (auto u : ctx.users(r))
        if (is_view_op(g[u].op)) return fail(reinplace_reason::layout_change, u);
    }
    // Inputs: only with a copy_ epilogue; reads after it do not count.
    const std::int32_t inp = class_input[static_cast<std::size_t>(root)];
    std::int32_t cut = n;
    if (inp >= 0) {
      cut = ctx.first_copy[static_cast<std::size_t>(inp)];
      if (cut < 0 || cut < i) return fail(reinplace_reason::missing_epilogue, inp);
    }
    const bool same_coords = coords[static_cast<std::size_t>(root)] != 0;
    // Members no node after i reads are unlinked from the class on the way: candidates come in
    // program order, so they can never block again. A chain of k reinplaced results in one buffer
    // is then k short walks, not k walks of a growing class.
    for (std::int32_t prev = -1, t = root; t >= 0;) {
      const std::int32_t next = member_next[static_cast<std::size_t>(t)];
      if (prev >= 0 && last_read(t) <= i) {
        member_next[static_cast<std::size_t>(prev)] = next;
        if (member_last[static_cast<std::size_t>(root)] == t) member_last[static_cast<std::size_t>(root)] = prev;
        t = next;
        continue;
      }
      std::int32_t u = first_read(t, i, cut, (t == s || same_coords) ? &w : nullptr);
      if (u >= 0) {
        // A read of the input itself that does not feed the value written back: the program reads
        // the input's old value after computing its new one (the report warns).
        if (inp >= 0 && t == g.meta(inp).storage && !feeds(u, g.arg(cut, 1))) v.old_input = inp;
        return fail(reinplace_reason::blocking_use, u);
      }
      prev = t;
      t = next;
    }
    // Values already reinplaced into the input (other members of the class) must not be read at or
    // after the copy_ either: they would see this write (found by the differential fuzzer: a
    // scatter reinplaced into x, then `_foreach_mul([scatter, ...])` in place, then
    // `x.copy_(scatter)` copied the multiplied values back).
    if (inp >= 0) {
      const std::int32_t in_s = g.meta(inp).storage;
      for (std::int32_t t = root; t >= 0; t = member_next[static_cast<std::size_t>(t)]) {
        if (t == in_s) {
          // The input itself may be read after the copy_ (it then holds what the copy_ wrote), but
          // a copy_ whose source is the input (or a view of it) would copy this write back.
          for (std::int32_t k = reads_from(t, cut); k < read_off[static_cast<std::size_t>(t) + 1]; ++k) {
            auto [u, m] = reads[static_cast<std::size_t>(k)];
            if (g[u].op == op_kind::copy_ && g.arg(u, 1) == m) return fail(reinplace_reason::observed_after_epilogue, u);
          }
          continue;
        }
        std::int32_t u = first_read(t, cut - 1, n, nullptr);
        if (u >= 0) return fail(reinplace_reason::observed_after_epilogue, u);
      }
    }
    // The result may not be observed at or after the copy_ that overwrites the input, except by that
    // copy_ itself as an exact self-copy (which then disappears).
    if (inp >= 0) {
      for (auto r : results) {
        const std::int32_t rs = g.meta(r).storage;
        if (rs < 0) continue;
        for (std::int32_t k = reads_from(rs, cut); k < read_off[static_cast<std::size_t>(rs) + 1]; ++k) {
          auto [u, m] = reads[static_cast<std::size_t>(k)];
          if (g[u].op == op_kind::output) {
            // A view made after the copy_ is the program's own alias of the input (AOTAutograd
            // regenerates an output that is a view of a mutated input from its new value, after
            // the epilogue: `x[0] = 7; return x.t()`): eager returns it aliasing the input too.
            // A view made before it (`y = x.clone()` removed as a no-op, `return y.t()`) would be a
            // new alias (pytorch#195451).
            if (m > cut && is_view_op(g[m].op)) continue;
            return fail(reinplace_reason::result_escapes, u);
          }
          if (u != cut) return fail(reinplace_reason::observed_after_epilogue, u);
          const tensor_meta& now = v.layout_changed ? mm : g.meta(m);
          std::int32_t dst = g.arg(u, 0);
          if (g.arg(u, 1) != m || !now.same_layout(g.meta(dst)) || find(g.meta(dst).storage) != root)
            return fail(reinplace_reason::view_copy_back_layout, u);
        }
      }
    }
    return v;
  }

  constexpr void commit(std::int32_t ma, std::span<const std::int32_t> results, bool layout_changed) {
    for (auto r : results)
      if (g.meta(r).storage >= 0) merge(g.meta(r).storage, g.meta(ma).storage, !layout_changed);
  }

  // ----- candidates -----

  constexpr void record(std::int32_t i, std::int32_t pos, std::int32_t ma, std::int32_t tensors, sym_expr bytes,
                        const reinplace_verdict& v, reinplace_trigger t, bool missed, std::int32_t clones, bool required) {
    log.items.emplace_back();  // filled in place: a candidate holds three names
    reinplace_candidate& c = log.items.back();
    c.node = i;
    c.name = g[i].name;
    c.op = g[i].op;
    c.arg = pos;
    if (ma >= 0) c.arg_name = g[ma].name;
    c.tensors = tensors;
    c.reinplaced = v.ok();
    c.why = v.why;
    c.blocker = v.blocker;
    if (v.blocker >= 0) c.blocker_name = g[v.blocker].name;
    c.bytes = bytes;
    c.static_bytes = bytes.is_static() ? bytes.value() : 0;
    c.trigger = t;
    c.missed = missed;
    c.clones = clones;
    c.required = required;
    if (v.old_input >= 0) {
      c.reads_old_input = true;
      c.input_name = g[v.old_input].name;
    }
  }

  static constexpr sym_expr bytes_of(const tensor_meta& m) { return m.numel() * sym_expr(static_cast<index_t>(size_of(m.dt))); }

  // getitem(i, k) users of node i.
  constexpr void getitems(std::int32_t i, std::int32_t k, detail::cvec<std::int32_t>& out) const {
    for (auto u : ctx.users(i))
      if (g[u].op == op_kind::getitem && g[u].aux == k) out.push_back(u);
  }
  constexpr bool any_required(std::span<const std::int32_t> rs) {
    bool r = false;
    for (auto x : rs) { r = r || g[x].require_inplace; covered[static_cast<std::size_t>(x)] = 1; }
    return r;
  }

  // index_put, _unsafe_index_put, generalized scatter, all_reduce, broadcast, halo_exchange: one
  // mutated argument (arg 0).
  constexpr void single(std::int32_t i, const inplace_row& row) {
    const std::int32_t ma = g.arg(i, 0);
    region w{&g, g[i].op == op_kind::generalized_scatter ? i : -1, g.meta(ma)};
    std::int32_t res[1] = {i};
    reinplace_verdict v = legal(i, 0, ma, w, res, 0, false);
    bool profitable = true;
    if (v.ok() && row.extra && !row.extra(ctx, i)) { v.why = reinplace_reason::profitability; profitable = false; }
    if (v.ok()) {
      commit(ma, res, v.layout_changed);
      new_op[static_cast<std::size_t>(i)] = row.inplace;
      const op_kind k = row.inplace;  // (a user pair such as add -> add_ is derived: add_ may not fit)
      returns_self[static_cast<std::size_t>(i)] = k == op_kind::generalized_scatter_ || k == op_kind::index_put_ ||
                                                   k == op_kind::unsafe_index_put_ || k == op_kind::scatter_ || facts(k).family == op_family::collective;
    }
    covered[static_cast<std::size_t>(i)] = 1;
    record(i, -1, ma, 1, bytes_of(g.meta(ma)), v, reinplace_trigger::aten, !v.ok() && profitable, v.ok() ? 0 : 1,
           g[i].require_inplace);
  }

  // All-or-nothing over several mutated tensors: foreach lists and user op pairs.
  constexpr void group(std::int32_t i, const inplace_row& row, std::span<const std::int32_t> pos,
                       std::span<const std::int32_t> result_index, reinplace_trigger t, std::int32_t twin) {
    const auto a = g.args_of(i);
    reinplace_verdict v{};
    sym_expr bytes(0);
    for (auto p : pos) bytes = bytes + bytes_of(g.meta(a[static_cast<std::size_t>(p)]));
    // Elements must not alias each other.
    for (std::size_t x = 0; x < pos.size() && v.ok(); ++x)
      for (std::size_t y = 0; y < x && v.ok(); ++y) {
        auto sx = g.meta(a[static_cast<std::size_t>(pos[x])]).storage, sy = g.meta(a[static_cast<std::size_t>(pos[y])]).storage;
        if (sx >= 0 && sy >= 0 && find(sx) == find(sy)) { v.why = reinplace_reason::aliasing_list_elements; v.blocker = a[static_cast<std::size_t>(pos[x])]; }
      }
    detail::cvec<std::int32_t> results;
    detail::cvec<std::int32_t> all_results;
    bool required = g[i].require_inplace;
    detail::cvec<std::uint8_t> changed;
    for (std::size_t e = 0; e < pos.size() && v.ok(); ++e) {
      results.clear();
      getitems(i, result_index[e], results);
      required = any_required(results) || required;
      std::uint64_t skip = 0;
      if (row.foreach) {  // x.add_(x) at one position is elementwise-safe
        auto k = static_cast<std::size_t>(g[i].aux);
        std::size_t other = static_cast<std::size_t>(pos[e]) + k;
        if (other < a.size() && g.meta(a[other]).same_layout(g.meta(a[static_cast<std::size_t>(pos[e])]))) skip |= 1ull << other;
      }
      std::int32_t ma = a[static_cast<std::size_t>(pos[e])];
      region w{&g, -1, g.meta(ma)};
      reinplace_verdict ve = legal(i, pos[e], ma, w, results, skip, row.elementwise);
      if (!ve.ok()) { v = ve; break; }
      changed.push_back(ve.layout_changed ? 1 : 0);
    }
    if (v.ok() && row.extra && !row.extra(ctx, i)) v.why = reinplace_reason::profitability;
    if (v.ok()) {
      for (std::size_t e = 0; e < pos.size(); ++e) {
        results.clear();
        getitems(i, result_index[e], results);
        std::int32_t ma = a[static_cast<std::size_t>(pos[e])];
        commit(ma, results, changed[e] != 0);
        for (auto r : results) repl[static_cast<std::size_t>(r)] = ma;
      }
      new_op[static_cast<std::size_t>(i)] = row.inplace;
      if (twin >= 0) new_aux[static_cast<std::size_t>(i)] = twin;
    }
    covered[static_cast<std::size_t>(i)] = 1;
    record(i, -1, pos.empty() ? -1 : a[static_cast<std::size_t>(pos[0])], static_cast<std::int32_t>(pos.size()), bytes, v, t,
           !v.ok() && v.why != reinplace_reason::profitability, v.ok() ? 0 : static_cast<std::int32_t>(pos.size()), required);
  }

  // auto_functionalized / user kernels: refine argument by argument (A.6.5).
  constexpr void refine(std::int32_t i, const inplace_row* facts) {
    const custom_schema& s = g.customs[static_cast<std::size_t>(g[i].aux)];
    const auto a = g.args_of(i);
    const reinplace_trigger t = s.user_kernel ? reinplace_trigger::user_kernel : reinplace_trigger::auto_func;
    const bool elementwise = facts && facts->elementwise;
    const std::uint32_t list = facts && facts->list && facts->inplace == op_kind::count_ ? facts->mutated : 0u;
    detail::cvec<std::int32_t> done_roots;
    detail::cvec<std::int32_t> results;
    std::uint32_t clones = 0;
    // The k-th mutated argument's new value is getitem(i, n_returns + k).
    std::int32_t kth[32]{};
    int nm = 0;
    for (int p = 0; p < s.n_args && p < 32; ++p)
      if ((s.mutates >> p) & 1u) kth[p] = nm++;
    bool list_done = false;
    for (int p = 0; p < s.n_args && p < 32; ++p) {
      if (!((s.mutates >> p) & 1u)) continue;
      // One candidate per argument, or one for a whole list argument.
      std::int32_t members[32]{};
      int cnt = 0;
      if ((list >> p) & 1u) {
        if (list_done) continue;
        list_done = true;
        for (int q = 0; q < s.n_args && q < 32; ++q) if ((list >> q) & 1u) members[cnt++] = q;
      } else {
        members[cnt++] = p;
      }
      reinplace_verdict v{};
      sym_expr bytes(0);
      bool attempt = true;
      for (int e = 0; e < cnt; ++e) {
        std::int32_t ma = a[static_cast<std::size_t>(members[e])];
        bytes = bytes + (ma >= 0 ? bytes_of(g.meta(ma)) : sym_expr(0));
        if (ma >= 0 && g.meta(ma).storage >= 0)
          for (auto r : done_roots) if (r == find(g.meta(ma).storage)) attempt = false;
      }
      for (int e = 0; e < cnt && v.ok(); ++e)
        for (int f = 0; f < e && v.ok(); ++f) {
          auto sx = g.meta(a[static_cast<std::size_t>(members[e])]).storage, sy = g.meta(a[static_cast<std::size_t>(members[f])]).storage;
          if (find(sx) == find(sy)) { v.why = reinplace_reason::aliasing_list_elements; v.blocker = a[static_cast<std::size_t>(members[e])]; }
        }
      // Other mutated arguments are cloned or reinplaced into another storage: they are not readers.
      std::uint64_t skip = 0;
      for (int q = 0; q < s.n_args && q < 32; ++q) if ((s.mutates >> q) & 1u) skip |= 1ull << q;
      bool required = false;
      detail::cvec<std::uint8_t> changed;
      if (!attempt) { v.why = reinplace_reason::same_storage_reinplaced; }
      for (int e = 0; e < cnt && v.ok(); ++e) {
        results.clear();
        getitems(i, s.n_returns + kth[members[e]], results);
        required = any_required(results) || required;
        std::int32_t ma = a[static_cast<std::size_t>(members[e])];
        region w{&g, -1, g.meta(ma)};
        reinplace_verdict ve = legal(i, members[e], ma, w, results, skip, elementwise);
        if (!ve.ok()) { v = ve; break; }
        changed.push_back(ve.layout_changed ? 1 : 0);
      }
      for (int e = 0; e < cnt; ++e) {  // requirements on elements not reached above
        results.clear();
        getitems(i, s.n_returns + kth[members[e]], results);
        required = any_required(results) || required;
      }
      if (v.ok()) {
        for (int e = 0; e < cnt; ++e) {
          std::int32_t ma = a[static_cast<std::size_t>(members[e])];
          results.clear();
          getitems(i, s.n_returns + kth[members[e]], results);
          commit(ma, results, changed[static_cast<std::size_t>(e)] != 0);
          for (auto r : results) repl[static_cast<std::size_t>(r)] = ma;
          done_roots.push_back(find(g.meta(ma).storage));
        }
      } else {
        for (int e = 0; e < cnt; ++e) clones |= 1u << members[e];
      }
      record(i, members[0], a[static_cast<std::size_t>(members[0])], cnt, bytes, v, t, !v.ok() && attempt,
             v.ok() ? 0 : cnt, required || g[i].require_inplace);
    }
    covered[static_cast<std::size_t>(i)] = 1;
    new_op[static_cast<std::size_t>(i)] = op_kind::custom;
    clone_mask[static_cast<std::size_t>(i)] = clones;
  }

  constexpr const inplace_row* row_for(std::int32_t i) const {
    const node& nd = g[i];
    const std::int32_t first = first_row[static_cast<std::size_t>(nd.op)];
    if (first < 0 && nd.op != op_kind::auto_functionalized) return nullptr;
    if (first >= 0 && nd.op != op_kind::custom && nd.op != op_kind::auto_functionalized) return &rows[first];
    for (std::size_t k = 0; k < n_rows; ++k) {
      const inplace_row& r = rows[k];
      if (r.functional != nd.op) continue;
      if (nd.op != op_kind::custom && nd.op != op_kind::auto_functionalized) return &r;
      if (r.user_name == g.customs[static_cast<std::size_t>(nd.aux)].name) return &r;
    }
    if (nd.op == op_kind::auto_functionalized)  // user facts (elementwise, lists) are keyed as custom
      for (std::size_t k = 0; k < n_rows; ++k)
        if (const inplace_row& r = rows[k]; r.functional == op_kind::custom && r.user_name == g.customs[static_cast<std::size_t>(nd.aux)].name) return &r;
    return nullptr;
  }

  constexpr std::int32_t twin_index(const custom_schema& t) {
    for (std::size_t k = 0; k < g.customs.size(); ++k) if (g.customs[k].name == t.name) return static_cast<std::int32_t>(k);
    for (std::size_t k = 0; k < extra_customs.size(); ++k)
      if (extra_customs[k].name == t.name) return static_cast<std::int32_t>(g.customs.size() + k);
    extra_customs.push_back(t);
    return static_cast<std::int32_t>(g.customs.size() + extra_customs.size() - 1);
  }

  constexpr void run() {
    for (std::int32_t i = 0; i < n; ++i) {
      const node& nd = g[i];
      if (nd.op == op_kind::auto_functionalized) { refine(i, row_for(i)); continue; }
      const inplace_row* row = row_for(i);
      if (!row || row->inplace == op_kind::count_) continue;
      if (row->foreach) {
        detail::cvec<std::int32_t> pos, idx;
        for (std::int32_t k = 0; k < nd.aux; ++k) { pos.push_back(k); idx.push_back(k); }
        group(i, *row, pos, idx, reinplace_trigger::foreach, -1);
      } else if (nd.op == op_kind::custom) {
        const custom_schema& s = g.customs[static_cast<std::size_t>(nd.aux)];
        if (s.mutates != 0) continue;  // already in place
        detail::cvec<std::int32_t> pos, idx;
        for (int p = 0; p < 32; ++p) if ((row->mutated >> p) & 1u) { idx.push_back(static_cast<std::int32_t>(pos.size())); pos.push_back(p); }
        if (static_cast<std::int32_t>(pos.size()) != s.n_returns) continue;  // results must map onto mutated args
        group(i, *row, pos, idx, reinplace_trigger::user_pair, twin_index(row->twin));
      } else {
        single(i, *row);
      }
    }
  }
};

// Builds the rewritten graph: new ops, getitems replaced by the arguments they alias, copy_ epilogues
// that became self-copies dropped, metadata recomputed (fresh results keep their storage ids).
constexpr ir rebuild(const ir& g, reinplacer& R) {
  ir out;
  out.nodes.reserve(g.nodes.size());
  out.args.reserve(g.args.size());
  out.params.reserve(g.params.size());
  out.syms = g.syms;
  out.customs = g.customs;
  out.subgraphs = g.subgraphs;
  for (const auto& c : R.extra_customs) out.customs.push_back(c);
  out.next_storage = g.next_storage;
  out.phase = graph_phase::reinplaced;
  out.error = g.error;
  const auto n = static_cast<std::size_t>(g.size());
  detail::cvec<std::int32_t> map_of(n, -1);
  // kept[i]: node i's image has exactly i's metadata (storage included) — known without comparing.
  detail::cvec<std::uint8_t> kept_of(n, 0);
  std::int32_t* map = map_of.data();
  std::uint8_t* kept = kept_of.data();
  const node* N = g.nodes.data();
  const std::int32_t* A = g.args.data();
  detail::cvec<std::int32_t> a;
  for (std::int32_t i = 0; i < g.size(); ++i) {
    const auto I = static_cast<std::size_t>(i);
    if (R.repl[I] >= 0) { map[i] = map[R.repl[I]]; continue; }  // (not kept: another node's metadata)
    const op_kind new_op = R.new_op[I];
    const std::int32_t new_aux = R.new_aux[I];
    a.clear();
    // An op that keeps its kind, over arguments whose metadata did not change, keeps its
    // metadata (the input is verified: its metadata is what the rule computes); only reinplaced
    // nodes and what they reach are derived again.
    bool same = new_op == N[i].op && new_aux == N[i].aux;
    for (const std::int32_t *x = A + N[i].arg0, *e = x + N[i].nargs; x != e; ++x) {
      const std::int32_t old = *x;
      a.push_back(old < 0 ? old : map[old]);
      // (A tuple's metadata says nothing of its elements: its getitems are derived again.)
      if (same && old >= 0 && !kept[old]) same = N[old].meta.storage >= 0 && same_meta_and_storage(out.meta(map[old]), N[old].meta);
    }
    if (new_op == op_kind::copy_) {
      const tensor_meta& d = out.meta(a[0]);
      const tensor_meta& s = out.meta(a[1]);
      if (d.storage == s.storage && d.same_layout(s)) { map[i] = a[0]; continue; }
    }
    // The old node copied once, into the graph, and given its new op there.
    std::int32_t id = out.append(N[i], a, g.params_of(N[i]));
    node& nd = out.nodes.data()[id];
    nd.op = new_op;
    nd.aux = new_aux;
    nd.clone_mask = R.clone_mask[I];
    map[i] = id;
    if (same) {
      kept[i] = 1;
      continue;
    }
    // A reinplaced index_put_ / scatter_ / all_reduce_ returns its argument 0 (ops/meta.hpp), whose
    // checks its functional form passed; the verifier after the pass derives it again.
    if (R.returns_self[I]) {
      out[id].meta = out.meta(a[0]);
      continue;
    }
    tensor_meta m{};
    if (!compute_meta(out, id, m)) return out;
    if (m.storage == fresh) m.storage = N[i].meta.storage >= 0 ? N[i].meta.storage : out.fresh_storage();
    out[id].meta = m;
    // A tuple (a user op's results, a list op's) is kept only with its arguments: its getitems'
    // layouts follow the arguments' (an updated argument's clone keeps its strides and offset).
    kept[i] = m.storage >= 0 && same_meta_and_storage(m, N[i].meta) ? 1 : 0;
  }
  return out;
}

constexpr void check_required(ir& out, const ir& g, const reinplacer& R) {
  bool any = false;  // (most graphs mark nothing: one pass over the nodes, then done)
  const node* N = g.nodes.data();
  for (std::int32_t i = 0; i < g.size() && !any; ++i) any = N[i].require_inplace;
  if (!any) return;
  for (const auto& c : R.log.items) {
    if (!c.required || c.reinplaced) continue;
    msg m = about(g, c.node);
    m << "require_inplace, but it stays functional";
    if (c.arg >= 0) m << " (argument " << c.arg << " '" << c.arg_name.view() << "')";
    m << ": " << explain(c.why);
    if (c.blocker >= 0) m << "; blocked by '" << c.blocker_name.view() << "'";
    out.error = diagnostic{};
    fail(out, -1, rule::require_inplace, m);
    out.error.node = c.node;
    out.error.locate({"", g[c.node].required_line, 0});
    return;
  }
  for (std::int32_t i = 0; i < g.size(); ++i) {
    const node& nd = g[i];
    if (!nd.require_inplace || R.covered[static_cast<std::size_t>(i)] || is_mutating(nd.op) || nd.op == op_kind::copy_) continue;
    if (nd.op == op_kind::custom && g.customs[static_cast<std::size_t>(nd.aux)].mutates) continue;
    msg m = about(g, i);
    m << "require_inplace, but " << explain(reinplace_reason::not_inplaceable)
      << " (add a pair to the inplace table for user ops)";
    out.error = diagnostic{};
    fail(out, i, rule::require_inplace, m);
    out.error.locate({"", nd.required_line, 0});
    return;
  }
}

constexpr ir reinplace_impl(const ir& g, std::span<const inplace_row> rows, reinplace_log* log) {
  if (!g.error.ok()) return g;
  reinplacer R(g, rows);
  R.run();
  ir out = rebuild(g, R);
  if (out.error.ok()) check_required(out, g, R);
  if (log) *log = static_cast<reinplace_log&&>(R.log);
  return out;
}

}  // namespace detail

// The pass (a constexpr ir -> ir, usable with ctfx::stage). Table: the inplace table's type
// (passes/inplace_tables.hpp); the result is in graph_phase::reinplaced.
template <class Table = builtin_inplace_table>
constexpr ir reinplace_inplaceable_ops_core(ir g) {
  constexpr auto& rows = inplace_rows<Table>;
  return detail::reinplace_impl(g, std::span<const inplace_row>(rows.data(), rows.size()), nullptr);
}

// The same, also returning what was decided about each candidate.
template <class Table = builtin_inplace_table>
constexpr ir reinplace_with_log(const ir& g, reinplace_log& log) {
  constexpr auto& rows = inplace_rows<Table>;
  return detail::reinplace_impl(g, std::span<const inplace_row>(rows.data(), rows.size()), &log);
}

// The report of a graph source (anything with a static constexpr get(), e.g. a graph_def or a
// stage), frozen for static_assert: `constexpr auto r = ctfx::reinplace_report_of<G>();`.
namespace detail {
template <class Source, class Table>
constexpr std::size_t report_size() {
  reinplace_log log;
  (void)reinplace_with_log<Table>(Source::get(), log);
  return log.items.size();
}
template <class Source, class Table>
inline constexpr std::size_t report_size_v = report_size<Source, Table>();
template <class Source, class Table>
constexpr auto make_report() {
  reinplace_log log;
  const ir g = Source::get();
  std::vector<unused_value> unused;
  find_unused_values(g, unused);
  (void)reinplace_with_log<Table>(g, log);
  log.unused = static_cast<std::vector<unused_value>&&>(unused);
  return freeze_report<report_size_v<Source, Table>>(log);
}
}  // namespace detail

template <class Source, class Table = builtin_inplace_table>
constexpr auto reinplace_report_of() {
  constexpr auto r = detail::make_report<Source, Table>();
  return r;
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
