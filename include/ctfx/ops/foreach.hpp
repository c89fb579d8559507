// ctfx/ops/foreach.hpp — list ops: _foreach_add / _foreach_mul and their in-place twins. Their
// results are tuples; getitem(t, i) reads element i, laid out as the elementwise op on element i of
// each list lays out its result (ops/custom.hpp: getitem_meta).
#pragma once
#include "../core/diagnostics_push.hpp"
#include "meta_util.hpp"
#include "schema.hpp"

namespace ctfx {
namespace ops {
struct foreach_add_t : op_tag<op_kind::foreach_add, "_foreach_add.List(Tensor[] self, Tensor[] other, *, Scalar alpha=1) -> Tensor[]"> {};
struct foreach_mul_t : op_tag<op_kind::foreach_mul, "_foreach_mul.List(Tensor[] self, Tensor[] other) -> Tensor[]"> {};
struct foreach_add__t : op_tag<op_kind::foreach_add_, "_foreach_add_.List(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> ()"> {};
struct foreach_mul__t : op_tag<op_kind::foreach_mul_, "_foreach_mul_.List(Tensor(a!)[] self, Tensor[] other) -> ()"> {};
}  // namespace ops

namespace detail {
// args = a_0..a_{k-1}, then b_0..b_{k-1} (or nothing: a scalar operand); aux = k.
constexpr bool foreach_meta(ir& g, std::int32_t id, tensor_meta& out) {
  auto a = g.args_of(id);
  auto k = static_cast<std::size_t>(g[id].aux);
  if (k == 0 || (a.size() != k && a.size() != 2 * k)) {
    auto m = about(g, id); m << "list arguments of unequal length";
    fail(g, id, rule::list_arguments, m); return false;
  }
  for (std::size_t i = 0; a.size() == 2 * k && i < k; ++i) {
    const tensor_meta& x = g.meta(a[i]);
    const tensor_meta& y = g.meta(a[k + i]);
    if (!x.same_shape(y) || x.dt != y.dt) {
      auto m = about(g, id); m << "element " << static_cast<int>(i) << ": "; put_type(m, g, x); m << " and "; put_type(m, g, y);
      m << " differ";
      fail(g, id, rule::list_arguments, m); return false;
    }
  }
  out = tensor_meta{};
  out.storage = -1;  // a tuple
  return true;
}
}  // namespace detail
}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
