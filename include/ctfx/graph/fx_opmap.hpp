// ctfx/graph/fx_opmap.hpp — which `torch.ops.*` overload becomes which ctfx op, and how its
// arguments are read (the `lower` form); the reverse direction (the name fx_print.hpp writes for each
// op_kind) lives here too, so the two cannot drift. The table is sorted by name (checked below) and
// searched by bisection: a lookup costs log(rows) comparisons per line of text.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <string_view>
#include "../ops/op_kind.hpp"

namespace ctfx::fx {

// How a call's arguments become a node's args, params, aux and scalar (graph/fx_parse.hpp).
enum class lower : std::uint8_t {
  unary,               // (x) or (a, b) tensors only: clone, alias, copy, copy_, empty_like, unary math
  binary,              // (a, b) with b a tensor or a scalar
  div_mode,            // (a, b, rounding_mode=None | 'floor' | 'trunc'): div, floor_divide or trunc_divide
  isnan,               // (x): x != x
  isinf,               // (x): abs(x) == inf
  reciprocal,          // (x): pow(x, -1), which the kernels compute as 1 / x (an integer x converted to f32 first)
  logical_xor,         // (a, b): (a != 0) != (b != 0)
  where,               // (condition, self, other): a number for self or other is a 0-d full
  fma,                 // prims.fma (a, b, c): a * b + c rounded once; a number b is a 0-d full
  addcmul,             // (self, t1, t2, value=1): fma(value * t1, t2, self); addcmul_ copies it into self
  addcdiv,             // (self, t1, t2, value=1): self + (value * t1) / t2; addcdiv_ copies it into self
  lerp,                // (self, end, weight): |w| < 0.5 ? fma(w, end - self, self) : fma(self - end, 1 - w, end)
  foreach_elems,       // (xs, ys or scalar or tensor, alpha=1): the op (fma with alpha) on each element; a tuple read with [k]
  bitwise,             // bitwise_and / bitwise_or (a, b), bitwise_not (a): the op on integers; on bool tensors the logical op
  clamp,               // (x, min=None, max=None), numbers or tensors: clamp_min then clamp_max
  slice, select, diagonal, as_strided,
  view,                // (x, sizes): view, _unsafe_view, reshape, expand
  permute, transpose, t,
  dim,                 // (x, dim): unsqueeze, squeeze.dim
  squeeze_all,         // (x) or (x, dims): squeeze.default (every size-1 dim), squeeze.dims
  slice_scatter, select_scatter, diagonal_scatter, as_strided_scatter,
  index_put,           // (x, indices, values, accumulate=False)
  index,               // (x, indices)
  embedding,           // (weight, indices, padding_idx=-1, ...): weight[indices], an index on dim 0
  index_select,        // (x, dim, index): x[:, ..., index] with the index at dim
  gather,              // (x, dim, index, sparse_grad=False)
  scatter,             // (x, dim, index, src or value), scatter_add and scatter_reduce (every reduce, include_self either way)
  reduce,              // (x, dims=[], keepdim=False); prod.dim_int (x, dim, keepdim=False), prod.default (x)
  arg_reduce,          // (x, dim=None, keepdim=False): argmax / argmin, int64 indices
  var,                 // (x, dims=None, *, correction=1, keepdim=False): var.correction, var_mean.correction (a tuple read with [k])
  constant_pad,        // (x, pad, value=0): builder's tensor::constant_pad (slices, fulls, cats)
  unfold,              // (x, dim, size, step): builder's tensor::unfold, an as_strided view
  rev,                 // (x, dims): aten.flip, prims.rev as builder's tensor::flip (an index per dim)
  iota,                // (length, *, start, step, dtype, ...): builder::iota's full, cumsum and add
  cumsum,              // cumsum, cumprod (x, dim, dtype=None): an integer or bool x (or one of another dtype=) converted first; logcumsumexp (x, dim)
  max_dim,             // (x, dim, keepdim=False): max.dim / min.dim as (amax, argmax) / (amin, argmin), read with [k]
  any_all,             // (x), (x, dim, keepdim=False) or (x, dims, keepdim=False): any / all as amax of x != 0
  cat,                 // (tensors, dim=0)
  attention,           // _scaled_dot_product_flash_attention_for_cpu (q, k, v, dropout_p=0, is_causal=False, *, attn_mask=None, scale=None):
                       // ctfx::scaled_dot_product_attention's nodes, the tuple (output, logsumexp) read with [k]
  product,             // mm, bmm (self, mat2); addmm, baddbmm (self, mat1, mat2, beta=1, alpha=1)
  foreach,             // (xs, ys) or (xs, scalar)
  all_reduce,          // (x, 'sum' | 'max' | 'min', group)
  broadcast,           // (x, src, group)
  all_gather,          // (x, group_size, group)
  reduce_scatter,      // (x, reduce_op, group_size, group)
  factory,             // (sizes, dtype=...)
  full,                // (sizes, value, dtype=...)
  scalar_tensor,       // (value, dtype=...): a 0-d full
  convert,             // (x, dtype) or (x, dtype=...)
  sym_size,            // (x, dim): a symbolic size, also a node
  fill,                // (x, value)
  auto_functionalized, // (op, **kwargs): a user op from the list the caller gives
  split,               // (x, split_size or split_sizes, dim=0): a tuple of slices, read with [k]
  repeat,              // (x, repeats): unsqueeze, expand, a contiguous clone, view (PyTorch's decomposition)
  unbind,              // (x, dim=0): a tuple of selects, read with [k]
  control,             // cond(pred, then, else, (operands)) / while_loop(cond, body, (carried), (additional)):
                       // graph modules (graph/fx_modules.hpp) run as subgraphs (ops/control.hpp)
};

struct op_row {
  std::string_view name;  // after "torch.ops."
  lower how;
  op_kind kind;
};

inline constexpr op_row op_rows[] = {
    {"_c10d_functional.all_gather_into_tensor.default", lower::all_gather, op_kind::all_gather},
    {"_c10d_functional.all_reduce.default", lower::all_reduce, op_kind::all_reduce},
    {"_c10d_functional.all_reduce_.default", lower::all_reduce, op_kind::all_reduce_},
    {"_c10d_functional.broadcast.default", lower::broadcast, op_kind::broadcast},
    {"_c10d_functional.broadcast_.default", lower::broadcast, op_kind::broadcast_},
    {"_c10d_functional.reduce_scatter_tensor.default", lower::reduce_scatter, op_kind::reduce_scatter},
    {"_c10d_functional.wait_tensor.default", lower::unary, op_kind::alias},
    {"aten.__lshift__.Scalar", lower::binary, op_kind::bitwise_left_shift},
    {"aten.__lshift__.Tensor", lower::binary, op_kind::bitwise_left_shift},
    {"aten.__rshift__.Scalar", lower::binary, op_kind::bitwise_right_shift},
    {"aten.__rshift__.Tensor", lower::binary, op_kind::bitwise_right_shift},
    {"aten._foreach_add.List", lower::foreach, op_kind::foreach_add},
    {"aten._foreach_add.Scalar", lower::foreach, op_kind::foreach_add},
    {"aten._foreach_add_.List", lower::foreach, op_kind::foreach_add_},
    {"aten._foreach_add_.Scalar", lower::foreach, op_kind::foreach_add_},
    {"aten._foreach_addcdiv.Scalar", lower::foreach_elems, op_kind::div},
    {"aten._foreach_addcdiv_.Scalar", lower::foreach_elems, op_kind::div},
    {"aten._foreach_addcmul.Scalar", lower::foreach_elems, op_kind::fma},
    {"aten._foreach_addcmul_.Scalar", lower::foreach_elems, op_kind::fma},
    {"aten._foreach_div.List", lower::foreach_elems, op_kind::div},
    {"aten._foreach_div.Scalar", lower::foreach_elems, op_kind::div},
    {"aten._foreach_div_.List", lower::foreach_elems, op_kind::div_},
    {"aten._foreach_div_.Scalar", lower::foreach_elems, op_kind::div_},
    {"aten._foreach_lerp.List", lower::foreach_elems, op_kind::fma},
    {"aten._foreach_lerp.Scalar", lower::foreach_elems, op_kind::fma},
    {"aten._foreach_lerp_.List", lower::foreach_elems, op_kind::fma},
    {"aten._foreach_lerp_.Scalar", lower::foreach_elems, op_kind::fma},
    {"aten._foreach_mul.List", lower::foreach, op_kind::foreach_mul},
    {"aten._foreach_mul.Scalar", lower::foreach, op_kind::foreach_mul},
    {"aten._foreach_mul.Tensor", lower::foreach_elems, op_kind::mul},
    {"aten._foreach_mul_.List", lower::foreach, op_kind::foreach_mul_},
    {"aten._foreach_mul_.Scalar", lower::foreach, op_kind::foreach_mul_},
    {"aten._foreach_mul_.Tensor", lower::foreach_elems, op_kind::mul_},
    {"aten._foreach_sqrt.default", lower::foreach_elems, op_kind::sqrt},
    {"aten._foreach_sqrt_.default", lower::foreach_elems, op_kind::sqrt},
    {"aten._foreach_sub.List", lower::foreach_elems, op_kind::sub},
    {"aten._foreach_sub.Scalar", lower::foreach_elems, op_kind::sub},
    {"aten._foreach_sub_.List", lower::foreach_elems, op_kind::sub_},
    {"aten._foreach_sub_.Scalar", lower::foreach_elems, op_kind::sub_},
    {"aten._scaled_dot_product_flash_attention_for_cpu.default", lower::attention, op_kind::bmm},
    {"aten._to_copy.default", lower::convert, op_kind::convert},
    {"aten._unsafe_index_put.default", lower::index_put, op_kind::unsafe_index_put},
    {"aten._unsafe_view.default", lower::view, op_kind::view},
    {"aten.abs.default", lower::unary, op_kind::abs},
    {"aten.add.Scalar", lower::binary, op_kind::add},
    {"aten.add.Tensor", lower::binary, op_kind::add},
    {"aten.add_.Scalar", lower::binary, op_kind::add_},
    {"aten.add_.Tensor", lower::binary, op_kind::add_},
    {"aten.addcdiv.default", lower::addcdiv, op_kind::div},
    {"aten.addcdiv_.default", lower::addcdiv, op_kind::div},
    {"aten.addcmul.default", lower::addcmul, op_kind::fma},
    {"aten.addcmul_.default", lower::addcmul, op_kind::fma},
    {"aten.addmm.default", lower::product, op_kind::addmm},
    {"aten.alias.default", lower::unary, op_kind::alias},
    {"aten.all.default", lower::any_all, op_kind::logical_not},
    {"aten.all.dim", lower::any_all, op_kind::logical_not},
    {"aten.all.dims", lower::any_all, op_kind::logical_not},
    {"aten.amax.default", lower::reduce, op_kind::amax},
    {"aten.amin.default", lower::reduce, op_kind::amin},
    {"aten.any.default", lower::any_all, op_kind::amax},
    {"aten.any.dim", lower::any_all, op_kind::amax},
    {"aten.any.dims", lower::any_all, op_kind::amax},
    {"aten.argmax.default", lower::arg_reduce, op_kind::argmax},
    {"aten.argmin.default", lower::arg_reduce, op_kind::argmin},
    {"aten.as_strided.default", lower::as_strided, op_kind::as_strided},
    {"aten.as_strided_scatter.default", lower::as_strided_scatter, op_kind::as_strided_scatter},
    {"aten.atan2.default", lower::binary, op_kind::atan2},
    {"aten.baddbmm.default", lower::product, op_kind::baddbmm},
    {"aten.bitwise_and.Scalar", lower::binary, op_kind::bitwise_and},
    {"aten.bitwise_and.Tensor", lower::bitwise, op_kind::bitwise_and},
    {"aten.bitwise_left_shift.Tensor", lower::binary, op_kind::bitwise_left_shift},
    {"aten.bitwise_left_shift.Tensor_Scalar", lower::binary, op_kind::bitwise_left_shift},
    {"aten.bitwise_not.default", lower::bitwise, op_kind::bitwise_not},
    {"aten.bitwise_or.Scalar", lower::binary, op_kind::bitwise_or},
    {"aten.bitwise_or.Tensor", lower::bitwise, op_kind::bitwise_or},
    {"aten.bitwise_right_shift.Tensor", lower::binary, op_kind::bitwise_right_shift},
    {"aten.bitwise_right_shift.Tensor_Scalar", lower::binary, op_kind::bitwise_right_shift},
    {"aten.bitwise_xor.Scalar", lower::binary, op_kind::bitwise_xor},
    {"aten.bitwise_xor.Tensor", lower::binary, op_kind::bitwise_xor},
    {"aten.bmm.default", lower::product, op_kind::bmm},
    {"aten.cat.default", lower::cat, op_kind::cat},
    {"aten.ceil.default", lower::unary, op_kind::ceil},
    {"aten.clamp.Tensor", lower::clamp, op_kind::clamp_min},
    {"aten.clamp.default", lower::clamp, op_kind::clamp_min},
    {"aten.clamp_max.Tensor", lower::binary, op_kind::clamp_max},
    {"aten.clamp_max.default", lower::binary, op_kind::clamp_max},
    {"aten.clamp_min.Tensor", lower::binary, op_kind::clamp_min},
    {"aten.clamp_min.default", lower::binary, op_kind::clamp_min},
    {"aten.clone.default", lower::unary, op_kind::clone},
    {"aten.constant_pad_nd.default", lower::constant_pad, op_kind::cat},
    {"aten.copy.default", lower::unary, op_kind::copy},
    {"aten.copy_.default", lower::unary, op_kind::copy_},
    {"aten.cos.default", lower::unary, op_kind::cos},
    {"aten.cumprod.default", lower::cumsum, op_kind::cumprod},
    {"aten.cumsum.default", lower::cumsum, op_kind::cumsum},
    {"aten.diagonal.default", lower::diagonal, op_kind::diagonal},
    {"aten.diagonal_scatter.default", lower::diagonal_scatter, op_kind::diagonal_scatter},
    {"aten.div.Scalar", lower::binary, op_kind::div},
    {"aten.div.Scalar_mode", lower::div_mode, op_kind::div},
    {"aten.div.Tensor", lower::binary, op_kind::div},
    {"aten.div.Tensor_mode", lower::div_mode, op_kind::div},
    {"aten.div_.Scalar", lower::binary, op_kind::div_},
    {"aten.div_.Tensor", lower::binary, op_kind::div_},
    {"aten.embedding.default", lower::embedding, op_kind::index},
    {"aten.empty.memory_format", lower::factory, op_kind::empty},
    {"aten.empty_like.default", lower::unary, op_kind::empty_like},
    {"aten.eq.Scalar", lower::binary, op_kind::eq},
    {"aten.eq.Tensor", lower::binary, op_kind::eq},
    {"aten.erf.default", lower::unary, op_kind::erf},
    {"aten.exp.default", lower::unary, op_kind::exp},
    {"aten.exp2.default", lower::unary, op_kind::exp2},
    {"aten.expand.default", lower::view, op_kind::expand},
    {"aten.expm1.default", lower::unary, op_kind::expm1},
    {"aten.fill_.Scalar", lower::fill, op_kind::fill_},
    {"aten.flip.default", lower::rev, op_kind::index},
    {"aten.floor.default", lower::unary, op_kind::floor},
    {"aten.floor_divide.Scalar", lower::binary, op_kind::floor_divide},
    {"aten.floor_divide.default", lower::binary, op_kind::floor_divide},
    {"aten.fmod.Scalar", lower::binary, op_kind::fmod},
    {"aten.fmod.Tensor", lower::binary, op_kind::fmod},
    {"aten.full.default", lower::full, op_kind::full},
    {"aten.gather.default", lower::gather, op_kind::gather},
    {"aten.ge.Scalar", lower::binary, op_kind::ge},
    {"aten.ge.Tensor", lower::binary, op_kind::ge},
    {"aten.gt.Scalar", lower::binary, op_kind::gt},
    {"aten.gt.Tensor", lower::binary, op_kind::gt},
    {"aten.hypot.default", lower::binary, op_kind::hypot},
    {"aten.index.Tensor", lower::index, op_kind::index},
    {"aten.index_put.default", lower::index_put, op_kind::index_put},
    {"aten.index_put_.default", lower::index_put, op_kind::index_put_},
    {"aten.index_select.default", lower::index_select, op_kind::index},
    {"aten.isinf.default", lower::isinf, op_kind::eq},
    {"aten.isnan.default", lower::isnan, op_kind::ne},
    {"aten.le.Scalar", lower::binary, op_kind::le},
    {"aten.le.Tensor", lower::binary, op_kind::le},
    {"aten.lerp.Scalar", lower::lerp, op_kind::fma},
    {"aten.lerp.Tensor", lower::lerp, op_kind::fma},
    {"aten.lerp_.Scalar", lower::lerp, op_kind::fma},
    {"aten.lerp_.Tensor", lower::lerp, op_kind::fma},
    {"aten.lift_fresh_copy.default", lower::unary, op_kind::clone},
    {"aten.log.default", lower::unary, op_kind::log},
    {"aten.log10.default", lower::unary, op_kind::log10},
    {"aten.log1p.default", lower::unary, op_kind::log1p},
    {"aten.log2.default", lower::unary, op_kind::log2},
    {"aten.logcumsumexp.default", lower::cumsum, op_kind::logcumsumexp},
    {"aten.logical_and.default", lower::binary, op_kind::logical_and},
    {"aten.logical_not.default", lower::unary, op_kind::logical_not},
    {"aten.logical_or.default", lower::binary, op_kind::logical_or},
    {"aten.logical_xor.default", lower::logical_xor, op_kind::ne},
    {"aten.lt.Scalar", lower::binary, op_kind::lt},
    {"aten.lt.Tensor", lower::binary, op_kind::lt},
    {"aten.max.default", lower::reduce, op_kind::amax},
    {"aten.max.dim", lower::max_dim, op_kind::argmax},
    {"aten.maximum.default", lower::binary, op_kind::maximum},
    {"aten.mean.default", lower::reduce, op_kind::mean},
    {"aten.mean.dim", lower::reduce, op_kind::mean},
    {"aten.min.default", lower::reduce, op_kind::amin},
    {"aten.min.dim", lower::max_dim, op_kind::argmin},
    {"aten.minimum.default", lower::binary, op_kind::minimum},
    {"aten.mm.default", lower::product, op_kind::mm},
    {"aten.mul.Scalar", lower::binary, op_kind::mul},
    {"aten.mul.Tensor", lower::binary, op_kind::mul},
    {"aten.mul_.Scalar", lower::binary, op_kind::mul_},
    {"aten.mul_.Tensor", lower::binary, op_kind::mul_},
    {"aten.ne.Scalar", lower::binary, op_kind::ne},
    {"aten.ne.Tensor", lower::binary, op_kind::ne},
    {"aten.neg.default", lower::unary, op_kind::neg},
    {"aten.ones.default", lower::factory, op_kind::ones},
    {"aten.permute.default", lower::permute, op_kind::permute},
    {"aten.pow.Scalar", lower::binary, op_kind::pow},  // (number, tensor)
    {"aten.pow.Tensor_Scalar", lower::binary, op_kind::pow},
    {"aten.pow.Tensor_Tensor", lower::binary, op_kind::pow},
    {"aten.prod.default", lower::reduce, op_kind::prod},
    {"aten.prod.dim_int", lower::reduce, op_kind::prod},
    {"aten.reciprocal.default", lower::reciprocal, op_kind::pow},
    {"aten.relu.default", lower::unary, op_kind::relu},
    {"aten.remainder.Scalar", lower::binary, op_kind::remainder},
    {"aten.remainder.Scalar_Tensor", lower::binary, op_kind::remainder},  // (number, tensor)
    {"aten.remainder.Tensor", lower::binary, op_kind::remainder},
    {"aten.repeat.default", lower::repeat, op_kind::view},
    {"aten.reshape.default", lower::view, op_kind::view},
    {"aten.round.default", lower::unary, op_kind::round},
    {"aten.rsqrt.default", lower::unary, op_kind::rsqrt},
    {"aten.scalar_tensor.default", lower::scalar_tensor, op_kind::full},
    {"aten.scatter.src", lower::scatter, op_kind::scatter},
    {"aten.scatter.value", lower::scatter, op_kind::scatter},
    {"aten.scatter_.src", lower::scatter, op_kind::scatter_},
    {"aten.scatter_.value", lower::scatter, op_kind::scatter_},
    {"aten.scatter_add.default", lower::scatter, op_kind::scatter},
    {"aten.scatter_add_.default", lower::scatter, op_kind::scatter_},
    {"aten.scatter_reduce.two", lower::scatter, op_kind::scatter},
    {"aten.scatter_reduce_.two", lower::scatter, op_kind::scatter_},
    {"aten.select.int", lower::select, op_kind::select},
    {"aten.select_scatter.default", lower::select_scatter, op_kind::select_scatter},
    {"aten.sigmoid.default", lower::unary, op_kind::sigmoid},
    {"aten.sign.default", lower::unary, op_kind::sign},
    {"aten.sin.default", lower::unary, op_kind::sin},
    {"aten.slice.Tensor", lower::slice, op_kind::slice},
    {"aten.slice_scatter.default", lower::slice_scatter, op_kind::slice_scatter},
    {"aten.split.Tensor", lower::split, op_kind::slice},
    {"aten.split_with_sizes.default", lower::split, op_kind::slice},
    {"aten.sqrt.default", lower::unary, op_kind::sqrt},
    {"aten.squeeze.default", lower::squeeze_all, op_kind::squeeze},
    {"aten.squeeze.dim", lower::dim, op_kind::squeeze},
    {"aten.squeeze.dims", lower::squeeze_all, op_kind::squeeze},
    {"aten.sub.Scalar", lower::binary, op_kind::sub},
    {"aten.sub.Tensor", lower::binary, op_kind::sub},
    {"aten.sub_.Scalar", lower::binary, op_kind::sub_},
    {"aten.sub_.Tensor", lower::binary, op_kind::sub_},
    {"aten.sum.default", lower::reduce, op_kind::sum},
    {"aten.sum.dim_IntList", lower::reduce, op_kind::sum},
    {"aten.sym_size.int", lower::sym_size, op_kind::sym_size},
    {"aten.t.default", lower::t, op_kind::transpose},
    {"aten.tanh.default", lower::unary, op_kind::tanh},
    {"aten.transpose.int", lower::transpose, op_kind::transpose},
    {"aten.trunc.default", lower::unary, op_kind::trunc},
    {"aten.unbind.int", lower::unbind, op_kind::select},
    {"aten.unfold.default", lower::unfold, op_kind::as_strided},
    {"aten.unsqueeze.default", lower::dim, op_kind::unsqueeze},
    {"aten.var.correction", lower::var, op_kind::var},
    {"aten.var_mean.correction", lower::var, op_kind::var_mean},
    {"aten.view.default", lower::view, op_kind::view},
    {"aten.where.Scalar", lower::where, op_kind::where},
    {"aten.where.ScalarOther", lower::where, op_kind::where},
    {"aten.where.ScalarSelf", lower::where, op_kind::where},
    {"aten.where.self", lower::where, op_kind::where},
    {"aten.zeros.default", lower::factory, op_kind::zeros},
    {"higher_order.auto_functionalized", lower::auto_functionalized, op_kind::auto_functionalized},
    {"higher_order.cond", lower::control, op_kind::cond},
    {"higher_order.while_loop", lower::control, op_kind::while_loop},
    {"prims.convert_element_type.default", lower::convert, op_kind::convert},
    {"prims.fma.default", lower::fma, op_kind::fma},
    {"prims.iota.default", lower::iota, op_kind::add},
    {"prims.rev.default", lower::rev, op_kind::index},
};

constexpr bool rows_sorted() {
  for (std::size_t i = 1; i < sizeof(op_rows) / sizeof(op_rows[0]); ++i)
    if (!(op_rows[i - 1].name < op_rows[i].name)) return false;
  return true;
}
static_assert(rows_sorted(), "ctfx: fx op_rows must be sorted by name");

// The row for a `torch.ops.` name (without that prefix), or nullptr.
constexpr const op_row* find_op(std::string_view name) {
  std::size_t lo = 0, hi = sizeof(op_rows) / sizeof(op_rows[0]);
  while (lo < hi) {
    std::size_t mid = (lo + hi) / 2;
    if (op_rows[mid].name < name) lo = mid + 1;
    else hi = mid;
  }
  return lo < sizeof(op_rows) / sizeof(op_rows[0]) && op_rows[lo].name == name ? &op_rows[lo] : nullptr;
}

// Lowerings that rewrite a call into other ops (their rows name what PyTorch printed, not what the
// node is): never the name printed back for a node.
constexpr bool rewritten_on_import(lower how) {
  return how == lower::embedding || how == lower::index_select || how == lower::any_all || how == lower::squeeze_all ||
         how == lower::max_dim || how == lower::unbind || how == lower::iota ||
         how == lower::constant_pad || how == lower::rev || how == lower::attention || how == lower::unfold;
}

// The overload fx_print writes for a node (binary ops with a scalar use .Tensor too, as PyTorch's
// post-grad graphs do). Empty for the structural ops, which print as Python syntax.
constexpr std::string_view aten_name(op_kind k) {
  switch (k) {
    case op_kind::pow: return "aten.pow.Tensor_Tensor";
    case op_kind::remainder: return "aten.remainder.Tensor";
    case op_kind::fmod: return "aten.fmod.Tensor";
    case op_kind::bitwise_and: return "aten.bitwise_and.Tensor";
    case op_kind::bitwise_or: return "aten.bitwise_or.Tensor";
    case op_kind::bitwise_xor: return "aten.bitwise_xor.Tensor";
    case op_kind::bitwise_left_shift: return "aten.bitwise_left_shift.Tensor";
    case op_kind::bitwise_right_shift: return "aten.bitwise_right_shift.Tensor";
    case op_kind::floor_divide: return "aten.floor_divide.default";
    case op_kind::trunc_divide: return "aten.div.Tensor_mode";
    case op_kind::sum: return "aten.sum.dim_IntList";
    case op_kind::mean: return "aten.mean.dim";
    case op_kind::convert: return "prims.convert_element_type.default";
    case op_kind::fma: return "prims.fma.default";
    case op_kind::scatter: return "aten.scatter.src";
    case op_kind::scatter_: return "aten.scatter_.src";
    case op_kind::sqrt: return "aten.sqrt.default";
    case op_kind::alias: return "aten.alias.default";
    case op_kind::view: return "aten.view.default";
    case op_kind::transpose: return "aten.transpose.int";
    case op_kind::foreach_add: return "aten._foreach_add.List";
    case op_kind::foreach_mul: return "aten._foreach_mul.List";
    case op_kind::foreach_add_: return "aten._foreach_add_.List";
    case op_kind::foreach_mul_: return "aten._foreach_mul_.List";
    case op_kind::add: return "aten.add.Tensor";
    case op_kind::sub: return "aten.sub.Tensor";
    case op_kind::mul: return "aten.mul.Tensor";
    case op_kind::div: return "aten.div.Tensor";
    case op_kind::add_: return "aten.add_.Tensor";
    case op_kind::sub_: return "aten.sub_.Tensor";
    case op_kind::mul_: return "aten.mul_.Tensor";
    case op_kind::div_: return "aten.div_.Tensor";
    case op_kind::where: return "aten.where.self";
    case op_kind::logical_and: return "aten.logical_and.default";
    case op_kind::logical_or: return "aten.logical_or.default";
    case op_kind::logical_not: return "aten.logical_not.default";
    case op_kind::clamp_min: return "aten.clamp_min.Tensor";
    case op_kind::clamp_max: return "aten.clamp_max.Tensor";
    case op_kind::eq: return "aten.eq.Tensor";
    case op_kind::ne: return "aten.ne.Tensor";
    case op_kind::lt: return "aten.lt.Tensor";
    case op_kind::le: return "aten.le.Tensor";
    case op_kind::gt: return "aten.gt.Tensor";
    case op_kind::ge: return "aten.ge.Tensor";
    default: break;
  }
  // Otherwise the first row of the table with this op_kind that is the op itself (not a call the
  // importer rewrites into it: embedding is an index, any an amax, all a logical_not).
  for (const auto& r : op_rows)
    if (r.kind == k && !rewritten_on_import(r.how)) return r.name;
  return {};
}

// The overload for a scalar right operand where PyTorch prints a distinct one (`eq.Scalar`,
// `clamp_min.default`); empty where the .Tensor overload takes the scalar as well.
constexpr std::string_view aten_scalar_name(op_kind k) {
  switch (k) {
    case op_kind::remainder: return "aten.remainder.Scalar";
    case op_kind::fmod: return "aten.fmod.Scalar";
    case op_kind::bitwise_and: return "aten.bitwise_and.Scalar";
    case op_kind::bitwise_or: return "aten.bitwise_or.Scalar";
    case op_kind::bitwise_xor: return "aten.bitwise_xor.Scalar";
    case op_kind::bitwise_left_shift: return "aten.bitwise_left_shift.Tensor_Scalar";
    case op_kind::bitwise_right_shift: return "aten.bitwise_right_shift.Tensor_Scalar";
    case op_kind::floor_divide: return "aten.floor_divide.Scalar";
    case op_kind::trunc_divide: return "aten.div.Scalar_mode";
    case op_kind::clamp_min: return "aten.clamp_min.default";
    case op_kind::clamp_max: return "aten.clamp_max.default";
    case op_kind::eq: return "aten.eq.Scalar";
    case op_kind::ne: return "aten.ne.Scalar";
    case op_kind::lt: return "aten.lt.Scalar";
    case op_kind::le: return "aten.le.Scalar";
    case op_kind::gt: return "aten.gt.Scalar";
    case op_kind::ge: return "aten.ge.Scalar";
    default: return {};
  }
}

}  // namespace ctfx::fx
#include "../core/diagnostics_pop.hpp"
