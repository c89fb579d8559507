// ctfx/graph/builder_products.hpp — the DSL's matrix products (ops/products.hpp): mm, addmm, bmm,
// baddbmm, and matmul for matrices and batches of them. They run as extern kernels (a CBLAS on
// the host: link ctfx::blas; cuBLAS on CUDA).
//
//   auto y = ctfx::addmm(bias, x, w.transpose(0, 1));   // nn.Linear: bias + x @ w^T
#pragma once
#include "../core/diagnostics_push.hpp"
#include "builder.hpp"

namespace ctfx {

/// `torch.mm(a, b)` (`aten.mm`): a [m, k] @ b [k, n] -> [m, n], operands of one dtype (f32, f64, or
/// i8/i32/i64, exact). A transposed operand is read as it is (BLAS's transposed form), not copied.
constexpr tensor mm(tensor a, tensor b, source_loc at = source_loc::current()) {
  const builder::call_site site(a.b, at);
  return a.b ? a.b->make(op_kind::mm, {a, b}) : a;
}
/// `torch.addmm(c, a, b, beta=, alpha=)` (`aten.addmm`): beta * c + alpha * (a @ b), c broadcast to
/// [m, n] (a bias [n], or [m, n]); with beta 0, c is not read (NaN in it does not propagate).
constexpr tensor addmm(tensor c, tensor a, tensor b, double beta = 1.0, double alpha = 1.0, source_loc at = source_loc::current()) {
  const builder::call_site site(a.b, at);
  return a.b ? a.b->make(op_kind::addmm, {c, a, b}, {product_param(beta), product_param(alpha)}) : a;
}
/// `torch.bmm(a, b)` (`aten.bmm`): a [B, m, k] @ b [B, k, n] -> [B, m, n], batch by batch.
constexpr tensor bmm(tensor a, tensor b, source_loc at = source_loc::current()) {
  const builder::call_site site(a.b, at);
  return a.b ? a.b->make(op_kind::bmm, {a, b}) : a;
}
/// `torch.baddbmm(c, a, b, beta=, alpha=)` (`aten.baddbmm`): beta * c + alpha * (a @ b) per batch,
/// c broadcast to [B, m, n].
constexpr tensor baddbmm(tensor c, tensor a, tensor b, double beta = 1.0, double alpha = 1.0, source_loc at = source_loc::current()) {
  const builder::call_site site(a.b, at);
  return a.b ? a.b->make(op_kind::baddbmm, {c, a, b}, {product_param(beta), product_param(alpha)}) : a;
}
/// `torch.matmul(a, b)` for matrices (mm) and batches of matrices of one batch extent (bmm); other
/// ranks are refused by mm's rule (reshape them first).
constexpr tensor matmul(tensor a, tensor b, source_loc at = source_loc::current()) {
  const builder::call_site site(a.b, at);
  if (!a.b || !a.b->check(a) || !a.b->check(b)) return a;
  return a.b->make(a.rank() == 3 && b.rank() == 3 ? op_kind::bmm : op_kind::mm, {a, b});
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
#include "builder_attention.hpp"  // composed of the products above
