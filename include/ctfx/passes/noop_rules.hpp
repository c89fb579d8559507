// ctfx/passes/noop_rules.hpp — the no-op registry of remove_noop_ops, as types (Inductor's
// register_noop_decomp table, A.3 of the reference).
//
// A rule is a type naming the op tag it applies to, the argument that replaces the node, and a
// constexpr condition on the node (looked at in the graph as rewritten so far, so its arguments are
// already the replacements of earlier no-ops; it may read the node and earlier nodes, not later
// ones: the pass first asks every rule on the graph as given, and skips the rewrite when none holds):
//
//   struct max_self : ctfx::noop_rule<ctfx::ops::maximum_t> {      // maximum(x, x) is x
//     static constexpr bool cond(const ctfx::ir& g, std::int32_t n) { return g.arg(n, 0) == g.arg(n, 1); }
//   };
//   using my_rules = ctfx::builtin_noop_rules::with<max_self>;
//   ir h = ctfx::remove_noop_ops_with<my_rules>(g);                 // or stage<G, &remove_noop_ops_with<my_rules>>
//
// A rule only says "this op call computes its argument's value". remove_noop_ops adds the checks
// that make dropping it safe for every rule: equal metadata (dtype, sizes, strides, storage offset)
// and no new aliasing between inputs and outputs.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <array>
#include <bit>
#include <cstdint>
#include <type_traits>
#include "../ops/meta.hpp"

namespace ctfx {

// Base of a rule: `Op` is the op tag (ctfx::ops::*_t), `Source` the argument that replaces the node.
// The default condition is "always" (Inductor's true_noop).
template <class Op, int Source = 0>
struct noop_rule {
  using op = Op;
  static constexpr int source = Source;
  static constexpr bool cond(const ir&, std::int32_t) { return true; }
};

namespace noop {

namespace detail {
constexpr bool integer_like(dtype d) { return !is_floating(d); }
constexpr bool negative_zero(double v) { return v == 0.0 && (std::bit_cast<std::uint64_t>(v) >> 63) != 0; }
// A binary op with a scalar right operand equal to `v`.
constexpr bool scalar_rhs(const ir& g, std::int32_t n, double v) { return g[n].aux != 0 && g[n].scalar.equals(v); }
}  // namespace detail

// slice(x, dim, 0, end >= size, 1)
struct slice : noop_rule<ops::slice_t> {
  static constexpr bool cond(const ir& g, std::int32_t n) {
    if (g[n].npar != 4 || !(g.param(n, 1) == sym_expr(0)) || !(g.param(n, 3) == sym_expr(1))) return false;
    const tensor_meta& x = g.meta(g.arg(n, 0));
    index_t d = g.iparam(n, 0);
    if (d < 0) d += x.rank;
    if (d < 0 || d >= x.rank) return false;
    index_t end = g.iparam(n, 2);
    return end == end_of_dim || (x.size[d].is_static() && end >= x.size[d].value());
  }
};
// slice_scatter(self, src, dim, 0, end >= size, 1) with src shaped like self: the result is src.
struct slice_scatter : noop_rule<ops::slice_scatter_t, 1> {
  static constexpr bool cond(const ir& g, std::int32_t n) {
    const tensor_meta& self = g.meta(g.arg(n, 0));
    if (!self.same_shape(g.meta(g.arg(n, 1)))) return false;
    if (g[n].npar != 4 || !(g.param(n, 1) == sym_expr(0)) || !(g.param(n, 3) == sym_expr(1))) return false;
    index_t d = g.iparam(n, 0);
    if (d < 0) d += self.rank;
    if (d < 0 || d >= self.rank) return false;
    index_t end = g.iparam(n, 2);
    return end == end_of_dim || (self.size[d].is_static() && end >= self.size[d].value());
  }
};
// convert_element_type(x, dtype of x)
struct convert : noop_rule<ops::convert_t> {
  static constexpr bool cond(const ir& g, std::int32_t n) {
    return static_cast<dtype>(g[n].aux) == g.meta(g.arg(n, 0)).dt;
  }
};
// ceil/floor/round/trunc of integers
template <class Op>
struct rounding : noop_rule<Op> {
  static constexpr bool cond(const ir& g, std::int32_t n) { return detail::integer_like(g.meta(g.arg(n, 0)).dt); }
};
// pow(x, 1) with the integer exponent 1
struct pow : noop_rule<ops::pow_t> {
  static constexpr bool cond(const ir& g, std::int32_t n) { return g[n].aux == 2 && g[n].scalar.equals(1.0); }
};
// cat([x])
struct cat : noop_rule<ops::cat_t> {
  static constexpr bool cond(const ir& g, std::int32_t n) { return g[n].nargs == 1; }
};
// view(x, shape of x)
struct view : noop_rule<ops::view_t> {
  static constexpr bool cond(const ir& g, std::int32_t n) { return g.meta(n).same_shape(g.meta(g.arg(n, 0))); }
};
// copy(dst, src) is src's value; alias(x) and clone(x) are x's.
struct copy : noop_rule<ops::copy_t, 1> {};
struct alias : noop_rule<ops::alias_t> {};
struct clone : noop_rule<ops::clone_t> {};

// Algebraic identities with a scalar operand (joint_graph's remove_no_ops), kept bit-exact: x*1 and
// x/1 always; x-0 for +0; x+0 only for integers (for floats -0.0 + 0 is +0.0; x + -0.0 is exact).
struct add_zero : noop_rule<ops::add_t> {
  static constexpr bool cond(const ir& g, std::int32_t n) {
    if (!detail::scalar_rhs(g, n, 0.0)) return false;
    return detail::integer_like(g.meta(g.arg(n, 0)).dt) || detail::negative_zero(g[n].scalar.as<double>());
  }
};
struct sub_zero : noop_rule<ops::sub_t> {
  static constexpr bool cond(const ir& g, std::int32_t n) {
    if (!detail::scalar_rhs(g, n, 0.0)) return false;
    return detail::integer_like(g.meta(g.arg(n, 0)).dt) || !detail::negative_zero(g[n].scalar.as<double>());
  }
};
struct mul_one : noop_rule<ops::mul_t> {
  static constexpr bool cond(const ir& g, std::int32_t n) { return detail::scalar_rhs(g, n, 1.0); }
};
struct div_one : noop_rule<ops::div_t> {
  static constexpr bool cond(const ir& g, std::int32_t n) { return detail::scalar_rhs(g, n, 1.0); }
};

}  // namespace noop

// A registry: the rules, tried in order; the first whose op matches and whose condition holds
// names the replacing argument. `with<...>` appends user rules (also for ops that have one already).
template <class... Rules>
struct noop_rules {
  static_assert(((std::is_same_v<decltype(Rules::op::kind), const op_kind>) && ...),
                "ctfx::noop_rules: each rule needs `using op = <op tag>` (derive it from ctfx::noop_rule<Op, Source>)");
  template <class... More>
  using with = noop_rules<Rules..., More...>;
  static constexpr std::size_t size = sizeof...(Rules);

  // The argument index that replaces node n, or -1 when no rule says n is a no-op.
  static constexpr int match(const ir& g, std::int32_t n) {
    int r = -1;
    const op_kind k = g[n].op;
    ((r < 0 && Rules::op::kind == k && Rules::cond(g, n) ? (r = Rules::source, 0) : 0), ...);
    return r;
  }
  // True when some rule may replace an op `k` node by its argument `arg`.
  static constexpr bool forwards(op_kind k, int arg) { return ((Rules::op::kind == k && Rules::source == arg) || ...); }
  // True when some rule is registered for op `k` (whatever its condition): a table by op, as the
  // passes ask it for every node (in constant evaluation a comparison per rule costs ~10x a lookup).
  static constexpr bool has(op_kind k) { return registered[static_cast<std::size_t>(k)]; }

 private:
  static constexpr auto registered = [] {
    std::array<bool, static_cast<std::size_t>(op_kind::count_)> t{};
    ((t[static_cast<std::size_t>(Rules::op::kind)] = true), ...);
    return t;
  }();
};

// Inductor's registry for the ops ctfx has, plus the bit-exact algebraic identities.
using builtin_noop_rules =
    noop_rules<noop::slice, noop::slice_scatter, noop::convert, noop::rounding<ops::ceil_t>,
               noop::rounding<ops::floor_t>, noop::rounding<ops::round_t>, noop::rounding<ops::trunc_t>, noop::pow,
               noop::cat, noop::view, noop::copy, noop::alias, noop::clone, noop::add_zero, noop::sub_zero,
               noop::mul_one, noop::div_one>;

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
