// ctfx/passes/masked_puts_as_where.hpp — a masked fill as the elementwise op it is (Inductor's
// index_put_as_masked_fill lowering):
//
//   index_put(x, [mask], v)  ->  where(mask, v, x)
//
// when the one index is a bool mask of x's shape, v holds one value of x's dtype, and x is
// contiguous. The put is then elementwise: fusion computes the mask, the select and an epilogue's
// write-back in one pass over x (as a put, the mask is a tensor of its own, written and read back).
//
// The same bits, by construction: each element is v's where the mask is set and x's elsewhere,
// copied, not computed. Left as puts: an accumulating put (x + v rounds), float16 and bfloat16
// (where computes in float, which turns a NaN's payload canonical), a mask of fewer dimensions or
// values of more than one element (not elementwise over x), a non-contiguous x (where's result is
// contiguous: the layout would change), and the in-place index_put_ a graph wrote itself.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include "../ops/meta.hpp"
#include "rewrite.hpp"

namespace ctfx {

namespace detail {

// The mask of put i when the put is a masked fill that where computes with the same bits, else -1.
constexpr std::int32_t masked_fill_mask(const ir& g, std::int32_t i) {
  const node& n = g[i];
  if ((n.op != op_kind::index_put && n.op != op_kind::unsafe_index_put) || n.nargs != 3 || n.aux != 0) return -1;
  const std::int32_t x = g.arg(i, 0), v = g.arg(i, 1), mask = g.arg(i, 2);
  if (mask < 0) return -1;
  const tensor_meta& xm = g.meta(x);
  const tensor_meta& vm = g.meta(v);
  const tensor_meta& mm = g.meta(mask);
  if (mm.dt != dtype::b8 || !xm.is_tensor() || !vm.is_tensor() || !mm.is_tensor() || !mm.same_shape(xm) || !xm.is_contiguous())
    return -1;
  if (vm.dt != xm.dt || xm.dt == dtype::f16 || xm.dt == dtype::bf16 || vm.rank > xm.rank) return -1;
  for (int d = 0; d < vm.rank; ++d)
    if (!vm.size[d].is_static() || vm.size[d].value() != 1) return -1;
  return mask;
}

}  // namespace detail

// Whether the graph has a put masked_puts_as_where rewrites.
constexpr bool has_masked_fill(const ir& g) {
  for (std::int32_t i = 0; i < g.size(); ++i)
    if (detail::masked_fill_mask(g, i) >= 0) return true;
  return false;
}

// By value, so that a graph without masked fills is moved through, not copied.
constexpr ir masked_puts_as_where(ir g) {
  if (!g.error.ok()) return g;
  std::int32_t fills = 0;
  for (std::int32_t i = 0; i < g.size(); ++i) fills += detail::masked_fill_mask(g, i) >= 0;
  if (fills == 0) return g;
  rewrite rw(g);
  rw.reserve_inserts(static_cast<std::size_t>(fills), 3 * static_cast<std::size_t>(fills), 0);
  for (std::int32_t i = 0; i < g.size(); ++i)
    if (const std::int32_t mask = detail::masked_fill_mask(g, i); mask >= 0)
      rw.replace(i, rw.insert_before(i, node_like(g, i, op_kind::where), {mask, g.arg(i, 1), g.arg(i, 0)}));
  return static_cast<rewrite&&>(rw).apply();
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
