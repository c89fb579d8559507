// ctfx/ops/result_layout.hpp — the strides PyTorch gives a fresh result: elementwise ops (and index,
// over its restrided source: ops/index.hpp) keep the stride order of their operands, preserve_format
// copies keep a dense layout or the stride order of a non-dense one, and cat is channels-last when
// all its inputs suggest it. These mirror the rules
// FakeTensor runs for Inductor's graphs (torch/_prims_common:
// compute_elementwise_output_logical_to_physical_perm, is_contiguous, is_non_overlapping_and_dense;
// torch/_prims/broadcast_in_dim; torch/_refs/empty_like; ATen's cat meta function with
// cat_compute_output_memory_format and c10's suggest_memory_format), so a graph PyTorch printed
// with strides checks out as printed.
//
// With symbolic extents and strides the same rules run on what is known of the symbols
// (ops/layout_compare.hpp); where that does not decide the order, the checked forms
// (elementwise_result(g, id, ...)) take the order PyTorch printed for the node, when the graph was
// read from FX text, under `order` symbols that a run checks against its sizes (printed_order), and
// otherwise report the node.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <type_traits>
#include "meta_util.hpp"
#include "layout_compare.hpp"

namespace ctfx::detail {

// Whether every extent and stride is a known integer.
constexpr bool static_layout(const tensor_meta& m) {
  for (int i = 0; i < m.rank; ++i)
    if (m.size[i].n != 0 || m.size[i].overflow || m.stride[i].n != 0 || m.stride[i].overflow) return false;
  return true;
}

// The extents and strides of one operand seen at the result's rank: integers (a static layout) or
// symbolic expressions, compared through int_compare or sym_compare (ops/layout_compare.hpp).
template <class V>
struct layout_of {
  int rank = 0;
  V size[max_rank]{};
  V stride[max_rank]{};
};
using int_layout = layout_of<index_t>;
using sym_layout = layout_of<sym_expr>;

constexpr int_layout int_of(const tensor_meta& m) {
  int_layout r;
  r.rank = m.rank;
  for (int i = 0; i < m.rank; ++i) { r.size[i] = m.size[i].c; r.stride[i] = m.stride[i].c; }
  return r;
}
constexpr sym_layout sym_of(const tensor_meta& m) {
  sym_layout r;
  r.rank = m.rank;
  for (int i = 0; i < m.rank; ++i) { r.size[i] = m.size[i]; r.stride[i] = m.stride[i]; }
  return r;
}

// prims.broadcast_in_dim(x, shape, trailing dims): a dimension broadcast from 1 gets stride 0; a new
// leading dimension gets 0 when it is longer than 1, else the stride that spans the next dimension.
// (A symbolic extent broadcasts only as an equal one: broadcast_into accepted the operands.)
template <class V>
constexpr layout_of<V> broadcast_to(const layout_of<V>& x, const layout_of<V>& shape) {
  layout_of<V> r;
  r.rank = shape.rank;
  const int lead = shape.rank - x.rank;
  for (int i = 0; i < shape.rank; ++i) {
    r.size[i] = shape.size[i];
    if (i >= lead) {
      const int j = i - lead;
      r.stride[i] = x.size[j] == V(1) && !(shape.size[i] == V(1)) ? V(0) : x.stride[j];
    } else if (!(shape.size[i] == V(1))) {
      r.stride[i] = V(0);
    } else {
      r.stride[i] = x.rank == 0 ? V(1) : x.stride[0] * x.size[0];
    }
  }
  return r;
}

// Dimensions (innermost first) laid out densely: each stride the product of the extents inside it,
// skipping extent-1 dimensions. An extent that may or may not be 1 is skipped only when its stride
// is the expected one anyway.
template <class C, class V>
constexpr tri dense_in(const C& c, const layout_of<V>& x, const int* inner_first) {
  V expect(1);
  for (int k = 0; k < x.rank; ++k) {
    const int d = inner_first[k];
    const tri one = c.eq(x.size[d], V(1));
    if (one == tri::yes) continue;
    const tri at = c.eq(x.stride[d], expect);
    if (at == tri::unknown) return tri::unknown;
    if (at == tri::no) return one == tri::no ? tri::no : tri::unknown;
    expect = expect * x.size[d];
  }
  return tri::yes;
}

// torch._prims_common.is_contiguous: row-major, ignoring extent-1 dimensions (and any tensor of
// fewer than two elements).
template <class C, class V>
constexpr tri row_major(const C& c, const layout_of<V>& x) {
  int order[max_rank]{};
  for (int i = 0; i < x.rank; ++i) order[i] = x.rank - 1 - i;
  const tri dense = dense_in(c, x, order);
  if (dense == tri::yes) return tri::yes;
  V numel(1);
  for (int i = 0; i < x.rank; ++i) numel = numel * x.size[i];
  const tri small = c.ge(V(1), numel);
  return small == tri::yes ? tri::yes : small == tri::no ? dense : tri::unknown;
}

// is_channels_last_contiguous_2d: a 4-d tensor whose dimensions are laid out C, W, H, N innermost first.
template <class C, class V>
constexpr tri channels_last(const C& c, const layout_of<V>& x) {
  if (x.rank != 4) return tri::no;
  constexpr int order[4] = {1, 3, 2, 0};
  return dense_in(c, x, order);
}

// is_non_overlapping_and_dense: the dimensions longer than 1, by stride, are row-major in some order.
template <class C, class V>
constexpr tri non_overlapping_and_dense(const C& c, const layout_of<V>& x) {
  if (x.rank == 1) {
    const tri small = c.ge(V(1), x.size[0]);
    return small == tri::yes ? tri::yes : tri_and(tri::yes, small == tri::no ? c.eq(x.stride[0], V(1)) : tri::unknown);
  }
  int perm[max_rank]{};
  for (int i = 0; i < x.rank; ++i) perm[i] = i;
  bool decided = true;
  auto before = [&](int a, int b) {  // std::sort's comparator in c10
    const tri sa = c.ge(V(1), x.size[a]), sb = c.ge(V(1), x.size[b]);
    if (sa == tri::unknown || sb == tri::unknown) { decided = false; return false; }
    if (sa == tri::yes) return false;
    if (sb == tri::yes) return true;
    const tri ge = c.ge(x.stride[a], x.stride[b]);
    if (ge == tri::unknown) { decided = false; return false; }
    return ge == tri::no;
  };
  for (int i = 1; i < x.rank; ++i)
    for (int j = i; j > 0 && before(perm[j], perm[j - 1]); --j) { const int t = perm[j]; perm[j] = perm[j - 1]; perm[j - 1] = t; }
  if (!decided) return tri::unknown;
  V expect(1);
  for (int i = 0; i < x.rank; ++i) {
    const V& s = x.size[perm[i]];
    if (c.ge(V(1), s) == tri::yes) return tri::yes;
    const tri at = c.eq(x.stride[perm[i]], expect);
    if (at != tri::yes) return at;
    expect = expect * s;
  }
  return tri::yes;
}

// compute_elementwise_output_logical_to_physical_perm over operands already broadcast to one shape:
// perm[0] is the outermost dimension of the result, perm[rank-1] the innermost. False when a
// comparison the order depends on is not decided (symbolic strides whose order is unknown).
template <class C, class V>
constexpr bool elementwise_perm(const C& c, const layout_of<V>* ops, int n, int* perm) {
  const int rank = ops[0].rank;
  // The fast paths, taken when decided (else the sort below decides).
  tri contiguous = tri::yes, cl = tri::yes;
  for (int k = 0; k < n; ++k) {
    contiguous = tri_and(contiguous, row_major(c, ops[k]));
    cl = tri_and(cl, channels_last(c, ops[k]));
  }
  if (contiguous == tri::yes && cl == tri::no) {
    for (int i = 0; i < rank; ++i) perm[i] = i;
    return true;
  }
  if (cl == tri::yes && contiguous == tri::no) {
    perm[0] = 0; perm[1] = 2; perm[2] = 3; perm[3] = 1;
    return true;
  }
  const V* shape = ops[0].size;
  bool decided = true;
  // 1: a goes inside b (swap in the back-to-front sort), -1: outside, 0: no operand tells.
  auto should_swap = [&](int a, int b) {
    for (int k = 0; k < n; ++k) {
      const V& sa = ops[k].stride[a];
      const V& sb = ops[k].stride[b];
      // (a stride that is not the expression 0 is taken as nonzero, two that are not the same
      // expression as unequal: layout_compare.hpp)
      if (c.eq(sa, c.zero()) == tri::yes || c.eq(sb, c.zero()) == tri::yes) continue;
      if (c.eq(sa, sb) == tri::yes) {
        const tri longer = order_ge(c, shape[b], shape[a], false);
        if (longer == tri::unknown) { decided = false; return 0; }
        if (longer == tri::yes) continue;
        return 1;
      }
      const tri b_outside = order_ge(c, sb, sa, true);
      if (b_outside == tri::unknown) { decided = false; return 0; }
      if (b_outside == tri::yes) return -1;
      const tri a_outside = order_ge(c, sa, sb, true);
      if (a_outside == tri::unknown) { decided = false; return 0; }
      if (a_outside == tri::yes) return 1;
    }
    return 0;
  };
  // Insertion sort, innermost first, that steps over ambiguous comparisons (PyTorch's).
  int rev[max_rank]{};
  for (int i = 0; i < rank; ++i) rev[i] = rank - 1 - i;
  for (int i = 1; i < rank; ++i) {
    int d1 = i;
    for (int d0 = i - 1; d0 >= 0; --d0) {
      const int cmp = should_swap(rev[d0], rev[d1]);
      if (cmp > 0) {
        const int t = rev[d0]; rev[d0] = rev[d1]; rev[d1] = t;
        d1 = d0;
      } else if (cmp < 0) {
        break;
      }
    }
  }
  for (int i = 0; i < rank; ++i) perm[i] = rev[rank - 1 - i];
  return decided;
}

// Dense strides in the physical order perm (outermost first); static extents below 1 count as 1.
constexpr void dense_in_order(tensor_meta& r, const int* perm) {
  if (static_layout(r)) {
    index_t s = 1;
    for (int i = r.rank - 1; i >= 0; --i) {
      const int d = perm[i];
      r.stride[d] = sym_expr(s);
      s *= r.size[d].c > 1 ? r.size[d].c : 1;
    }
    return;
  }
  sym_expr s(1);
  for (int i = r.rank - 1; i >= 0; --i) {
    const int d = perm[i];
    r.stride[d] = s;
    s = s * sym_compare{}.step(r.size[d]);
  }
}

template <class V>
constexpr layout_of<V> layout_from(const tensor_meta& m) {
  if constexpr (std::is_same_v<V, index_t>) return int_of(m);
  else return sym_of(m);
}

// The elementwise perm of operands (0-d ones, as PyTorch's CPU scalars, do not count) broadcast to
// `shape`, static or symbolic. False when it is not decided; `any`: an operand counted.
template <class V, class C>
constexpr bool operands_perm(const C& c, const tensor_meta& shape, const tensor_meta* const* operands, int n, int* perm, bool& any) {
  layout_of<V> ops[3]{};
  int m = 0;
  const layout_of<V> out = layout_from<V>(shape);
  for (int k = 0; k < n && m < 3; ++k) {
    const tensor_meta& x = *operands[k];
    if (x.rank == 0) continue;
    ops[m++] = broadcast_to(layout_from<V>(x), out);
  }
  any = m > 0;
  return m == 0 || elementwise_perm(c, ops, m, perm);
}

// A fresh result of dtype dt and the shape of `shape`, with the strides PyTorch's elementwise ops
// give it from their tensor operands. `g` tells symbol kinds apart (may be null). False when the
// order is not decided by what is known of symbolic extents; `r` is then row-major.
constexpr bool elementwise_layout(const ir* g, const tensor_meta& shape, dtype dt, const tensor_meta* const* operands, int n,
                                  tensor_meta& r, order_decider* decider = nullptr) {
  r = contiguous_like(shape, dt);
  if (r.rank <= 1) return true;
  bool all_static = static_layout(shape);
  for (int k = 0; k < n; ++k) all_static = all_static && (operands[k]->rank == 0 || static_layout(*operands[k]));
  int perm[max_rank]{};
  bool any = false;
  const bool decided = all_static ? operands_perm<index_t>(int_compare{}, shape, operands, n, perm, any)
                                  : operands_perm<sym_expr>(sym_compare{g, decider}, shape, operands, n, perm, any);
  if (!decided) return false;
  if (any) dense_in_order(r, perm);
  return true;
}

// The same without a graph to report to: row-major where the order is not decided (a caller that
// has the graph uses elementwise_result(g, id, ...), which reports it).
constexpr tensor_meta elementwise_result(const tensor_meta& shape, dtype dt, const tensor_meta* const* operands, int n) {
  tensor_meta r;
  elementwise_layout(nullptr, shape, dt, operands, n, r);
  return r;
}

// torch.empty_like(x) (preserve_format, as torch._refs computes it): dense strides in x's stride order.
constexpr bool empty_like_layout(const ir* g, const tensor_meta& x, dtype dt, tensor_meta& r, order_decider* decider = nullptr) {
  const tensor_meta* ops[1] = {&x};
  return elementwise_layout(g, x, dt, ops, 1, r, decider);
}
constexpr tensor_meta empty_like_result(const tensor_meta& x, dtype dt) {
  tensor_meta r;
  empty_like_layout(nullptr, x, dt, r);
  return r;
}

// clone and conversions with preserve_format: a non-overlapping dense layout keeps its strides,
// anything else gets empty_like's. The offset is 0 in the fresh storage.
constexpr bool preserve_format_layout(const ir* g, const tensor_meta& x, dtype dt, tensor_meta& r, order_decider* decider = nullptr) {
  r = contiguous_like(x, dt);
  if (x.is_contiguous()) return true;
  const tri dense = static_layout(x) ? non_overlapping_and_dense(int_compare{}, int_of(x))
                                     : non_overlapping_and_dense(sym_compare{g, decider}, sym_of(x));
  if (dense == tri::unknown) return false;
  if (dense == tri::no) return empty_like_layout(g, x, dt, r, decider);
  r = x;
  r.dt = dt;
  r.offset = sym_expr(0);
  r.storage = fresh;
  return true;
}
constexpr tensor_meta preserve_format_result(const tensor_meta& x, dtype dt) {
  tensor_meta r;
  preserve_format_layout(nullptr, x, dt, r);
  return r;
}

// The checked forms, for rules that have the graph: an order that the symbolic extents do not
// decide is taken from the strides PyTorch printed for the node (printed_order), else is an error
// naming the node.
constexpr bool undecided_stride_order(ir& g, std::int32_t id) {
  auto m = about(g, id);
  m << "its result's stride order depends on sizes the graph leaves open; make them static or the operands contiguous()";
  fail(g, id, rule::stride_order, m);
  return false;
}

// e with each factor Max(1, x) written x: PyTorch's dense strides multiply by Max(1, extent) where
// ctfx's multiply by the extent (a symbolic extent is at least 2 where it orders anything).
constexpr sym_expr without_max_one(const ir& g, const sym_expr& e) {
  sym_expr r(e.c);
  for (int i = 0; i < e.n; ++i) {
    sym_expr t(e.t[i].coeff);
    for (int k = 0; k < e.t[i].degree(); ++k) {
      const int s = e.t[i].sym(k);
      sym_expr f = sym_expr::symbol(s);
      if (s >= 0 && static_cast<std::size_t>(s) < g.syms.size()) {
        const symbol& x = g.syms[static_cast<std::size_t>(s)];
        if (x.kind == symbol_kind::derived && x.op == sym_op::max && x.a == sym_expr(1)) f = x.b;
        else if (x.kind == symbol_kind::derived && x.op == sym_op::max && x.b == sym_expr(1)) f = x.a;
      }
      t = t * f;
    }
    r = r + t;
  }
  return r;
}

// Whether r's strides are the ones PyTorch printed for the node being added (extent-1 dimensions
// aside, and those `d`'s facts make 1; a printed factor Max(1, x) is x). Not `exact`: a printed
// stride with Max or FloorDiv counts as the guarded form of ctfx's, as the parser's metadata check
// takes it.
constexpr bool as_printed(const ir& g, const tensor_meta& r, bool exact, const order_decider* d = nullptr) {
  const printed_layout& p = g.printed;
  if (!p.present || p.rank != r.rank) return false;
  for (int k = 0; k < r.rank; ++k) {
    if (r.size[k] == sym_expr(1) || r.stride[k] == p.stride[k] || r.stride[k] == without_max_one(g, p.stride[k])) continue;
    if (!exact && uses_derived(g, p.stride[k])) continue;
    bool one = false;
    for (int f = 0; d && f < d->used && !one; ++f) {
      const order_decider::fact& x = d->facts[f];
      one = (x.rel == sym_rel::eq && ((x.a == r.size[k] && x.b == sym_expr(1)) || (x.b == r.size[k] && x.a == sym_expr(1)))) ||
            (x.rel == sym_rel::ge && x.a == sym_expr(1) && x.b == r.size[k]);
    }
    if (!one) return false;
  }
  return true;
}

// The sizes tried as witnesses that a set of comparisons can hold, k = 0, 1, ...: first every
// input symbol a distinct prime of 11 or more, then the combinations of 2 to 9 (at most 4096).
// False past the last; `valid`: the derived symbols evaluate there and the graph's guards hold
// (else the graph never runs at those sizes).
constexpr bool witness(const ir& g, int k, detail::cvec<index_t>& v, bool& valid) {
  constexpr index_t generic[8] = {11, 13, 17, 19, 23, 29, 31, 37};
  int inputs = 0;
  for (std::size_t s = 0; s < g.syms.size(); ++s) inputs += g.syms[s].kind != symbol_kind::derived;
  int combos = 1;
  for (int i = 0; i < inputs && combos < 4096; ++i) combos *= 8;
  if (k > combos) return false;
  v.assign(g.syms.size(), 0);
  valid = true;
  int i = 0, code = k - 1;
  for (std::size_t s = 0; s < g.syms.size(); ++s) {
    if (g.syms[s].kind == symbol_kind::derived) {
      valid = (eval_derived(g, s, v) || g.syms[s].op == sym_op::order) && valid;
      continue;
    }
    v[s] = k == 0 ? generic[i % 8] + 64 * (i / 8) : 2 + code % 8;
    if (k > 0) code /= 8;
    ++i;
  }
  return true;
}

// Whether the sizes of witness k (from k = from on) make every fact of d hold: the first such k,
// or -1.
constexpr int holds_at(const ir& g, const order_decider& d, int from = 0, int to = 1 << 30) {
  detail::cvec<index_t> v;
  bool valid = false;
  for (int k = from; k <= to && witness(g, k, v, valid); ++k) {
    if (!valid) continue;
    bool all = true;
    for (int f = 0; f < d.used && all; ++f) {
      const order_decider::fact& x = d.facts[f];
      const index_t a = x.a.eval(v), b = x.b.eval(v);
      switch (x.rel) {
        case sym_rel::eq: all = a == b; break;
        case sym_rel::ne: all = a != b; break;
        case sym_rel::ge: all = a >= b; break;
        case sym_rel::lt: all = a < b; break;
        case sym_rel::divides: all = b != 0 && floor_mod(a, b) == 0; break;
        case sym_rel::not_divides: all = b == 0 || floor_mod(a, b) != 0; break;
      }
    }
    if (all) return k;
  }
  return -1;
}

// Where the rule's order depends on sizes the graph leaves open (x[:, ::3].t() * 2: strides 3 and
// s1), PyTorch ordered the strides it printed by the sizes it traced with. The rule is run with
// every way of answering the comparisons it leaves open (order_decider); each set of answers that
// some sizes satisfy and that gives the printed strides (exactly, else up to Max/FloorDiv forms)
// becomes a set of `order` symbols of one guard, named after the node. The rule then decides by the
// first set; a run whose sizes satisfy none is refused before anything is written (exec/layouts.hpp:
// bind_derived). False when no strides were printed or no answers give them. rule(decider, r): the
// layout rule, true when decided.
template <class Rule>
constexpr bool printed_order(ir& g, const Rule& rule, tensor_meta& out) {
  if (!g.printed.present) return false;
  constexpr int max_sets = 8;
  order_decider found[max_sets]{};
  int sets = 0;
  for (int pass = 0; pass < 2 && sets == 0; ++pass) {
    int width = 0;  // the answers the runs so far asked for
    for (std::uint32_t mask = 0; sets < max_sets; ++mask) {
      order_decider& d = found[sets];
      d.restart(mask);
      tensor_meta r;
      const bool decided = rule(&d, r);
      if (d.bits > width) width = d.bits;
      // (a mask with bits past the answers its run asked for repeats a run before it)
      if (decided && !d.exhausted && (mask >> d.bits) == 0 && as_printed(g, r, pass == 0, &d) && holds_at(g, d) >= 0) ++sets;
      if (width >= 12 || mask + 1 >= (1u << width)) break;
    }
  }
  if (sets == 0) return false;
  // The first set, which the graph's rules decide by, is one that generic sizes satisfy when any
  // does (what the message of a failed run names first).
  for (int k = 1; k < sets; ++k)
    if (holds_at(g, found[k], 0, 0) == 0 && holds_at(g, found[0], 0, 0) != 0) {
      const order_decider t = found[0];
      found[0] = found[k];
      found[k] = t;
    }
  std::int32_t guard = 0;
  for (std::size_t s = 0; s < g.syms.size(); ++s)
    if (g.syms[s].op == sym_op::order && g.syms[s].guard >= guard) guard = g.syms[s].guard + 1;
  const std::size_t first = g.syms.size();
  for (int k = 0; k < sets; ++k)
    for (int f = 0; f < found[k].used; ++f) {
      symbol y{};
      y.name = g.printed.node;
      y.kind = symbol_kind::derived;
      y.op = sym_op::order;
      y.rel = found[k].facts[f].rel;
      y.a = found[k].facts[f].a;
      y.b = found[k].facts[f].b;
      y.guard = guard;
      y.alternative = k;
      g.syms.push_back(y);
    }
  if (rule(nullptr, out)) return true;
  g.syms.resize(first);
  return false;
}

// Whether the graph holds order symbols (results laid out as PyTorch printed them).
constexpr bool has_order_symbols(const ir& g) {
  for (std::size_t s = 0; s < g.syms.size(); ++s)
    if (g.syms[s].kind == symbol_kind::derived && g.syms[s].op == sym_op::order) return true;
  return false;
}

// The layout rule `rule` for node id, checked: decided; or decided otherwise than PyTorch printed
// where a comparison the rule passed over is open (a fast path taken or not: is_contiguous with an
// extent that may be 1), and then the printed layout under the comparisons it needs; or undecided
// and the printed layout; or an error naming the node.
template <class Rule>
constexpr bool checked_layout(ir& g, std::int32_t id, const Rule& rule, tensor_meta& out) {
  if (rule(nullptr, out)) {
    tensor_meta printed;
    if (g.printed.present && !as_printed(g, out, false) && printed_order(g, rule, printed)) out = printed;
    return true;
  }
  return printed_order(g, rule, out) || undecided_stride_order(g, id);
}

constexpr bool elementwise_result(ir& g, std::int32_t id, const tensor_meta& shape, dtype dt, const tensor_meta* const* operands,
                                  int n, tensor_meta& out) {
  return checked_layout(g, id, [&](order_decider* d, tensor_meta& r) { return elementwise_layout(&g, shape, dt, operands, n, r, d); }, out);
}
constexpr bool empty_like_result(ir& g, std::int32_t id, const tensor_meta& x, dtype dt, tensor_meta& out) {
  return checked_layout(g, id, [&](order_decider* d, tensor_meta& r) { return empty_like_layout(&g, x, dt, r, d); }, out);
}
constexpr bool preserve_format_result(ir& g, std::int32_t id, const tensor_meta& x, dtype dt, tensor_meta& out) {
  return checked_layout(g, id, [&](order_decider* d, tensor_meta& r) { return preserve_format_layout(&g, x, dt, r, d); }, out);
}

// auto_functionalized's new value of a mutated argument (clone_preserve_strides): the argument's
// extents, strides and offset, in a fresh storage.
constexpr tensor_meta preserve_strides_result(const tensor_meta& x) {
  tensor_meta r = x;
  r.storage = fresh;
  return r;
}

// A tensor's suggested memory format (c10's TensorBase::suggest_memory_format, exact_match false):
// channels-last for a 4-d tensor whose strides are like channels-last
// (is_channels_last_strides_2d_s4), channels-last-3d for such a 5-d one
// (is_channels_last_strides_3d_s5), else contiguous. The strides of extent-1 dimensions count.
enum class memory_format : std::uint8_t { contiguous, channels_last, channels_last_3d };

// is_channels_last_strides_{2d_s4,3d_s5}: order lists the dimensions innermost first (C, then the
// spatial ones from the last, then N).
// An extent that may or may not be 1 (a derived one) is tried both ways: decided when both agree.
template <class C, class V>
constexpr tri strides_like_channels_last(const C& c, const layout_of<V>& x, const int* order, int from = 0, V min = V(0)) {
  if (from == 0) {
    const tri c_zero = c.eq(x.stride[1], V(0));
    if (c_zero != tri::no) return c_zero == tri::yes ? tri::no : tri::unknown;  // a trivial C dimension: NCHW by default
  }
  for (int k = from; k < x.rank; ++k) {
    const int d = order[k];
    const tri empty = c.eq(x.size[d], V(0));
    if (empty != tri::no) return empty == tri::yes ? tri::no : tri::unknown;
    const tri above = c.ge(x.stride[d], min);
    if (above != tri::yes) return above;
    // N111 with equal strides (or N11W sliced on W): ambiguous, NCHW by default.
    if (d == 0) {
      const tri tie = c.eq(min, x.stride[1]);
      if (tie != tri::no) return tie == tri::yes ? tri::no : tri::unknown;
    }
    min = x.stride[d];
    const tri longer = c.ge(x.size[d], V(2));
    if (longer == tri::unknown) {
      const tri as_one = strides_like_channels_last(c, x, order, k + 1, min);
      return as_one == strides_like_channels_last(c, x, order, k + 1, min * x.size[d]) ? as_one : tri::unknown;
    }
    if (longer == tri::yes) min = min * x.size[d];
  }
  return tri::yes;
}

// The format m suggests, into f; false when its symbolic strides leave it undecided.
constexpr bool suggested_format(const ir* g, const tensor_meta& m, memory_format& f, order_decider* decider = nullptr) {
  f = memory_format::contiguous;
  if (m.rank != 4 && m.rank != 5) return true;
  constexpr int order4[4] = {1, 3, 2, 0};
  constexpr int order5[5] = {1, 4, 3, 2, 0};
  const int* order = m.rank == 4 ? order4 : order5;
  const tri like = static_layout(m) ? strides_like_channels_last(int_compare{}, int_of(m), order)
                                    : strides_like_channels_last(sym_compare{g, decider}, sym_of(m), order);
  if (like == tri::unknown) return false;
  if (like == tri::yes) f = m.rank == 4 ? memory_format::channels_last : memory_format::channels_last_3d;
  return true;
}
constexpr memory_format suggest_memory_format(const tensor_meta& m) {
  memory_format f{};
  suggested_format(nullptr, m, f);
  return f;
}

// ATen's cat_compute_output_memory_format, one input at a time: the format of the inputs so far
// (the first input's suggested format to start), then the next input's: contiguous once any input
// suggests contiguous or two suggest different formats, else the one they all suggest.
constexpr memory_format cat_output_format(memory_format so_far, memory_format next) {
  return so_far == next ? so_far : memory_format::contiguous;
}

// A fresh tensor of dtype dt and the shape of `shape`, allocated in format f (at::empty with a
// memory_format): row-major, or get_channels_last_strides_2d / _3d (C innermost, then W, H (, D),
// then N).
constexpr tensor_meta result_in_format(const tensor_meta& shape, dtype dt, memory_format f) {
  tensor_meta r = contiguous_like(shape, dt);
  if (f == memory_format::contiguous) return r;
  if ((f == memory_format::channels_last && r.rank != 4) || (f == memory_format::channels_last_3d && r.rank != 5)) return r;
  // get_channels_last_strides multiplies the extents as they are; dense_in_order counts an extent
  // of 0 as 1. They agree here: an input with an extent of 0 suggests contiguous, and cat's result
  // has its inputs' extents outside the cat dimension and their sum in it.
  constexpr int perm4[4] = {0, 2, 3, 1};
  constexpr int perm5[5] = {0, 2, 3, 4, 1};
  dense_in_order(r, f == memory_format::channels_last ? perm4 : perm5);
  return r;
}

}  // namespace ctfx::detail
#include "../core/diagnostics_pop.hpp"
