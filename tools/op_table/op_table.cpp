// op_table: prints docs/ops.md, the reference of ctfx's ops, from the op registry (ops/op_kind.hpp's
// op_table), the FX importer's table (graph/fx_opmap.hpp) and the C++ spelling of each op below.
// An op added to op_kind without its spelling here does not compile (-Werror=switch); docs/ops.md
// out of date with the registry fails the test docs.op_table, which regenerates and compares it.
//
//   op_table > docs/ops.md
#include <cstdio>
#include <string>
#include <string_view>
#include <ctfx.hpp>
#include <ctfx/graph/fx_opmap.hpp>

#if defined(__GNUC__)
#pragma GCC diagnostic error "-Wswitch"
#endif

namespace {

using ctfx::op_kind;

// How a user writes the op in the C++ builder (graph/builder.hpp); "" where the builder has no
// spelling: ops only the passes make, or only the importer reads.
std::string_view dsl(op_kind k) {
  switch (k) {
    case op_kind::placeholder: return "`g.input(name, dtype, sizes)`";
    case op_kind::output: return "`g.output(t...)`";
    case op_kind::getitem: return "`tuple[i]`";
    case op_kind::sym_size: return "";
    case op_kind::copy_: return "`g.update(x, v)` (the epilogue), `x.copy_(v)`";
    case op_kind::copy: return "`ctfx::copy(dst, src)`";
    case op_kind::clone: return "`ctfx::clone(x)`";
    case op_kind::alias: return "`ctfx::alias(x)`";
    case op_kind::empty: return "`g.empty(sizes, dtype)`";
    case op_kind::empty_like: return "`ctfx::empty_like(x)`";
    case op_kind::zeros: return "`g.zeros(sizes, dtype)`";
    case op_kind::ones: return "`g.ones(sizes, dtype)`";
    case op_kind::full: return "`g.full(sizes, value, dtype)`";
    case op_kind::fill_: return "`x.fill_(value)`";
    case op_kind::neg: return "`-x`, `ctfx::neg(x)`";
    case op_kind::abs: return "`ctfx::abs(x)`";
    case op_kind::exp: return "`ctfx::exp(x)`";
    case op_kind::exp2: return "`ctfx::exp2(x)`";
    case op_kind::log: return "`ctfx::log(x)`";
    case op_kind::log2: return "`ctfx::log2(x)`";
    case op_kind::log10: return "`ctfx::log10(x)`";
    case op_kind::sin: return "`ctfx::sin(x)`";
    case op_kind::cos: return "`ctfx::cos(x)`";
    case op_kind::sqrt: return "`ctfx::sqrt(x)`";
    case op_kind::relu: return "`ctfx::relu(x)`";
    case op_kind::ceil: return "`ctfx::ceil(x)`";
    case op_kind::floor: return "`ctfx::floor(x)`";
    case op_kind::round: return "`ctfx::round(x)`";
    case op_kind::trunc: return "`ctfx::trunc(x)`";
    case op_kind::tanh: return "`ctfx::tanh(x)`";
    case op_kind::erf: return "`ctfx::erf(x)`";
    case op_kind::log1p: return "`ctfx::log1p(x)`";
    case op_kind::expm1: return "`ctfx::expm1(x)`";
    case op_kind::sigmoid: return "`ctfx::sigmoid(x)`";
    case op_kind::rsqrt: return "`ctfx::rsqrt(x)`";
    case op_kind::sign: return "`ctfx::sign(x)`";
    case op_kind::convert: return "`x.to(dtype)`";
    case op_kind::bitwise_not: return "`ctfx::bitwise_not(x)`";
    case op_kind::logical_not: return "`ctfx::logical_not(x)`";
    case op_kind::add: return "`a + b`, `a + 2`, `a + 0.5`";
    case op_kind::sub: return "`a - b`";
    case op_kind::mul: return "`a * b`";
    case op_kind::div: return "`a / b`";
    case op_kind::maximum: return "`ctfx::maximum(a, b)`";
    case op_kind::minimum: return "`ctfx::minimum(a, b)`";
    case op_kind::pow: return "`ctfx::pow(a, b)`, `ctfx::pow(a, 2.0)`; `ctfx::reciprocal(x)` is `pow(x, -1)`";
    case op_kind::remainder: return "`ctfx::remainder(a, b)`";
    case op_kind::fmod: return "`ctfx::fmod(a, b)`";
    case op_kind::hypot: return "`ctfx::hypot(a, b)`";
    case op_kind::atan2: return "`ctfx::atan2(a, b)`";
    case op_kind::floor_divide: return "`ctfx::floor_divide(a, b)`";
    case op_kind::trunc_divide: return "`ctfx::trunc_divide(a, b)`";
    case op_kind::bitwise_and: return "`ctfx::bitwise_and(a, b)`";
    case op_kind::bitwise_or: return "`ctfx::bitwise_or(a, b)`";
    case op_kind::bitwise_xor: return "`ctfx::bitwise_xor(a, b)`";
    case op_kind::bitwise_left_shift: return "`ctfx::bitwise_left_shift(a, b)`";
    case op_kind::bitwise_right_shift: return "`ctfx::bitwise_right_shift(a, b)`";
    case op_kind::add_: return "`x.add_(o)`";
    case op_kind::sub_: return "";
    case op_kind::mul_: return "`x.mul_(o)`";
    case op_kind::div_: return "";
    case op_kind::clamp_min: return "`ctfx::clamp_min(x, lo)`, `ctfx::clamp(x, lo, hi)`";
    case op_kind::clamp_max: return "`ctfx::clamp_max(x, hi)`";
    case op_kind::eq: return "`ctfx::eq(a, b)`";
    case op_kind::ne: return "`ctfx::ne(a, b)`; `ctfx::isnan(x)` is `ne(x, x)`, `ctfx::logical_xor(a, b)` `ne(a != 0, b != 0)`";
    case op_kind::lt: return "`ctfx::lt(a, b)`";
    case op_kind::le: return "`ctfx::le(a, b)`";
    case op_kind::gt: return "`ctfx::gt(a, b)`";
    case op_kind::ge: return "`ctfx::ge(a, b)`";
    case op_kind::logical_and: return "`ctfx::logical_and(a, b)`";
    case op_kind::logical_or: return "`ctfx::logical_or(a, b)`";
    case op_kind::where: return "`ctfx::where(c, a, b)`";
    case op_kind::fma: return "`ctfx::fma(a, b, c)`, `ctfx::fma(a, 0.5, c)`: `a * b + c` rounded once";
    case op_kind::slice: return "`x.slice(dim, start, end, step)`";
    case op_kind::select: return "`x.select(dim, i)`";
    case op_kind::diagonal: return "`x.diagonal(offset, d1, d2)`";
    case op_kind::as_strided: return "`x.as_strided(sizes, strides, offset)`";
    case op_kind::view: return "`x.view(sizes)`, `x.reshape(sizes)`";
    case op_kind::permute: return "`x.permute(dims)`";
    case op_kind::transpose: return "`x.transpose(d0, d1)`";
    case op_kind::unsqueeze: return "`x.unsqueeze(dim)`";
    case op_kind::squeeze: return "`x.squeeze(dim)`";
    case op_kind::expand: return "`x.expand(sizes)`";
    case op_kind::slice_scatter: return "`ctfx::slice_scatter(x, src, dim, start, end, step)`";
    case op_kind::select_scatter: return "`ctfx::select_scatter(x, src, dim, i)`";
    case op_kind::diagonal_scatter: return "`ctfx::diagonal_scatter(x, src, offset, d1, d2)`";
    case op_kind::as_strided_scatter: return "`ctfx::as_strided_scatter(x, src, sizes, strides, offset)`";
    case op_kind::generalized_scatter: return "";
    case op_kind::generalized_scatter_: return "";
    case op_kind::index_put: return "`ctfx::index_put(x, {idx...}, v, accumulate)`";
    case op_kind::index_put_: return "";
    case op_kind::unsafe_index_put: return "";
    case op_kind::unsafe_index_put_: return "";
    case op_kind::index: return "`ctfx::index(x, {idx...})`";
    case op_kind::gather: return "`ctfx::gather(x, dim, idx)`";
    case op_kind::scatter: return "`ctfx::scatter(x, dim, idx, src)`, `ctfx::scatter(x, dim, idx, value)`, `ctfx::scatter_add(x, dim, idx, src)`, `ctfx::scatter_reduce(x, dim, idx, src, reduce, include_self)`";
    case op_kind::scatter_: return "`ctfx::scatter_(x, dim, idx, src, add)`";
    case op_kind::sum: return "`x.sum(dims, keepdim)`";
    case op_kind::amax: return "`x.amax(dims, keepdim)`";
    case op_kind::amin: return "`x.amin(dims, keepdim)`";
    case op_kind::prod: return "`x.prod(dim, keepdim)`, `x.prod()`";
    case op_kind::argmax: return "`x.argmax(dim, keepdim)`";
    case op_kind::argmin: return "`x.argmin(dim, keepdim)`";
    case op_kind::cumsum: return "`x.cumsum(dim, dtype)`";
    case op_kind::cumprod: return "`x.cumprod(dim, dtype)`";
    case op_kind::logcumsumexp: return "`x.logcumsumexp(dim)`";
    case op_kind::var: return "`x.var(dims, correction, keepdim)`";
    case op_kind::var_mean: return "`x.var_mean_mean(dims, correction, keepdim)` (var_mean's mean)";
    case op_kind::mean: return "`x.mean(dims, keepdim)`";
    case op_kind::cat: return "`ctfx::cat({t...}, dim)`";
    case op_kind::mm: return "`ctfx::mm(a, b)`, `ctfx::matmul(a, b)`";
    case op_kind::addmm: return "`ctfx::addmm(c, a, b, beta, alpha)`";
    case op_kind::bmm: return "`ctfx::bmm(a, b)`, `ctfx::scaled_dot_product_attention(q, k, v, mask, is_causal, scale)` (two bmm, a masked softmax)";
    case op_kind::baddbmm: return "`ctfx::baddbmm(c, a, b, beta, alpha)`";
    case op_kind::foreach_add: return "`ctfx::foreach_add({a...}, {b...})`, `ctfx::foreach_add({a...}, s)`";
    case op_kind::foreach_mul: return "`ctfx::foreach_mul({a...}, {b...})`, `ctfx::foreach_mul({a...}, s)`";
    case op_kind::foreach_add_: return "";
    case op_kind::foreach_mul_: return "";
    case op_kind::all_reduce: return "`ctfx::all_reduce(x, op)`";
    case op_kind::all_reduce_: return "";
    case op_kind::broadcast: return "`ctfx::broadcast(x, root)`";
    case op_kind::broadcast_: return "";
    case op_kind::all_gather: return "`ctfx::all_gather(x, group_size)`";
    case op_kind::reduce_scatter: return "`ctfx::reduce_scatter(x, op, group_size)`";
    case op_kind::all_gather_blocks: return "`ctfx::all_gather_blocks(x, group_size)`";
    case op_kind::all_gather_blocks_: return "";
    case op_kind::reduce_scatter_blocks: return "`ctfx::reduce_scatter_blocks(x, group_size, op)`";
    case op_kind::reduce_scatter_blocks_: return "";
    case op_kind::halo_exchange: return "`ctfx::halo_exchange(u, halo, grid)`";
    case op_kind::halo_exchange_: return "";
    case op_kind::custom: return "`g.call<Op>(args...)`";
    case op_kind::auto_functionalized: return "`g.call<Op>(args...)` (functional form)";
    case op_kind::cond: return "`g.cond(pred, then_graph, else_graph, {operands...})`";
    case op_kind::while_loop: return "`g.while_loop(cond_graph, body_graph, {carried...}, {additional...})`";
    case op_kind::count_: return "";
  }
  return "";
}

std::string_view family(ctfx::op_family f) {
  switch (f) {
    case ctfx::op_family::structure: return "structure";
    case ctfx::op_family::copy: return "copy";
    case ctfx::op_family::factory: return "factory";
    case ctfx::op_family::unary: return "elementwise";
    case ctfx::op_family::binary: return "elementwise";
    case ctfx::op_family::ternary: return "elementwise";
    case ctfx::op_family::view: return "view";
    case ctfx::op_family::scatter: return "scatter";
    case ctfx::op_family::index: return "index";
    case ctfx::op_family::reduction: return "reduction";
    case ctfx::op_family::list: return "list";
    case ctfx::op_family::collective: return "collective";
    case ctfx::op_family::user: return "user op";
    case ctfx::op_family::product: return "matrix product";
    case ctfx::op_family::control: return "control flow";
  }
  return "";
}

// The dtypes an op takes and where it runs, by family.
std::string_view dtypes(op_kind k) {
  switch (ctfx::facts(k).family) {
    case ctfx::op_family::unary: case ctfx::op_family::binary: case ctfx::op_family::ternary:
      if (k == op_kind::fma) return "any (promoted); integers modulo 2^bits, f16/bf16 computed in f32 and rounded once";
      if (is_bitwise(k)) {
        const bool shift = k == op_kind::bitwise_left_shift || k == op_kind::bitwise_right_shift;
        return shift ? "i8 i32 i64 (PyTorch's promotion)" : "b8 i8 i32 i64 (PyTorch's promotion)";
      }
      if (k == op_kind::hypot) return "f16 bf16 f32 f64 (PyTorch's promotion)";
      return k == op_kind::where ? "a b8 condition; any two operand dtypes (promoted)" : "b8 i8 i32 i64 f16 bf16 f32 f64 (PyTorch's promotion)";
    case ctfx::op_family::index:
      if (ctfx::is_along_dim(k)) return "any values; an i64 index in [0, size) (no wrapping)";
      return "any values; indices i32, i64 or a b8 mask";
    case ctfx::op_family::reduction:
      if (k == op_kind::argmax || k == op_kind::argmin) return "any, an i64 result (`aten.argmax` refuses b8, as PyTorch)";
      if (k == op_kind::var || k == op_kind::var_mean) return "f32, f64 (Welford in double, as PyTorch's CPU kernel)";
      if (k == op_kind::prod) return "b8 i8 i32 i64 (in i64), f32 f64 (PyTorch's CPU order at AVX2 width); f16/bf16 refused";
      if (k == op_kind::cumsum || k == op_kind::cumprod) return "floats, and i64 (integers and bools converted to it first); in double for f32";
      if (k == op_kind::logcumsumexp) return "f32 f64 (in double), f16 bf16 (in f32)";
      return k == op_kind::cat ? "any (promoted)" : "any (sum of ints in i64, mean of floats)";
    case ctfx::op_family::collective: return "any (reductions: sum, max, min)";
    case ctfx::op_family::user: return "the op's schema";
    case ctfx::op_family::product: return "f32 f64 (BLAS), i8 i32 i64 (exact loop); operands of one dtype";
    case ctfx::op_family::control: return "a 0-d b8 predicate; any operands";
    default: return "any";
  }
}
std::string_view backends(op_kind k) {
  switch (ctfx::facts(k).family) {
    case ctfx::op_family::collective: return "host, omp, cuda, over an MPI or NCCL communicator";
    case ctfx::op_family::user: return "the user op's kernels";
    case ctfx::op_family::product: return "host, omp (a CBLAS: link ctfx::blas), cuda (cuBLAS: f32, f64)";
    case ctfx::op_family::structure: return "—";
    case ctfx::op_family::control: return "host, omp (runtime_plan); compiled<G> refuses";
    default: return "host, omp, cuda";
  }
}

// The importer's lowering of a row, where it is not the op itself.
std::string_view decomposition(ctfx::fx::lower how) {
  using ctfx::fx::lower;
  switch (how) {
    case lower::div_mode: return "`div`, `floor_divide` or `trunc_divide`, by `rounding_mode`";
    case lower::isnan: return "`ne(x, x)`";
    case lower::isinf: return "`eq(abs(x), inf)`";
    case lower::reciprocal: return "`pow(x, -1)` (an integer x converted to f32 first)";
    case lower::logical_xor: return "`ne(ne(a, 0), ne(b, 0))`";
    case lower::clamp: return "`clamp_min` then `clamp_max`";
    case lower::bitwise: return "the op on integers; on bools the logical op (`logical_and`, `logical_or`, `logical_not`)";
    case lower::where: return "`where`, a number branch as a 0-d `full`";
    case lower::split: return "slices, read with `[k]`";
    case lower::unbind: return "`select(dim, k)` for each k, read with `[k]`";
    case lower::repeat: return "unsqueeze, expand, clone, view";
    case lower::scalar_tensor: return "a 0-d `full`";
    case lower::t: return "`transpose(0, 1)`";
    case lower::constant_pad: return "a `slice` per negative pad, then `cat(full, x, full)` per padded dimension (a `clone` if none is positive)";
    case lower::unfold: return "an `as_strided` view: extent (n - size) / step + 1 of stride times step along dim, a last dim of `size` of dim's stride";
    case lower::rev: return "an `index` per dimension by the iota -1, -2, ..., -n (a `clone` for no dims)";
    case lower::iota: return "`full([n], step)`, its `cumsum`, plus `start - step` (int64, wrapping; `convert` to another integer dtype)";
    case lower::addcmul: return "`fma(mul(t1, value), t2, self)` (no `mul` for value 1); in place, copied into self";
    case lower::addcdiv: return "`add(self, div(mul(t1, value), t2))` (no `mul` for value 1); in place, copied into self";
    case lower::lerp: return "`fma(w, end - self, self)` where abs(w) < 0.5, else `fma(-(end - self), 1 - w, end)` (a number w picks its branch, a tensor w `where`s both); in place, copied into self";
    case lower::foreach_elems: return "per element, the op of the same name (`_foreach_addcmul` as `addcmul`, `_foreach_lerp` as `lerp`; `fma(y, alpha, x)` with an alpha), read with `[k]`; in place, copied into each self";
    default: return "";
  }
}

}  // namespace

int main() {
  std::printf("# ctfx's ops\n\n");
  std::printf("Generated by `tools/op_table` from the op registry (`include/ctfx/ops/op_kind.hpp`), the FX\n"
              "importer's table (`include/ctfx/graph/fx_opmap.hpp`) and the builder's spellings; the test\n"
              "`docs.op_table` fails when this file and the registry differ. Regenerate with\n"
              "`build/tools/op_table/op_table > docs/ops.md`.\n\n");
  std::printf("Semantics are PyTorch's (CPU eager), bit for bit, with these stated exceptions: an integer\n"
              "division, remainder or fmod by zero gives 0 (PyTorch raises); `exp`, `exp2`, `log2`, `log10`, `expm1`, `log1p`, `tanh`, `erf`, `sigmoid`, `hypot`, `atan2` and `pow` use\n"
              "libm-quality functions where PyTorch's vectorized kernels (SLEEF) may differ by 1 ulp.\n"
              "Python numbers keep their category (an int is an exact int64, a float a correctly rounded\n"
              "double) and promote as `torch.result_type` decides; a 0-d tensor promotes as PyTorch's does.\n"
              "`add`/`sub` with an `alpha` (`fma(other, alpha, self)`, `-alpha` for `sub`), `addcmul`, `addcdiv`,\n"
              "`lerp` and the list ops below are read as PyTorch's CPU kernels compute them, one `fma` where they\n"
              "fuse; on f16/bf16 they are refused (PyTorch's vector loop rounds once in float, its scalar tail in\n"
              "half precision: its result depends on the element's position). `prims.fma` rounds once, as\n"
              "Inductor's lowering (the prim's eager reference, `a * b + c`, rounds twice). A captured `addcmul_`/`addcdiv_`\n"
              "arrives as `prims.fma(t1 * t2, value, self)`; ctfx computes that graph bit for bit, as Inductor does,\n"
              "which can differ by 1 ulp from eager's `addcmul_` kernel (measured on an Adam step: 2 of 1,200 `v`\n"
              "elements, 1 of 1,200 `p` elements; Inductor's result equals ctfx's on every element).\n\n");
  std::printf("| op | family | C++ (`#include <ctfx.hpp>`) | ATen ops the FX importer reads as it | in-place form | dtypes | backends |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < static_cast<int>(op_kind::count_); ++i) {
    const auto k = static_cast<op_kind>(i);
    const ctfx::op_facts& f = ctfx::facts(k);
    std::string aten;
    for (const auto& r : ctfx::fx::op_rows)
      if (r.kind == k && decomposition(r.how).empty()) {
        // appended piece by piece: g++ 12 reports a false -Wrestrict for `"literal" + std::string`
        if (!aten.empty()) aten += ", ";
        aten += '`';
        aten += r.name;
        aten += '`';
      }
    std::string inplace;
    if (!f.mutates && f.twin != op_kind::count_ && ctfx::facts(f.twin).mutates) {
      inplace += '`';
      inplace += ctfx::facts(f.twin).name;
      inplace += '`';
    }
    if (f.mutates) inplace = "(is one)";
    const std::string_view d = dsl(k);
    std::printf("| `%s` | %s | %s | %s | %s | %s | %s |\n", std::string(f.name).c_str(), std::string(family(f.family)).c_str(),
                d.empty() ? "— (made by the passes or the importer)" : std::string(d).c_str(), aten.empty() ? "—" : aten.c_str(),
                inplace.empty() ? "—" : inplace.c_str(), std::string(dtypes(k)).c_str(), std::string(backends(k)).c_str());
  }
  std::printf("\n## ATen ops the importer reads as a decomposition\n\n| ATen op | becomes |\n|---|---|\n");
  for (const auto& r : ctfx::fx::op_rows)
    if (!decomposition(r.how).empty())
      std::printf("| `%s` | %s |\n", std::string(r.name).c_str(), std::string(decomposition(r.how)).c_str());
  return 0;
}
