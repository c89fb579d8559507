// ctfx/ops/views.hpp — view ops: tags, schemas and the layout rule. A view's reference semantics *is*
// its layout rule: the result addresses the base's storage with new sizes, strides and offset.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <span>
#include "meta_util.hpp"
#include "schema.hpp"

namespace ctfx {
namespace ops {
struct slice_t : op_tag<op_kind::slice, "slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)"> {};
struct select_t : op_tag<op_kind::select, "select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)"> {};
struct diagonal_t : op_tag<op_kind::diagonal, "diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)"> {};
struct as_strided_t : op_tag<op_kind::as_strided, "as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)"> {};
struct view_t : op_tag<op_kind::view, "view(Tensor(a) self, SymInt[] size) -> Tensor(a)"> {};
struct permute_t : op_tag<op_kind::permute, "permute(Tensor(a) self, int[] dims) -> Tensor(a)"> {};
struct transpose_t : op_tag<op_kind::transpose, "transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)"> {};
struct unsqueeze_t : op_tag<op_kind::unsqueeze, "unsqueeze(Tensor(a) self, int dim) -> Tensor(a)"> {};
struct squeeze_t : op_tag<op_kind::squeeze, "squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)"> {};
struct expand_t : op_tag<op_kind::expand, "expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)"> {};
struct alias_t : op_tag<op_kind::alias, "alias(Tensor(a) self) -> Tensor(a)"> {};
}  // namespace ops

namespace detail {

constexpr bool static_param(ir& g, std::int32_t id, const sym_expr& p, const char* what) {
  if (p.is_static()) return true;
  auto m = about(g, id);
  m << "the " << what << " argument must be a static integer";
  fail(g, id, rule::bad_argument, m);
  return false;
}

// Applies view `k` with parameters `p` to the layout `x`. Reports errors on node `id`.
constexpr bool view_meta(ir& g, std::int32_t id, op_kind k, const tensor_meta& x,
                         std::span<const sym_expr> p, tensor_meta& out) {
  out = x;
  // Parameters through a raw pointer: a span's operator[] is a call in constant evaluation, and
  // this rule runs for every view and view scatter built, re-derived or rebuilt.
  const sym_expr* P = p.data();
  auto bad_count = [&](int want) {
    if (static_cast<int>(p.size()) == want) return false;
    auto m = about(g, id);
    m << "expects " << want << " parameters, got " << static_cast<int>(p.size());
    fail(g, id, rule::bad_argument, m);
    return true;
  };
  switch (k) {
    case op_kind::alias: return true;
    case op_kind::slice: {
      if (bad_count(4)) return false;
      if (!static_param(g, id, P[0], "dim") || !static_param(g, id, P[3], "step")) return false;
      int d = norm_dim(g, id, P[0].value(), x.rank);
      if (d < 0) return false;
      const index_t step = P[3].value();
      if (step <= 0) {
        auto m = about(g, id); m << "slice step must be positive, got " << static_cast<long long>(step);
        fail(g, id, rule::bad_argument, m); return false;
      }
      const sym_expr& n = x.size[d];
      sym_expr len, first;
      if (n.is_static() && P[1].is_static() && P[2].is_static()) {
        index_t start = P[1].value(), end = P[2].value();
        index_t sz = n.value();
        // Bounds as Python and PyTorch take them: negative ones count from the end, and both are
        // clamped to [0, size] (x[2:100] on 6 rows is x[2:6]; x[-100:2] is x[0:2]).
        if (start < 0) start += sz;
        if (end != end_of_dim && end < 0) end += sz;
        if (end == end_of_dim || end > sz) end = sz;
        if (start < 0) start = 0;
        if (start > sz) start = sz;
        if (end < 0) end = 0;
        index_t cnt = end > start ? (end - start + step - 1) / step : 0;
        len = sym_expr(cnt);
        first = sym_expr(start);
      } else {
        // Symbolic bounds or extent: as PyTorch's meta takes them, a static negative bound counts
        // from the end; where it compared symbolic values (0 <= start <= end <= size) it installed
        // guards, and so does ctfx (checked at run time) where the order is not known.
        auto bound = [&](const sym_expr& b) {
          if (b.is_static() && b.value() == end_of_dim) return n;
          return b.is_static() && b.value() < 0 ? n + b : b;
        };
        first = bound(P[1]);
        const sym_expr last = bound(P[2]);
        if (first.is_static() && last.is_static() && first.value() > last.value()) {
          auto m = about(g, id);
          m << "a slice of a symbolic dimension needs start <= end, got " << static_cast<long long>(first.value()) << " > "
            << static_cast<long long>(last.value());
          fail(g, id, rule::index_out_of_range, m); return false;
        }
        if (!sym_guard_le(g, sym_expr(0), first) || !sym_guard_le(g, first, last) || !sym_guard_le(g, last, n)) {
          auto m = about(g, id); m << "a slice bound is out of range for dimension " << d << " of size "; put_expr(m, g, n);
          fail(g, id, rule::index_out_of_range, m); return false;
        }
        len = step == 1 ? last - first : sym_floordiv(g, last - first + sym_expr(step - 1), sym_expr(step));
      }
      out.size[d] = len;
      out.stride[d] = x.stride[d] * sym_expr(step);
      out.offset = x.offset + x.stride[d] * first;
      return true;
    }
    case op_kind::select: {
      if (bad_count(2)) return false;
      if (!static_param(g, id, P[0], "dim")) return false;
      int d = norm_dim(g, id, P[0].value(), x.rank);
      if (d < 0) return false;
      if (!P[1].is_static() || !x.size[d].is_static()) {
        // A symbolic index or extent: a static negative index counts from the end; 0 <= i < size
        // is PyTorch's guard, checked at run time where it is not known.
        const sym_expr i = P[1].is_static() && P[1].value() < 0 ? x.size[d] + P[1] : P[1];
        if (!sym_guard_le(g, sym_expr(0), i) || !sym_guard_le(g, i + sym_expr(1), x.size[d])) {
          auto m = about(g, id); m << "the index is out of range for dimension " << d << " of size "; put_expr(m, g, x.size[d]);
          fail(g, id, rule::index_out_of_range, m); return false;
        }
        out.offset = x.offset + x.stride[d] * i;
        for (int j = d; j + 1 < x.rank; ++j) { out.size[j] = x.size[j + 1]; out.stride[j] = x.stride[j + 1]; }
        out.rank = static_cast<std::int8_t>(x.rank - 1);
        out.size[out.rank] = sym_expr(); out.stride[out.rank] = sym_expr();
        return true;
      }
      index_t i = P[1].value();
      {
        index_t sz = x.size[d].value();
        if (i < -sz || i >= sz) {
          auto m = about(g, id);
          m << "index " << static_cast<long long>(i) << " is out of range for dimension " << d << " of size "
            << static_cast<long long>(sz);
          fail(g, id, rule::index_out_of_range, m); return false;
        }
        if (i < 0) i += sz;
      }
      out.offset = x.offset + x.stride[d] * sym_expr(i);
      for (int j = d; j + 1 < x.rank; ++j) { out.size[j] = x.size[j + 1]; out.stride[j] = x.stride[j + 1]; }
      out.rank = static_cast<std::int8_t>(x.rank - 1);
      out.size[out.rank] = sym_expr(); out.stride[out.rank] = sym_expr();
      return true;
    }
    case op_kind::diagonal: {
      if (bad_count(3)) return false;
      for (int i = 0; i < 3; ++i) if (!static_param(g, id, P[static_cast<std::size_t>(i)], "offset/dim")) return false;
      index_t off = P[0].value();
      int d1 = norm_dim(g, id, P[1].value(), x.rank), d2 = norm_dim(g, id, P[2].value(), x.rank);
      if (d1 < 0 || d2 < 0) return false;
      if (d1 == d2) {
        auto m = about(g, id); m << "diagonal dimensions must differ, both are " << d1;
        fail(g, id, rule::bad_dimension, m); return false;
      }
      if (!x.size[d1].is_static() || !x.size[d2].is_static()) {
        auto m = about(g, id); m << "diagonal needs static sizes in dimensions " << d1 << " and " << d2;
        fail(g, id, rule::bad_argument, m); return false;
      }
      index_t s1 = x.size[d1].value(), s2 = x.size[d2].value();
      index_t len = off >= 0 ? (s1 < s2 - off ? s1 : s2 - off) : (s1 + off < s2 ? s1 + off : s2);
      if (len < 0) len = 0;
      sym_expr o = x.offset;
      if (len > 0) o = o + (off >= 0 ? x.stride[d2] * sym_expr(off) : x.stride[d1] * sym_expr(-off));
      int r = 0;
      for (int j = 0; j < x.rank; ++j)
        if (j != d1 && j != d2) { out.size[r] = x.size[j]; out.stride[r] = x.stride[j]; ++r; }
      out.size[r] = sym_expr(len);
      out.stride[r] = x.stride[d1] + x.stride[d2];
      out.rank = static_cast<std::int8_t>(r + 1);
      for (int j = out.rank; j < max_rank; ++j) { out.size[j] = sym_expr(); out.stride[j] = sym_expr(); }
      out.offset = o;
      return true;
    }
    case op_kind::as_strided: {
      if (p.empty() || !P[0].is_static()) { bad_count(1); return false; }
      int r = static_cast<int>(P[0].value());
      if (!rank_ok(g, id, r) || bad_count(2 * r + 2)) return false;
      out.rank = static_cast<std::int8_t>(r);
      for (int j = 0; j < max_rank; ++j) {
        out.size[j] = j < r ? P[1 + static_cast<std::size_t>(j)] : sym_expr();
        out.stride[j] = j < r ? P[1 + static_cast<std::size_t>(r + j)] : sym_expr();
        if (j < r && ((out.size[j].is_static() && out.size[j].value() < 0) ||
                      (out.stride[j].is_static() && out.stride[j].value() < 0))) {
          auto m = about(g, id); m << "as_strided sizes and strides must be non-negative";
          fail(g, id, rule::index_out_of_range, m); return false;
        }
      }
      out.offset = P[1 + 2 * static_cast<std::size_t>(r)];
      // A static base must contain every element the view can reach.
      if (out.is_static() && x.is_static()) {
        index_t hi = out.offset.value(), base_hi = x.offset.value();
        bool empty = false;
        for (int j = 0; j < r; ++j) { if (out.size[j].value() == 0) empty = true; hi += (out.size[j].value() - 1) * out.stride[j].value(); }
        for (int j = 0; j < x.rank; ++j) base_hi += (x.size[j].value() - 1) * x.stride[j].value();
        if (!empty && (out.offset.value() < 0 || hi > base_hi)) {
          auto m = about(g, id);
          m << "as_strided reaches element " << static_cast<long long>(hi) << " of a base whose last element is "
            << static_cast<long long>(base_hi);
          fail(g, id, rule::index_out_of_range, m); return false;
        }
      }
      return true;
    }
    case op_kind::view: {
      int r = static_cast<int>(p.size());
      if (!rank_ok(g, id, r)) return false;
      // Infer a single -1 and require equal numels.
      int infer = -1;
      sym_expr known(1);
      for (int j = 0; j < r; ++j) {
        if (P[static_cast<std::size_t>(j)] == sym_expr(-1)) {
          if (infer >= 0) { auto m = about(g, id); m << "only one size may be -1"; fail(g, id, rule::view_shape, m); return false; }
          infer = j;
        } else known = known * P[static_cast<std::size_t>(j)];
      }
      sym_expr total = x.numel();
      sym_expr inferred(1);
      if (infer >= 0) {
        // total // known: exact where the polynomials divide, else PyTorch's FloorDiv (its guard
        // that the numels agree is checked below).
        if ((known.is_static() && known.value() == 0) || (known.is_static() && total.is_static() && total.value() % known.value() != 0)) {
          auto m = about(g, id); m << "cannot infer the -1 size of a view of "; put_type(m, g, x);
          fail(g, id, rule::view_shape, m); return false;
        }
        inferred = sym_floordiv(g, total, known);
        known = known * inferred;
      }
      // Numels that differ only through floor division or modulo: PyTorch's guard that they are
      // equal (s0 == 2*(s0//2) behind x.view(s0//2, 2)), checked at run time.
      if (!(known == total) && (uses_derived(g, known) || uses_derived(g, total)) && !known.overflow && !total.overflow)
        sym_guard_equal(g, known, total);
      else if (!(known == total)) {
        auto m = about(g, id); m << "a view with " ; put_expr(m, g, known); m << " elements of "; put_type(m, g, x);
        m << " (" ; put_expr(m, g, total); m << " elements)";
        fail(g, id, rule::view_shape, m); return false;
      }
      out.rank = static_cast<std::int8_t>(r);
      for (int j = 0; j < max_rank; ++j) out.size[j] = j < r ? (j == infer ? inferred : P[static_cast<std::size_t>(j)]) : sym_expr();
      for (int j = r; j < max_rank; ++j) out.stride[j] = sym_expr();
      sym_expr off = x.offset;
      if (x.is_contiguous()) {
        out.set_contiguous();
        out.offset = off;
        return true;
      }
      // A non-contiguous x (a permuted k of attention reshaped to batches): PyTorch's computeStride,
      // for static sizes and strides — each chunk of x's dimensions that is contiguous within itself
      // splits or merges into view dimensions; a view that crosses a chunk's edge needs a copy.
      bool all_static = x.numel().is_static();
      for (int j = 0; j < x.rank; ++j) all_static = all_static && x.size[j].is_static() && x.stride[j].is_static();
      for (int j = 0; j < r; ++j) all_static = all_static && out.size[j].is_static();
      bool viewable = all_static;
      if (viewable && x.numel().value() == 0) {
        out.set_contiguous();
      } else if (viewable) {
        int view_d = r - 1;
        index_t chunk_base = x.rank > 0 ? x.stride[x.rank - 1].value() : 1, tensor_numel = 1, view_numel = 1;
        for (int td = x.rank - 1; td >= 0 && viewable; --td) {
          tensor_numel *= x.size[td].value();
          if (td == 0 || (x.size[td - 1].value() != 1 && x.stride[td - 1].value() != tensor_numel * chunk_base)) {
            while (view_d >= 0 && (view_numel < tensor_numel || out.size[view_d].value() == 1)) {
              out.stride[view_d] = sym_expr(view_numel * chunk_base);
              view_numel *= out.size[view_d].value();
              --view_d;
            }
            if (view_numel != tensor_numel) viewable = false;
            if (td > 0) { chunk_base = x.stride[td - 1].value(); tensor_numel = 1; view_numel = 1; }
          }
        }
        if (view_d != -1) viewable = false;
      }
      if (!viewable) {
        auto m = about(g, id); m << "view of a non-contiguous tensor "; put_type(m, g, x);
        m << (all_static ? " across dimensions its strides do not merge" : " with symbolic extents") << "; use reshape, which copies";
        fail(g, id, rule::view_shape, m); return false;
      }
      out.offset = off;
      return true;
    }
    case op_kind::permute: {
      if (bad_count(x.rank)) return false;
      bool seen[max_rank]{};
      for (int j = 0; j < x.rank; ++j) {
        if (!static_param(g, id, P[static_cast<std::size_t>(j)], "dims")) return false;
        int d = norm_dim(g, id, P[static_cast<std::size_t>(j)].value(), x.rank);
        if (d < 0) return false;
        if (seen[d]) { auto m = about(g, id); m << "dimension " << d << " repeats in permute"; fail(g, id, rule::bad_dimension, m); return false; }
        seen[d] = true;
        out.size[j] = x.size[d]; out.stride[j] = x.stride[d];
      }
      return true;
    }
    case op_kind::transpose: {
      if (bad_count(2) || !static_param(g, id, P[0], "dim0") || !static_param(g, id, P[1], "dim1")) return false;
      int a = norm_dim(g, id, P[0].value(), x.rank), b = norm_dim(g, id, P[1].value(), x.rank);
      if (a < 0 || b < 0) return false;
      out.size[a] = x.size[b]; out.size[b] = x.size[a];
      out.stride[a] = x.stride[b]; out.stride[b] = x.stride[a];
      return true;
    }
    case op_kind::unsqueeze: {
      if (bad_count(1) || !static_param(g, id, P[0], "dim")) return false;
      if (!rank_ok(g, id, x.rank + 1)) return false;
      int d = norm_dim(g, id, P[0].value(), x.rank + 1);
      if (d < 0) return false;
      for (int j = x.rank; j > d; --j) { out.size[j] = x.size[j - 1]; out.stride[j] = x.stride[j - 1]; }
      out.size[d] = sym_expr(1);
      out.stride[d] = d < x.rank ? x.size[d] * x.stride[d] : sym_expr(1);
      out.rank = static_cast<std::int8_t>(x.rank + 1);
      return true;
    }
    case op_kind::squeeze: {
      if (bad_count(1) || !static_param(g, id, P[0], "dim")) return false;
      int d = norm_dim(g, id, P[0].value(), x.rank);
      if (d < 0) return false;
      if (!(x.size[d] == sym_expr(1))) return true;  // PyTorch: squeezing a non-1 dimension is a no-op
      for (int j = d; j + 1 < x.rank; ++j) { out.size[j] = x.size[j + 1]; out.stride[j] = x.stride[j + 1]; }
      out.rank = static_cast<std::int8_t>(x.rank - 1);
      out.size[out.rank] = sym_expr(); out.stride[out.rank] = sym_expr();
      return true;
    }
    case op_kind::expand: {
      int r = static_cast<int>(p.size());
      if (!rank_ok(g, id, r)) return false;
      if (r < x.rank) { auto m = about(g, id); m << "expand to rank " << r << " below the input's rank " << static_cast<int>(x.rank); fail(g, id, rule::view_shape, m); return false; }
      out.rank = static_cast<std::int8_t>(r);
      for (int j = 0; j < r; ++j) {
        int src = j - (r - x.rank);
        sym_expr want = P[static_cast<std::size_t>(j)];
        if (src < 0) {
          if (want == sym_expr(-1)) { auto m = about(g, id); m << "-1 is not allowed for a new leading dimension"; fail(g, id, rule::view_shape, m); return false; }
          out.size[j] = want; out.stride[j] = sym_expr(0);
        } else if (want == sym_expr(-1) || want == x.size[src]) {
          out.size[j] = x.size[src]; out.stride[j] = x.stride[src];
        } else if (x.size[src] == sym_expr(1)) {
          out.size[j] = want; out.stride[j] = sym_expr(0);
        } else {
          auto m = about(g, id); m << "cannot expand "; put_type(m, g, x); m << " to size "; put_expr(m, g, want);
          m << " in dimension " << j;
          fail(g, id, rule::view_shape, m); return false;
        }
      }
      return true;
    }
    default: break;
  }
  auto m = about(g, id); m << "not a view op";
  fail(g, id, rule::bad_argument, m);
  return false;
}

}  // namespace detail
}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
