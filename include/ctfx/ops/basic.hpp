// ctfx/ops/basic.hpp — graph structure and copies: placeholder, output, getitem, sym_size, copy_,
// copy, clone. (alias is a view: ops/views.hpp.)
#pragma once
#include "../core/diagnostics_push.hpp"
#include "meta_util.hpp"
#include "result_layout.hpp"
#include "schema.hpp"

namespace ctfx {
namespace ops {
struct placeholder_t : op_tag<op_kind::placeholder, "placeholder() -> Tensor"> {};
struct output_t : op_tag<op_kind::output, "output(Tensor[] results) -> ()"> {};
struct getitem_t : op_tag<op_kind::getitem, "getitem(Any tuple, int index) -> Tensor"> {};
struct sym_size_t : op_tag<op_kind::sym_size, "sym_size.int(Tensor self, int dim) -> SymInt"> {};
struct copy__t : op_tag<op_kind::copy_, "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)"> {};
struct copy_t : op_tag<op_kind::copy, "copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor"> {};
struct clone_t : op_tag<op_kind::clone, "clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor"> {};
}  // namespace ops

namespace detail {

// clone (preserve_format): a dense layout keeps its strides, anything else gets dense strides in
// its stride order (ops/result_layout.hpp); the offset of the copy is always 0.
constexpr tensor_meta clone_meta(const tensor_meta& x) { return preserve_format_result(x, x.dt); }

constexpr bool copy_compatible(ir& g, std::int32_t id, const tensor_meta& dst, const tensor_meta& src) {
  tensor_meta b = dst;
  if (broadcast_into(b, src) && b.same_shape(dst)) return true;
  auto m = about(g, id);
  m << "cannot copy "; put_type(m, g, src); m << " into "; put_type(m, g, dst);
  fail(g, id, rule::broadcast_shapes, m);
  return false;
}

}  // namespace detail
}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
