// ctfx/graph/builder_attention.hpp — the DSL's scaled dot-product attention, composed of ops ctfx
// has (two bmm extern kernels, a scale, a mask, a softmax over the last dimension): what
// `F.scaled_dot_product_attention` computes, and what PyTorch's CPU kernel
// (`aten._scaled_dot_product_flash_attention_for_cpu`) returns beside it, the logsumexp of each row.
// The composition is not the CPU kernel's blocked online softmax, so results agree with eager within
// the matrix products' tolerance, not bit for bit.
//
//   auto [o, lse] = ctfx::scaled_dot_product_attention(q, k, v, std::nullopt, /*is_causal=*/true);
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include <limits>
#include <optional>
#include "builder_products.hpp"

namespace ctfx {

namespace detail {
// sqrt(n) correctly rounded to a double (std::sqrt's answer), in a constant expression: the root's
// bits one at a time (the remainder stays below 2^57), then round to nearest even on the 54th.
constexpr double sqrt_of_integer(std::uint64_t n) {
  if (n == 0) return 0.0;
  int top = 63;
  while (((n >> top) & 1) == 0) --top;
  std::uint64_t root = 0, rem = 0;
  int lsb = top / 2;  // the weight 2^lsb of the root's last bit
  for (int i = top / 2;; --i) {
    rem = (rem << 2) | (i >= 0 ? (n >> (2 * i)) & 3 : 0);
    const std::uint64_t trial = (root << 2) | 1;
    if (rem >= trial) { rem -= trial; root = (root << 1) | 1; } else root <<= 1;
    lsb = i;
    if (root >= (std::uint64_t{1} << 53)) break;  // 53 bits and a guard bit
  }
  std::uint64_t mant = root >> 1;
  if ((root & 1) != 0 && (rem != 0 || (mant & 1) != 0)) ++mant;
  double r = static_cast<double>(mant);
  for (int e = lsb + 1; e > 0; --e) r *= 2.0;
  for (int e = lsb + 1; e < 0; ++e) r *= 0.5;
  return r;
}
}  // namespace detail

/// The two results of scaled_dot_product_attention.
struct attention_result {
  tensor out;  ///< softmax(q @ k^T * scale + mask) @ v: [B, Hq, L, Ev], row-major, q's dtype
  tensor lse;  ///< each row's logsumexp [B, Hq, L] in the computation dtype (f64 for f64, else f32); 0 for a fully masked row
};

/// `F.scaled_dot_product_attention(q, k, v, attn_mask, is_causal=, scale=, enable_gqa=)` without
/// dropout: q [B, Hq, L, E], k [B, Hk, S, E], v [B, Hk, S, Ev], Hq a multiple of Hk (grouped-query
/// attention: each k/v head serves Hq / Hk consecutive q heads). `scale` defaults to 1 / sqrt(E);
/// `is_causal` masks column j of row i where j > i (PyTorch's top-left aligned tril); a bool `mask`
/// keeps where true, a floating one is added; it broadcasts to [B, Hq, L, S]. A row masked entirely
/// gives 0 (output and logsumexp), as PyTorch's CPU kernel does. f16 and bf16 compute in f32 and
/// round the output once; f32 and f64 in their own dtype.
constexpr attention_result scaled_dot_product_attention(tensor q, tensor k, tensor v, std::optional<tensor> mask = std::nullopt,
                                                        bool is_causal = false, std::optional<double> scale = std::nullopt,
                                                        source_loc at = source_loc::current()) {
  const builder::call_site site(q.b, at);
  builder* b = q.b;
  if (!b || !b->check(q) || !b->check(k) || !b->check(v) || (mask && !b->check(*mask))) return {q, q};
  const auto refuse = [&](std::string_view why) {
    auto m = detail::about(b->g, q.id);
    m << "scaled_dot_product_attention: " << why;
    detail::fail(b->g, q.id, rule::bad_argument, m);
    return attention_result{q, q};
  };
  if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4) return refuse("q, k and v must be 4-d [batch, heads, length, dim] (view a 3-d one with a head dimension of 1)");
  const dtype dt = q.dt();
  if (k.dt() != dt || v.dt() != dt) return refuse("q, k and v must share one dtype (convert them first)");
  if (!is_floating(dt)) return refuse("q, k and v must be floating (convert them first)");
  const sym_expr B = q.size(0), Hq = q.size(1), L = q.size(2), E = q.size(3), Hk = k.size(1), S = k.size(2), Ev = v.size(3);
  if (!(k.size(0) == B) || !(v.size(0) == B) || !(v.size(1) == Hk) || !(v.size(2) == S) || !(k.size(3) == E))
    return refuse("the sizes of q [B, Hq, L, E], k [B, Hk, S, E] and v [B, Hk, S, Ev] disagree");
  sym_expr group = 1;
  if (!(Hq == Hk)) {
    if (!Hq.is_static() || !Hk.is_static() || Hk.value() == 0 || Hq.value() % Hk.value() != 0)
      return refuse("q's head count must be a multiple of k's and v's (grouped-query attention), both numbers");
    group = Hq.value() / Hk.value();
  }
  double sc = 0;
  if (scale) sc = *scale;
  else if (!E.is_static()) return refuse("the default scale 1 / sqrt(E) needs a static head dimension E (pass scale=)");
  else sc = 1.0 / detail::sqrt_of_integer(static_cast<std::uint64_t>(E.value()));
  // f16 / bf16: PyTorch's kernel accumulates in f32; so does this composition (one rounding at the end).
  const dtype ct = dt == dtype::f64 ? dtype::f64 : dtype::f32;
  if (dt != ct) { q = q.to(ct, at); k = k.to(ct, at); v = v.to(ct, at); }
  if (group.value() != 1) {  // each k/v head repeated for its group of q heads (repeat_interleave on dim 1)
    k = k.unsqueeze(2, at).expand({B, Hk, group, S, E}, at).reshape({B, Hq, S, E}, at);
    v = v.unsqueeze(2, at).expand({B, Hk, group, S, Ev}, at).reshape({B, Hq, S, Ev}, at);
  }
  const sym_expr BH = B * Hq;
  // (Each operand its own statement: C++ leaves the order of a call's arguments open, and the
  // compiler's evaluation and the run-time build must make the nodes, and their names, in one order.)
  const tensor qb = q.reshape({BH, L, E}, at);
  const tensor kt = k.reshape({BH, S, E}, at).transpose(1, 2, at);
  tensor s = bmm(qb, kt, at) * sc;
  s = s.view({B, Hq, L, S}, at);
  const tensor minus_inf = b->full({}, -std::numeric_limits<double>::infinity(), ct, at);
  if (is_causal) {
    const tensor row = b->iota(L, 0, 1, dtype::i64, at).unsqueeze(1, at);
    const tensor col = b->iota(S, 0, 1, dtype::i64, at);
    s = where(ge(row, col, at), s, minus_inf, at);
  }
  if (mask) {
    tensor m = *mask;
    if (m.dt() == dtype::b8) s = where(m, s, minus_inf, at);
    else s = s + (m.dt() == ct ? m : m.to(ct, at));
  }
  // softmax over the last dimension as PyTorch's (max subtracted); a row all -inf has max -inf
  const tensor mx = s.amax({3}, true, at);
  const tensor e = exp(s - mx, at);
  const tensor z = e.sum({3}, true, at);
  const tensor dead = eq(mx, -std::numeric_limits<double>::infinity(), at);
  const tensor zero = b->full({}, 0.0, ct, at);
  const tensor ez = e / z;
  const tensor p = where(dead, zero, ez, at);
  v = v.reshape({BH, S, Ev}, at);
  const tensor pb = p.view({BH, L, S}, at);
  tensor o = bmm(pb, v, at).view({B, Hq, L, Ev}, at);
  if (dt != ct) o = o.to(dt, at);
  const tensor lz = mx + log(z, at);
  const tensor lse = where(dead, zero, lz, at).squeeze(3, at);
  return {o, lse};
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
