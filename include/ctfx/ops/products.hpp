// ctfx/ops/products.hpp — the matrix products mm, addmm, bmm and baddbmm: their tags, schemas and
// metadata rules. They run as extern kernels (kernels/matmul.hpp: a CBLAS on the host, cuBLAS on
// CUDA), as Inductor calls them, never fused; `matmul` and `linear` reach them through PyTorch's
// decompositions.
//
//   mm(a, b)                  a [m, k], b [k, n]                 -> [m, n]
//   addmm(c, a, b)            c broadcast to [m, n]              -> beta * c + alpha * (a @ b)
//   bmm(a, b)                 a [B, m, k], b [B, k, n]           -> [B, m, n]
//   baddbmm(c, a, b)          c broadcast to [B, m, n]           -> beta * c + alpha * (a @ b)
//   params (addmm, baddbmm): beta, alpha, each the bits of a double (product_scalars below)
#pragma once
#include "../core/diagnostics_push.hpp"
#include <bit>
#include <cstdint>
#include "meta_util.hpp"
#include "schema.hpp"

namespace ctfx {
namespace ops {
struct mm_t : op_tag<op_kind::mm, "mm(Tensor self, Tensor mat2) -> Tensor"> {};
struct addmm_t : op_tag<op_kind::addmm, "addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"> {};
struct bmm_t : op_tag<op_kind::bmm, "bmm(Tensor self, Tensor mat2) -> Tensor"> {};
struct baddbmm_t : op_tag<op_kind::baddbmm, "baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"> {};
}  // namespace ops

/// beta and alpha of an addmm or baddbmm (1 and 1 for mm and bmm).
struct product_scalars {
  double beta = 1.0;   ///< the factor of the added tensor c
  double alpha = 1.0;  ///< the factor of the product
};
/// The params that carry beta and alpha (exact: a double's bits in an integer).
constexpr sym_expr product_param(double v) { return sym_expr(std::bit_cast<std::int64_t>(v)); }
/// beta and alpha as node i's params hold them.
constexpr product_scalars product_scalars_of(const ir& g, std::int32_t i) {
  const node& n = g[i];
  if ((n.op != op_kind::addmm && n.op != op_kind::baddbmm) || n.npar < 2) return {};
  return {std::bit_cast<double>(static_cast<std::int64_t>(g.iparam(i, 0))), std::bit_cast<double>(static_cast<std::int64_t>(g.iparam(i, 1)))};
}

namespace detail {

// The product's operands: dtypes equal, ranks 2 (mm) or 3 (bmm), inner extents equal, batch
// extents equal; the result is fresh and row-major, as PyTorch's CPU and CUDA kernels make it.
constexpr bool product_meta(ir& g, std::int32_t id, const tensor_meta* c, const tensor_meta& a, const tensor_meta& b, tensor_meta& out) {
  const op_kind k = g[id].op;
  const bool batched = k == op_kind::bmm || k == op_kind::baddbmm;
  const int rank = batched ? 3 : 2;
  const char* what = batched ? "batched matrices [B, m, k] and [B, k, n]" : "matrices [m, k] and [k, n]";
  if (a.rank != rank || b.rank != rank) {
    auto m = about(g, id);
    m << name_of(k) << " multiplies " << what << ", not "; put_type(m, g, a); m << " and "; put_type(m, g, b);
    m << " (reshape the operands, or use bmm for a batch)";
    fail(g, id, rule::bad_argument, m);
    return false;
  }
  if (a.dt != b.dt || (c && c->dt != a.dt)) {
    auto m = about(g, id);
    m << name_of(k) << "'s operands must have one dtype, as PyTorch's: "; put_type(m, g, a); m << " and "; put_type(m, g, b);
    if (c) { m << ", and "; put_type(m, g, *c); }
    fail(g, id, rule::dtype_mismatch, m);
    return false;
  }
  if (a.dt == dtype::b8 || a.dt == dtype::f16 || a.dt == dtype::bf16) {
    auto m = about(g, id);
    m << name_of(k) << " of "; put_type(m, g, a);
    m << ": products run on f32, f64 (BLAS) and i8, i32, i64 (an exact loop); f16 and bf16 are refused, since PyTorch's "
         "kernels accumulate them in f32 in an order ctfx cannot reproduce (convert to f32 first)";
    fail(g, id, rule::dtype_mismatch, m);
    return false;
  }
  const int d = batched ? 1 : 0;
  if (!(a.size[d + 1] == b.size[d]) || (batched && !(a.size[0] == b.size[0]))) {
    auto m = about(g, id);
    m << name_of(k) << "'s operands "; put_type(m, g, a); m << " and "; put_type(m, g, b);
    m << (batched && !(a.size[0] == b.size[0]) ? " differ in their batch extent" : ": the inner extents differ");
    m << " (they must be equal; symbolic ones equal by their expressions)";
    fail(g, id, rule::broadcast_shapes, m);
    return false;
  }
  tensor_meta r{};
  r.dt = a.dt;
  r.rank = static_cast<std::int8_t>(rank);
  if (batched) r.size[0] = a.size[0];
  r.size[d] = a.size[d];
  r.size[d + 1] = b.size[d + 1];
  r.set_contiguous();
  r.storage = fresh;
  if (c) {  // c broadcasts to the result's shape (never enlarges it)
    tensor_meta s = r;
    bool fits = broadcast_into(s, *c) && s.rank == r.rank;
    for (int i = 0; fits && i < r.rank; ++i) fits = s.size[i] == r.size[i];
    if (!fits) {
      auto m = about(g, id);
      m << name_of(k) << "'s input "; put_type(m, g, *c); m << " does not broadcast to the product's shape "; put_type(m, g, r);
      fail(g, id, rule::broadcast_shapes, m);
      return false;
    }
    const product_scalars s2 = product_scalars_of(g, id);
    const bool whole = static_cast<double>(static_cast<std::int64_t>(s2.beta)) == s2.beta &&
                       static_cast<double>(static_cast<std::int64_t>(s2.alpha)) == s2.alpha;
    if (is_integral(a.dt) && !whole) {
      auto m = about(g, id);
      m << name_of(k) << " of "; put_type(m, g, a); m << ": beta and alpha must be integers for integral operands (as PyTorch requires)";
      fail(g, id, rule::bad_argument, m);
      return false;
    }
  }
  out = r;
  return true;
}

}  // namespace detail
}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
