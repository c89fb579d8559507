// ctfx/ops/factories.hpp — tensors made from nothing: empty, empty_like, zeros, ones, full, fill_.
#pragma once
#include "../core/diagnostics_push.hpp"
#include "meta_util.hpp"
#include "schema.hpp"

namespace ctfx {
namespace ops {
struct empty_t : op_tag<op_kind::empty, "empty.memory_format(SymInt[] size, *, ScalarType? dtype=None) -> Tensor"> {};
struct empty_like_t : op_tag<op_kind::empty_like, "empty_like(Tensor self, *, ScalarType? dtype=None) -> Tensor"> {};
struct zeros_t : op_tag<op_kind::zeros, "zeros(SymInt[] size, *, ScalarType? dtype=None) -> Tensor"> {};
struct ones_t : op_tag<op_kind::ones, "ones(SymInt[] size, *, ScalarType? dtype=None) -> Tensor"> {};
struct full_t : op_tag<op_kind::full, "full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None) -> Tensor"> {};
struct fill__t : op_tag<op_kind::fill_, "fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)"> {};
}  // namespace ops

namespace detail {
constexpr bool factory_meta(ir& g, std::int32_t id, std::span<const sym_expr> sizes, dtype dt, tensor_meta& out) {
  int r = static_cast<int>(sizes.size());
  if (!rank_ok(g, id, r)) return false;
  out = tensor_meta{};
  out.dt = dt;
  out.rank = static_cast<std::int8_t>(r);
  for (int i = 0; i < r; ++i) {
    out.size[i] = sizes[static_cast<std::size_t>(i)];
    if (out.size[i].is_static() && out.size[i].value() < 0) {
      auto m = about(g, id); m << "size " << static_cast<long long>(out.size[i].value()) << " in dimension " << i << " is negative";
      fail(g, id, rule::bad_argument, m); return false;
    }
  }
  out.set_contiguous();
  out.storage = fresh;
  return true;
}
}  // namespace detail
}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
