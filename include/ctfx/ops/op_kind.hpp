// ctfx/ops/op_kind.hpp — the closed set of built-in operations as a value (what a node stores), with
// the facts about each that every pass needs. The op *types* (ctfx::ops::*_t, with their schemas)
// live in the family headers; each carries its op_kind, and ops/registry.hpp checks that both agree.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ctfx {

/// The built-in ops, as a value (what a node stores). docs/ops.md lists each with its C++ spelling and ATen names.
enum class op_kind : std::uint8_t {
  // graph structure
  placeholder, output, getitem, sym_size,
  // copies and aliases
  copy_, copy, clone, alias,
  // factories
  empty, empty_like, zeros, ones, full, fill_,
  // elementwise unary
  neg, abs, exp, exp2, log, log2, log10, sin, cos, sqrt, relu, ceil, floor, round, trunc, tanh, erf, log1p, expm1, sigmoid, rsqrt, sign, convert,
  bitwise_not, logical_not,
  // elementwise binary (a tensor or a scalar right operand) and their in-place twins
  add, sub, mul, div, maximum, minimum, pow, remainder, fmod, hypot, atan2, floor_divide, trunc_divide,
  // integer bitwise ops (bool operands import as the logical ops); shifts as PyTorch's CPU kernels
  bitwise_and, bitwise_or, bitwise_xor, bitwise_left_shift, bitwise_right_shift,
  add_, sub_, mul_, div_,
  clamp_min, clamp_max,
  // comparisons and logical binary ops: bool results, computed in the operands' promoted type
  eq, ne, lt, le, gt, ge, logical_and, logical_or,
  // elementwise ternary: where(cond, a, b); fma(a, b, c) = a * b + c rounded once (prims.fma)
  where, fma,
  // views
  slice, select, diagonal, as_strided, view, permute, transpose, unsqueeze, squeeze, expand,
  // functional view scatters and the generalized scatter of canonicalize_view_scatter_ops
  slice_scatter, select_scatter, diagonal_scatter, as_strided_scatter,
  generalized_scatter, generalized_scatter_,
  // indexing
  index_put, index_put_, unsafe_index_put, unsafe_index_put_, index,
  // along one dimension: gather(x, idx), scatter(x, src, idx) (assign or add) and its in-place twin
  gather, scatter, scatter_,
  // reductions and concatenation
  sum, amax, amin, prod, mean, argmax, argmin, cumsum, cumprod, logcumsumexp, var, var_mean, cat,
  // matrix products, extern kernels (a CBLAS on the host, cuBLAS on CUDA: kernels/matmul.hpp)
  mm, addmm, bmm, baddbmm,
  // list ops (results are tuples read with getitem)
  foreach_add, foreach_mul, foreach_add_, foreach_mul_,
  // collectives over the run's communicator (ctfx/comm), and the halo exchange of a 2-D decomposition
  all_reduce, all_reduce_, broadcast, broadcast_, all_gather, reduce_scatter,
  all_gather_blocks, all_gather_blocks_, reduce_scatter_blocks, reduce_scatter_blocks_,
  halo_exchange, halo_exchange_,
  // user ops: `custom` calls a user op that mutates its arguments directly (after reinplacing, or a
  // pure user op); `auto_functionalized` is its functional form (returns the op's results followed by
  // the new value of each mutated argument), as Inductor's auto_functionalized_v1.
  custom, auto_functionalized,
  // control flow (ops/control.hpp): cond(pred, operands...) runs one of two subgraphs;
  // while_loop(carried..., additional...) runs its body subgraph while its condition subgraph holds.
  // Both return a tuple read with getitem.
  cond, while_loop,
  count_
};

/// The op families of docs/ops.md: what the passes and the executors treat alike.
enum class op_family : std::uint8_t {
  structure, copy, factory, unary, binary, ternary, view, scatter, index, reduction, list, collective, user, product,
  control
};

/// What the passes know of an op kind: its name, family, view-ness, in-place twin, and more.
struct op_facts {
  std::string_view name;        ///< the ATen-style name printed in listings
  op_family family;  ///< elementwise, view, scatter, list, ...
  bool is_view = false;         ///< result aliases argument 0 (Tensor(a))
  bool mutates = false;         ///< writes an argument in place (Tensor(a!))
  std::int8_t mutated_arg = -1; ///< which argument (for list ops: the first list)
  op_kind twin = op_kind::count_;  ///< functional <-> in-place twin, or view <-> scatter twin
};

/// One row per op_kind, in enum order (checked by a static_assert below).
inline constexpr op_facts op_table[] = {
    {"placeholder", op_family::structure},
    {"output", op_family::structure},
    {"getitem", op_family::structure},
    {"sym_size", op_family::structure},
    {"copy_", op_family::copy, false, true, 0},
    {"copy", op_family::copy},
    {"clone", op_family::copy},
    {"alias", op_family::copy, true},
    {"empty", op_family::factory},
    {"empty_like", op_family::factory},
    {"zeros", op_family::factory},
    {"ones", op_family::factory},
    {"full", op_family::factory},
    {"fill_", op_family::factory, false, true, 0},
    {"neg", op_family::unary},
    {"abs", op_family::unary},
    {"exp", op_family::unary},
    {"exp2", op_family::unary},
    {"log", op_family::unary},
    {"log2", op_family::unary},
    {"log10", op_family::unary},
    {"sin", op_family::unary},
    {"cos", op_family::unary},
    {"sqrt", op_family::unary},
    {"relu", op_family::unary},
    {"ceil", op_family::unary},
    {"floor", op_family::unary},
    {"round", op_family::unary},
    {"trunc", op_family::unary},
    {"tanh", op_family::unary},
    {"erf", op_family::unary},
    {"log1p", op_family::unary},
    {"expm1", op_family::unary},
    {"sigmoid", op_family::unary},
    {"rsqrt", op_family::unary},
    {"sign", op_family::unary},
    {"convert_element_type", op_family::unary},
    {"bitwise_not", op_family::unary},
    {"logical_not", op_family::unary},
    {"add", op_family::binary, false, false, -1, op_kind::add_},
    {"sub", op_family::binary, false, false, -1, op_kind::sub_},
    {"mul", op_family::binary, false, false, -1, op_kind::mul_},
    {"div", op_family::binary, false, false, -1, op_kind::div_},
    {"maximum", op_family::binary},
    {"minimum", op_family::binary},
    {"pow", op_family::binary},
    {"remainder", op_family::binary},
    {"fmod", op_family::binary},
    {"hypot", op_family::binary},
    {"atan2", op_family::binary},
    {"floor_divide", op_family::binary},
    {"trunc_divide", op_family::binary},
    {"bitwise_and", op_family::binary},
    {"bitwise_or", op_family::binary},
    {"bitwise_xor", op_family::binary},
    {"bitwise_left_shift", op_family::binary},
    {"bitwise_right_shift", op_family::binary},
    {"add_", op_family::binary, false, true, 0, op_kind::add},
    {"sub_", op_family::binary, false, true, 0, op_kind::sub},
    {"mul_", op_family::binary, false, true, 0, op_kind::mul},
    {"div_", op_family::binary, false, true, 0, op_kind::div},
    {"clamp_min", op_family::binary},
    {"clamp_max", op_family::binary},
    {"eq", op_family::binary},
    {"ne", op_family::binary},
    {"lt", op_family::binary},
    {"le", op_family::binary},
    {"gt", op_family::binary},
    {"ge", op_family::binary},
    {"logical_and", op_family::binary},
    {"logical_or", op_family::binary},
    {"where", op_family::ternary},
    {"fma", op_family::ternary},
    {"slice", op_family::view, true, false, -1, op_kind::slice_scatter},
    {"select", op_family::view, true, false, -1, op_kind::select_scatter},
    {"diagonal", op_family::view, true, false, -1, op_kind::diagonal_scatter},
    {"as_strided", op_family::view, true, false, -1, op_kind::as_strided_scatter},
    {"view", op_family::view, true},
    {"permute", op_family::view, true},
    {"transpose", op_family::view, true},
    {"unsqueeze", op_family::view, true},
    {"squeeze", op_family::view, true},
    {"expand", op_family::view, true},
    {"slice_scatter", op_family::scatter, false, false, -1, op_kind::slice},
    {"select_scatter", op_family::scatter, false, false, -1, op_kind::select},
    {"diagonal_scatter", op_family::scatter, false, false, -1, op_kind::diagonal},
    {"as_strided_scatter", op_family::scatter, false, false, -1, op_kind::as_strided},
    {"_generalized_scatter", op_family::scatter, false, false, -1, op_kind::generalized_scatter_},
    {"_inplace_generalized_scatter", op_family::scatter, false, true, 0, op_kind::generalized_scatter},
    {"index_put", op_family::index, false, false, -1, op_kind::index_put_},
    {"index_put_", op_family::index, false, true, 0, op_kind::index_put},
    {"_unsafe_index_put", op_family::index, false, false, -1, op_kind::unsafe_index_put_},
    {"_unsafe_index_put_", op_family::index, false, true, 0, op_kind::unsafe_index_put},
    {"index", op_family::index},
    {"gather", op_family::index},
    {"scatter", op_family::index, false, false, -1, op_kind::scatter_},
    {"scatter_", op_family::index, false, true, 0, op_kind::scatter},
    {"sum", op_family::reduction},
    {"amax", op_family::reduction},
    {"amin", op_family::reduction},
    {"prod", op_family::reduction},
    {"mean", op_family::reduction},
    {"argmax", op_family::reduction},
    {"argmin", op_family::reduction},
    {"cumsum", op_family::reduction},
    {"cumprod", op_family::reduction},
    {"logcumsumexp", op_family::reduction},
    {"var", op_family::reduction},
    {"var_mean", op_family::reduction},
    {"cat", op_family::reduction},
    {"mm", op_family::product},
    {"addmm", op_family::product},
    {"bmm", op_family::product},
    {"baddbmm", op_family::product},
    {"_foreach_add", op_family::list, false, false, -1, op_kind::foreach_add_},
    {"_foreach_mul", op_family::list, false, false, -1, op_kind::foreach_mul_},
    {"_foreach_add_", op_family::list, false, true, 0, op_kind::foreach_add},
    {"_foreach_mul_", op_family::list, false, true, 0, op_kind::foreach_mul},
    {"all_reduce", op_family::collective, false, false, -1, op_kind::all_reduce_},
    {"all_reduce_", op_family::collective, false, true, 0, op_kind::all_reduce},
    {"broadcast", op_family::collective, false, false, -1, op_kind::broadcast_},
    {"broadcast_", op_family::collective, false, true, 0, op_kind::broadcast},
    {"all_gather_into_tensor", op_family::collective},
    {"reduce_scatter_tensor", op_family::collective},
    {"all_gather_blocks", op_family::collective, false, false, -1, op_kind::all_gather_blocks_},
    {"all_gather_blocks_", op_family::collective, false, true, 0, op_kind::all_gather_blocks},
    {"reduce_scatter_blocks", op_family::collective, false, false, -1, op_kind::reduce_scatter_blocks_},
    {"reduce_scatter_blocks_", op_family::collective, false, true, 0, op_kind::reduce_scatter_blocks},
    {"halo_exchange", op_family::collective, false, false, -1, op_kind::halo_exchange_},
    {"halo_exchange_", op_family::collective, false, true, 0, op_kind::halo_exchange},
    {"custom", op_family::user},
    {"auto_functionalized", op_family::user},
    {"cond", op_family::control},
    {"while_loop", op_family::control},
};
static_assert(sizeof(op_table) / sizeof(op_table[0]) == static_cast<std::size_t>(op_kind::count_),
              "ctfx: op_table must have one row per op_kind, in enum order");

/// The facts of op `k` (its row of op_table).
constexpr const op_facts& facts(op_kind k) { return op_table[static_cast<std::size_t>(k)]; }
/// The op's ATen-style name ("add", "index_put_").
constexpr std::string_view name_of(op_kind k) { return facts(k).name; }
/// Whether the result is a view of argument 0.
constexpr bool is_view_op(op_kind k) { return facts(k).is_view; }
/// Whether the op writes into an argument (an in-place op: add_, copy_, index_put_, ...).
constexpr bool is_mutating(op_kind k) { return facts(k).mutates; }
/// The collectives whose ranks meet along dimension 0, in blocks of a group size.
constexpr bool meets_in_blocks(op_kind k) {
  return k == op_kind::all_gather || k == op_kind::reduce_scatter || k == op_kind::all_gather_blocks ||
         k == op_kind::all_gather_blocks_ || k == op_kind::reduce_scatter_blocks || k == op_kind::reduce_scatter_blocks_;
}
/// The elementwise families by their ranges of the enum, not by op_table: CUDA kernels ask these
/// at run time, and op_table lives in host memory (a kernel that reads it traps). The
/// static_assert below checks the ranges against the table.
constexpr bool is_unary(op_kind k) { return k >= op_kind::neg && k <= op_kind::logical_not; }
/// Elementwise binary ops (add to logical_or, in enum order).
constexpr bool is_binary(op_kind k) { return k >= op_kind::add && k <= op_kind::logical_or; }
/// The elementwise ternary ops: where and fma.
constexpr bool is_ternary(op_kind k) { return k == op_kind::where || k == op_kind::fma; }
/// Ops that compute element i of their result from element i of each argument, with no side effect
/// (what fusion puts in one loop: plan/fusion.hpp).
constexpr bool is_fusible_elementwise(op_kind k) {
  return (is_unary(k) || is_binary(k) || is_ternary(k) || k == op_kind::clone) && !is_mutating(k);
}
/// Whether is_unary, is_binary and is_ternary agree with op_table's families (checked by a static_assert).
constexpr bool elementwise_ranges_match_table() {
  for (std::size_t i = 0; i < static_cast<std::size_t>(op_kind::count_); ++i) {
    const auto k = static_cast<op_kind>(i);
    if (is_unary(k) != (facts(k).family == op_family::unary) || is_binary(k) != (facts(k).family == op_family::binary) ||
        is_ternary(k) != (facts(k).family == op_family::ternary))
      return false;
  }
  return true;
}
static_assert(elementwise_ranges_match_table(),
              "ctfx: op_kind's unary ops must run from neg to logical_not, its binary ops from add to logical_or, "
              "and where and fma must be its ternary ops (is_unary/is_binary/is_ternary test those ranges)");
/// Binary ops whose result is bool, computed in the promoted type of the operands (torch.result_type)
/// rather than in the result's type.
constexpr bool is_comparison(op_kind k) {
  return k == op_kind::eq || k == op_kind::ne || k == op_kind::lt || k == op_kind::le || k == op_kind::gt || k == op_kind::ge;
}
/// logical_and, logical_or, logical_not (bool results).
constexpr bool is_logical(op_kind k) {
  return k == op_kind::logical_and || k == op_kind::logical_or || k == op_kind::logical_not;
}
/// The integer bitwise ops (and, or, xor, not, the shifts): integer or bool operands only.
constexpr bool is_bitwise(op_kind k) { return k == op_kind::bitwise_not || (k >= op_kind::bitwise_and && k <= op_kind::bitwise_right_shift); }
/// Whether the op's result is bool (a comparison or a logical op).
constexpr bool yields_bool(op_kind k) { return is_comparison(k) || is_logical(k); }
/// slice_scatter, select_scatter, diagonal_scatter, as_strided_scatter.
constexpr bool is_view_scatter(op_kind k) {
  return k == op_kind::slice_scatter || k == op_kind::select_scatter ||
         k == op_kind::diagonal_scatter || k == op_kind::as_strided_scatter;
}
/// A view scatter or a chain of them (generalized_scatter, and its in-place form).
constexpr bool is_scatter(op_kind k) {
  return is_view_scatter(k) || k == op_kind::generalized_scatter || k == op_kind::generalized_scatter_;
}
/// Ops with index tensors (checked against their extents before any write): index_put (args
/// x, values, indices...) and index (x, indices...). The argument of the first index.
constexpr bool is_index_op(op_kind k) { return facts(k).family == op_family::index; }
/// The index ops that read only (index, gather): their result is fresh, x is not updated.
constexpr bool is_index_read(op_kind k) { return k == op_kind::index || k == op_kind::gather; }
/// The index ops along one dimension (gather, scatter, scatter_): one index tensor of the result's
/// (gather) or the source's (scatter) shape picks the position along `dim` (the node's param 0);
/// every other dimension is the index element's own coordinate.
constexpr bool is_along_dim(op_kind k) { return k == op_kind::gather || k == op_kind::scatter || k == op_kind::scatter_; }
/// The argument of the first index tensor: 1 for index and gather, 2 for the index_puts and scatters.
constexpr int first_index_arg(op_kind k) { return is_index_read(k) ? 1 : 2; }
/// The matrix products (mm, addmm, bmm, baddbmm): extern kernels, never fused.
constexpr bool is_product(op_kind k) { return k >= op_kind::mm && k <= op_kind::baddbmm; }
/// The _foreach ops (tuple results).
constexpr bool is_list_op(op_kind k) { return facts(k).family == op_family::list; }

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
