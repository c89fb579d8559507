// ctfx/ops/result_layout.hpp — the strides PyTorch gives a fresh result: elementwise ops keep the
// stride order of their operands, preserve_format copies keep a dense layout or the stride order of
// a non-dense one, and cat is channels-last when all its inputs suggest it. These mirror the rules
// FakeTensor runs for Inductor's graphs (torch/_prims_common:
// compute_elementwise_output_logical_to_physical_perm, is_contiguous, is_non_overlapping_and_dense;
// torch/_prims/broadcast_in_dim; torch/_refs/empty_like; ATen's cat meta function with
// cat_compute_output_memory_format and c10's suggest_memory_format), so a graph PyTorch printed
// with strides checks out as printed.
//
// Static layouts only: a symbolic extent or stride gives a row-major result unless the rule can
// tell from symbolic equality (all operands row-major, or a dense copy's own strides).
#pragma once
#include "../detail/meta_util.hpp"

namespace ctfx::detail {

// Whether every extent and stride is a known integer.
constexpr bool static_layout(const tensor_meta& m) {
  for (int i = 0; i < m.rank; ++i)
    if (m.size[i].n != 0 || m.size[i].overflow || m.stride[i].n != 0 || m.stride[i].overflow) return false;
  return true;
}

// Integer extents and strides of one operand seen at the result's rank.
struct int_layout {
  int rank = 0;
  index_t size[max_rank]{};
  index_t stride[max_rank]{};
};

constexpr int_layout int_of(const tensor_meta& m) {
  int_layout r;
  r.rank = m.rank;
  for (int i = 0; i < m.rank; ++i) { r.size[i] = m.size[i].c; r.stride[i] = m.stride[i].c; }
  return r;
}

// prims.broadcast_in_dim(x, shape, trailing dims): a dimension broadcast from 1 gets stride 0; a new
// leading dimension gets 0 when it is longer than 1, else the stride that spans the next dimension.
constexpr int_layout broadcast_to(const int_layout& x, const int_layout& shape) {
  int_layout r;
  r.rank = shape.rank;
  const int lead = shape.rank - x.rank;
  for (int i = 0; i < shape.rank; ++i) {
    r.size[i] = shape.size[i];
    if (i >= lead) {
      const int j = i - lead;
      r.stride[i] = x.size[j] == 1 && shape.size[i] != 1 ? 0 : x.stride[j];
    } else if (shape.size[i] != 1) {
      r.stride[i] = 0;
    } else {
      r.stride[i] = x.rank == 0 ? 1 : x.stride[0] * x.size[0];
    }
  }
  return r;
}

// torch._prims_common.is_contiguous: row-major, ignoring extent-1 dimensions (and any tensor of
// fewer than two elements).
constexpr bool row_major(const int_layout& x) {
  index_t numel = 1;
  for (int i = 0; i < x.rank; ++i) numel *= x.size[i];
  if (numel < 2) return true;
  index_t expect = 1;
  for (int i = x.rank - 1; i >= 0; --i) {
    if (x.size[i] == 1) continue;
    if (x.stride[i] != expect) return false;
    expect *= x.size[i];
  }
  return true;
}

// is_channels_last_contiguous_2d: a 4-d tensor whose dimensions are laid out C, W, H, N innermost first.
constexpr bool channels_last(const int_layout& x) {
  if (x.rank != 4) return false;
  index_t expect = 1;
  constexpr int order[4] = {1, 3, 2, 0};
  for (int d : order) {
    if (x.size[d] == 1) continue;
    if (x.stride[d] != expect) return false;
    expect *= x.size[d];
  }
  return true;
}

// is_non_overlapping_and_dense: the dimensions longer than 1, by stride, are row-major in some order.
constexpr bool non_overlapping_and_dense(const int_layout& x) {
  if (x.rank == 1) return x.size[0] < 2 || x.stride[0] == 1;
  int perm[max_rank]{};
  for (int i = 0; i < x.rank; ++i) perm[i] = i;
  auto before = [&](int a, int b) {  // std::sort's comparator in c10
    if (x.size[a] < 2) return false;
    if (x.size[b] < 2) return true;
    return x.stride[a] < x.stride[b];
  };
  for (int i = 1; i < x.rank; ++i)
    for (int j = i; j > 0 && before(perm[j], perm[j - 1]); --j) { const int t = perm[j]; perm[j] = perm[j - 1]; perm[j - 1] = t; }
  index_t expect = 1;
  for (int i = 0; i < x.rank; ++i) {
    const index_t s = x.size[perm[i]];
    if (s < 2) return true;
    if (x.stride[perm[i]] != expect) return false;
    expect *= s;
  }
  return true;
}

// compute_elementwise_output_logical_to_physical_perm over operands already broadcast to one shape:
// perm[0] is the outermost dimension of the result, perm[rank-1] the innermost.
constexpr void elementwise_perm(const int_layout* ops, int n, int* perm) {
  const int rank = ops[0].rank;
  bool contiguous = true, cl = true;
  for (int k = 0; k < n; ++k) {
    contiguous = contiguous && row_major(ops[k]);
    cl = cl && channels_last(ops[k]);
  }
  if (contiguous && !cl) {
    for (int i = 0; i < rank; ++i) perm[i] = i;
    return;
  }
  if (cl && !contiguous) {
    perm[0] = 0; perm[1] = 2; perm[2] = 3; perm[3] = 1;
    return;
  }
  const index_t* shape = ops[0].size;
  // 1: a goes inside b (swap in the back-to-front sort), -1: outside, 0: no operand tells.
  auto should_swap = [&](int a, int b) {
    for (int k = 0; k < n; ++k) {
      const index_t sa = ops[k].stride[a], sb = ops[k].stride[b];
      if (sa == 0 || sb == 0) continue;
      if (sa == sb) {
        if (shape[b] >= shape[a]) continue;
        return 1;
      }
      return sb > sa ? -1 : 1;
    }
    return 0;
  };
  // Insertion sort, innermost first, that steps over ambiguous comparisons (PyTorch's).
  int rev[max_rank]{};
  for (int i = 0; i < rank; ++i) rev[i] = rank - 1 - i;
  for (int i = 1; i < rank; ++i) {
    int d1 = i;
    for (int d0 = i - 1; d0 >= 0; --d0) {
      const int c = should_swap(rev[d0], rev[d1]);
      if (c > 0) {
        const int t = rev[d0]; rev[d0] = rev[d1]; rev[d1] = t;
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  for (int i = 0; i < rank; ++i) perm[i] = rev[rank - 1 - i];
}

// Dense strides in the physical order perm (outermost first); extents below 1 count as 1.
constexpr void dense_in_order(tensor_meta& r, const int* perm) {
  index_t s = 1;
  for (int i = r.rank - 1; i >= 0; --i) {
    const int d = perm[i];
    r.stride[d] = sym_expr(s);
    s *= r.size[d].c > 1 ? r.size[d].c : 1;
  }
}

// A fresh result of dtype dt and the shape of `shape`, with the strides PyTorch's elementwise ops
// give it from their tensor operands (0-d operands, as PyTorch's CPU scalars, do not count).
constexpr tensor_meta elementwise_result(const tensor_meta& shape, dtype dt, const tensor_meta* const* operands, int n) {
  tensor_meta r = contiguous_like(shape, dt);
  if (r.rank <= 1 || !static_layout(shape)) return r;
  int_layout ops[3]{};
  int m = 0;
  const int_layout out = int_of(shape);
  for (int k = 0; k < n && m < 3; ++k) {
    const tensor_meta& x = *operands[k];
    if (x.rank == 0) continue;
    if (!static_layout(x)) return r;
    ops[m++] = broadcast_to(int_of(x), out);
  }
  if (m == 0) return r;
  int perm[max_rank]{};
  elementwise_perm(ops, m, perm);
  dense_in_order(r, perm);
  return r;
}

// torch.empty_like(x) (preserve_format, as torch._refs computes it): dense strides in x's stride order.
constexpr tensor_meta empty_like_result(const tensor_meta& x, dtype dt) {
  const tensor_meta* ops[1] = {&x};
  return elementwise_result(x, dt, ops, 1);
}

// clone and conversions with preserve_format: a non-overlapping dense layout keeps its strides,
// anything else gets empty_like's. The offset is 0 in the fresh storage.
constexpr tensor_meta preserve_format_result(const tensor_meta& x, dtype dt) {
  if (x.is_contiguous()) return contiguous_like(x, dt);
  if (!static_layout(x)) return contiguous_like(x, dt);
  if (!non_overlapping_and_dense(int_of(x))) return empty_like_result(x, dt);
  tensor_meta r = x;
  r.dt = dt;
  r.offset = sym_expr(0);
  r.storage = fresh;
  return r;
}

// auto_functionalized's new value of a mutated argument (clone_preserve_strides): the argument's
// extents, strides and offset, in a fresh storage.
constexpr tensor_meta preserve_strides_result(const tensor_meta& x) {
  tensor_meta r = x;
  r.storage = fresh;
  return r;
}

// A tensor's suggested memory format (c10's TensorBase::suggest_memory_format, exact_match false):
// channels-last for a 4-d tensor whose strides are like channels-last
// (is_channels_last_strides_2d_s4), channels-last-3d for such a 5-d one
// (is_channels_last_strides_3d_s5), else contiguous. The strides of extent-1 dimensions count.
enum class memory_format : std::uint8_t { contiguous, channels_last, channels_last_3d };

// is_channels_last_strides_{2d_s4,3d_s5}: order lists the dimensions innermost first (C, then the
// spatial ones from the last, then N).
constexpr bool strides_like_channels_last(const int_layout& x, const int* order) {
  index_t min = 0;
  if (x.stride[1] == 0) return false;  // a trivial C dimension: NCHW by default
  for (int k = 0; k < x.rank; ++k) {
    const int d = order[k];
    if (x.size[d] == 0) return false;
    if (x.stride[d] < min) return false;
    // N111 with equal strides (or N11W sliced on W): ambiguous, NCHW by default.
    if (d == 0 && min == x.stride[1]) return false;
    min = x.stride[d];
    if (x.size[d] > 1) min *= x.size[d];
  }
  return true;
}

// Symbolic extents or strides: contiguous (ctfx keeps such results row-major).
constexpr memory_format suggest_memory_format(const tensor_meta& m) {
  if ((m.rank != 4 && m.rank != 5) || !static_layout(m)) return memory_format::contiguous;
  constexpr int order4[4] = {1, 3, 2, 0};
  constexpr int order5[5] = {1, 4, 3, 2, 0};
  const int_layout x = int_of(m);
  if (m.rank == 4) return strides_like_channels_last(x, order4) ? memory_format::channels_last : memory_format::contiguous;
  return strides_like_channels_last(x, order5) ? memory_format::channels_last_3d : memory_format::contiguous;
}

// ATen's cat_compute_output_memory_format, one input at a time: the format of the inputs so far
// (the first input's suggested format to start), then `next`: contiguous once any input suggests
// contiguous or two suggest different formats, else the one they all suggest.
constexpr memory_format cat_output_format(memory_format so_far, const tensor_meta& next) {
  return so_far == suggest_memory_format(next) ? so_far : memory_format::contiguous;
}

// A fresh tensor of dtype dt and the shape of `shape`, allocated in format f (at::empty with a
// memory_format): row-major, or get_channels_last_strides_2d / _3d (C innermost, then W, H (, D),
// then N). A symbolic extent gives row-major.
constexpr tensor_meta result_in_format(const tensor_meta& shape, dtype dt, memory_format f) {
  tensor_meta r = contiguous_like(shape, dt);
  if (f == memory_format::contiguous || !static_layout(r)) return r;
  if ((f == memory_format::channels_last && r.rank != 4) || (f == memory_format::channels_last_3d && r.rank != 5)) return r;
  // get_channels_last_strides multiplies the extents as they are; dense_in_order counts an extent
  // of 0 as 1. They agree here: an input with an extent of 0 suggests contiguous, and cat's result
  // has its inputs' extents outside the cat dimension and their sum in it.
  constexpr int perm4[4] = {0, 2, 3, 1};
  constexpr int perm5[5] = {0, 2, 3, 4, 1};
  dense_in_order(r, f == memory_format::channels_last ? perm4 : perm5);
  return r;
}

}  // namespace ctfx::detail
