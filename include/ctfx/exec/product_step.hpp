// ctfx/exec/product_step.hpp — a matrix product's step (mm, addmm, bmm, baddbmm), as both executors
// run it: an extern kernel (kernels/matmul.hpp) that writes the result into its planned buffer or
// the caller's output. runtime_plan's dispatch calls product_step; compiled<G> calls
// kernels::run_product with its operands and scalars fixed in the compiler.
// ctfx: nvcc-tested-by test/cuda/matmul_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <string>
#include "../graph/ir.hpp"
#include "../kernels/matmul.hpp"
#include "../ops/products.hpp"
#include "layouts.hpp"
#include "tensor.hpp"

namespace ctfx::detail {

// A product's failure while it ran (a cuBLAS error): the node and the reason. (Its availability was
// checked with the run's other checks, before the first write.)
inline run_status product_failure(const ir& g, std::int32_t i, const std::string& e) {
  return run_status::failure(i, "rule blas-available: " + node_label(g, i) + " (" + std::string(name_of(g[i].op)) + "): " + e);
}

// Node i of graph g, a product: out = beta * c + alpha * (a @ b), views from `view(node)`.
template <class View>
run_status product_step(const ir& g, std::int32_t i, const device_ctx& ctx, const strided& out, const View& view) {
  const op_kind k = g[i].op;
  const bool acc = k == op_kind::addmm || k == op_kind::baddbmm;
  const product_scalars s = product_scalars_of(g, i);
  const strided c = acc ? view(g.arg(i, 0)) : strided{};
  const std::string e = kernels::run_product(ctx, out, acc ? &c : nullptr, view(g.arg(i, acc ? 1 : 0)), view(g.arg(i, acc ? 2 : 1)), s.beta, s.alpha);
  return e.empty() ? run_status{} : product_failure(g, i, e);
}

}  // namespace ctfx::detail
#include "../core/diagnostics_pop.hpp"
