// ctfx/kernels/index_put.hpp — x[indices] = values (or += with accumulate), in place on x; also
// with one bool mask as the index (masked_put).
//
// Every operand is first expressed over the selected shape S (the shape of x[indices]): the
// values broadcast to S, each index tensor broadcast into S's indexed dimensions, and the part of
// x's address that comes from the non-indexed dimensions. Position j of S then writes
//   x.p + free(j) + Σ_k wrap(index_k(j)) · x.stride[dim_k].
// Order: positions are applied in row-major order of S, so duplicates resolve as a sequential
// loop would (the last write wins; sums add in that order) — on every backend:
//   host: one sequential pass (the reference order itself);
//   cuda, deterministic: a stable radix sort of (destination, j) with CUB in the caller's
//     workspace, then one thread per run of equal destinations folds its run in j order;
//   cuda, atomic: one atomicAdd per position (fast, order not fixed; opt-in).
// Index values are checked before any write by `first_bad_index` (the executor calls it during
// validation), so the kernel itself never sees an out-of-range index.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <limits>
#include "../core/isa.hpp"
#include "pointwise.hpp"
#if defined(__CUDACC__)
#include <cub/device/device_radix_sort.cuh>
#endif

namespace ctfx::kernels {

inline constexpr int max_indices = max_rank;

/// How a scatter combines a source element with its destination (scatter_reduce's `reduce`; mean
/// is a sum divided afterwards, built in the graph). assign and sum are also index_put's two forms.
enum class put_reduce : std::uint8_t { assign = 0, sum = 1, prod = 2, amax = 3, amin = 4 };

struct index_put_args {
  strided x;             // destination (written in place)
  strided values;        // broadcast over S
  strided free;          // x's non-indexed part over S (pointer = x.p)
  strided index[max_indices];  // each broadcast over S
  int index_dim[max_indices]{};  // the x dimension each index addresses
  index_t index_extent[max_indices]{};
  int n_index = 0;
  bool accumulate = false;
  bool nonneg = false;   // indices must lie in [0, extent) (gather, scatter); else [-extent, extent), negatives wrapping
  index_t count = 0;     // numel of S
  put_reduce reduce = put_reduce::assign;  // scatter_reduce's combine (accumulate: sum)
  bool include_self = true;                // false: every destination first takes the reduction's identity

  // A put outside the assign / add loops: prod, amax, amin, or a reduction without self.
  CTFX_HD bool reducing() const { return reduce > put_reduce::sum || (reduce != put_reduce::assign && !include_self); }

  CTFX_HD index_t dest(index_t j) const {
    index_t off = free.offset_of(j);
    for (int k = 0; k < n_index; ++k) {
      index_t v = load_dyn<index_t>(index[k].dt, index[k].at(j));
      if (v < 0) v += index_extent[k];
      off += v * x.stride[index_dim[k]];
    }
    return off;
  }
};

// The first position whose index is out of range (or -1), and which index it was. Host-side
// buffers only (the CUDA executor runs it on a device copy through the same code with Thrust).
inline index_t first_bad_index(const index_put_args& a, int* which, index_t* value) {
  for (index_t j = 0; j < a.count; ++j)
    for (int k = 0; k < a.n_index; ++k) {
      const index_t v = load_dyn<index_t>(a.index[k].dt, a.index[k].at(j));
      if (v < (a.nonneg ? 0 : -a.index_extent[k]) || v >= a.index_extent[k]) { *which = k; *value = v; return j; }
    }
  return -1;
}

template <dtype D>
CTFX_HD inline void put_one(const index_put_args& a, index_t j, index_t dst) {
  std::byte* p = a.x.p + dst * size_of(D);
  const std::byte* v = a.values.at(j);
  if (a.accumulate) {
    using C = compute_t<D>;
    store_as<D, C>(p, wrap_add(load_as<D, C>(p), load_as<D, C>(v)));
  } else {
    std::memcpy(p, v, sizeof(element_t<D>));
  }
}

// The common scatter x[i] (+)= v: one 1-D i64 index over a 1-D selection (the fast paths below).
CTFX_HD inline bool is_scatter_1d(const index_put_args& a) {
  return a.free.rank == 1 && a.n_index == 1 && a.index[0].dt == dtype::i64 && a.free.stride[0] == 0;
}

// One element of that scatter: dst = v, or dst += v computed as put_one does.
template <dtype D>
CTFX_HD inline void put_element(element_t<D>& dst, const element_t<D>* v, bool accumulate) {
  using E = element_t<D>;
  if (!accumulate) dst = *v;
  else if constexpr (std::is_arithmetic_v<E> && !std::is_same_v<E, std::uint8_t>) dst = static_cast<E>(wrap_add<compute_t<D>>(dst, *v));
  else store_as<D, compute_t<D>>(&dst, wrap_add(load_as<D, compute_t<D>>(&dst), load_as<D, compute_t<D>>(v)));
}

// The operands' offsets at a position of S, advanced in row-major order by an odometer over its
// first `dims` dimensions (no division per element or row).
struct put_walk {
  const index_put_args& a;
  index_t idx[max_rank]{};
  index_t fo = 0, vo = 0, io[max_indices]{};
  // Element offset in x of the current position: the free offset plus each index's value.
  CTFX_HD index_t dest() const {
    index_t dst = fo;
    for (int k = 0; k < a.n_index; ++k) {
      index_t v = load_dyn<index_t>(a.index[k].dt, a.index[k].p + io[k] * size_of(a.index[k].dt));
      if (v < 0) v += a.index_extent[k];
      dst += v * a.x.stride[a.index_dim[k]];
    }
    return dst;
  }
  CTFX_HD void next(int dims) {
    for (int d = dims - 1; d >= 0; --d) {
      fo += a.free.stride[d];
      vo += a.values.stride[d];
      for (int k = 0; k < a.n_index; ++k) io[k] += a.index[k].stride[d];
      if (++idx[d] < a.free.size[d]) return;
      fo -= a.free.stride[d] * a.free.size[d];
      vo -= a.values.stride[d] * a.values.size[d];
      for (int k = 0; k < a.n_index; ++k) io[k] -= a.index[k].stride[d] * a.index[k].size[d];
      idx[d] = 0;
    }
  }
};

// A row of `bytes` bytes: in 64-byte blocks of constant size when it is short and a whole number
// of them (moves the compiler inlines, as it does a hand loop's memcpy of a constant row: a KV
// cache's 256-byte rows), else one memcpy.
CTFX_HD inline void copy_row_bytes(std::byte* p, const std::byte* v, std::size_t bytes) {
  if (bytes % 64 == 0 && bytes <= 1024) {
    for (std::size_t o = 0; o < bytes; o += 64) std::memcpy(p + o, v + o, 64);
  } else {
    std::memcpy(p, v, bytes);
  }
}

// n rows of `bytes` bytes, row r at p + r * pstep from v + r * vstep, on the host: at its widest
// ISA level (core/isa.hpp), in 32-byte vector moves (one register from AVX2 up; g++ expands a
// memcpy of 64 bytes into 16-byte moves at every level, and a 64-byte vector below AVX-512
// through the stack), and for the sizes a KV cache's rows have, with the size a constant of the
// loop (the moves unrolled).
// (Not under nvcc, which compiles these puts for CUDA and takes the plain loop on its host.)
#if !defined(__CUDACC__)
using block32 = unsigned char __attribute__((vector_size(32), aligned(1), may_alias));
CTFX_VECTORIZE inline void copy_rows_host(std::byte* p, index_t pstep, const std::byte* v, index_t vstep, index_t n, std::size_t bytes) {
  isa::on_host_isa([&]() CTFX_ISA_BODY {
    // (locals: the stores may alias what a captured reference points at, which g++ would reload per row)
    std::byte* d = p;
    const std::byte* s = v;
    const index_t ds = pstep, ss = vstep, rows = n;
    auto blocks = [&](auto b) CTFX_ISA_BODY {
      for (index_t r = 0; r < rows; ++r, d += ds, s += ss)
        for (std::size_t o = 0; o < decltype(b)::value; o += 32)
          *reinterpret_cast<block32*>(d + o) = *reinterpret_cast<const block32*>(s + o);
    };
#if defined(__AVX2__)
    constexpr bool wide = true;
#else
    const bool wide = isa::current() != isa::level::baseline;  // (SSE2 would move a 32-byte vector through the stack)
#endif
    switch (wide ? bytes : 0) {
      case 64: return blocks(std::integral_constant<std::size_t, 64>{});
      case 128: return blocks(std::integral_constant<std::size_t, 128>{});
      case 256: return blocks(std::integral_constant<std::size_t, 256>{});
      case 512: return blocks(std::integral_constant<std::size_t, 512>{});
      default:
        for (index_t r = 0; r < rows; ++r) copy_row_bytes(d + r * ds, s + r * ss, bytes);
    }
  });
}
#endif

// scatter_reduce's identity (what a destination holds first without include_self) and combine
// step, as PyTorch's CPU kernel: 0, 1, -inf / lowest, +inf / max; amax / amin take a NaN source
// (`isnan(src) ? src : std::max(self, src)`), and std::max / std::min keep a NaN self.
template <dtype D>
CTFX_HD inline compute_t<D> reduce_identity(put_reduce r) {
  using C = compute_t<D>;
  using E = element_t<D>;
  if (r == put_reduce::prod) return C(1);
  if (r == put_reduce::amax || r == put_reduce::amin) {
    const bool lo = r == put_reduce::amax;
    if constexpr (std::is_floating_point_v<C>) return lo ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
    else if constexpr (std::is_integral_v<E>) return static_cast<C>(lo ? std::numeric_limits<E>::lowest() : std::numeric_limits<E>::max());
  }
  return C(0);
}
template <dtype D>
CTFX_HD inline compute_t<D> reduce_combine(put_reduce r, compute_t<D> self, compute_t<D> src) {
  switch (r) {
    case put_reduce::assign: return src;
    case put_reduce::sum: return wrap_add(self, src);
    case put_reduce::prod: return wrap_mul(self, src);
    case put_reduce::amax: return src != src ? src : (self < src ? src : self);
    case put_reduce::amin: return src != src ? src : (src < self ? src : self);
  }
  return src;
}

// A reducing scatter (a.reducing()), in row-major order of S: without include_self, every
// destination first takes the identity (a pass of its own, as PyTorch fills them before reducing);
// then each position combines its source into its destination, rounded to D at every step.
template <dtype D>
CTFX_HD inline void scatter_reduce_seq(const index_put_args& a) {
  using C = compute_t<D>;
  const int r = a.free.rank;
  if (!a.include_self) {
    const C id = reduce_identity<D>(a.reduce);
    put_walk w{a};
    for (index_t j = 0; j < a.count; ++j, w.next(r)) store_as<D, C>(a.x.p + w.dest() * size_of(D), id);
  }
  put_walk w{a};
  for (index_t j = 0; j < a.count; ++j, w.next(r)) {
    std::byte* p = a.x.p + w.dest() * size_of(D);
    store_as<D, C>(p, reduce_combine<D>(a.reduce, load_as<D, C>(p), load_as<D, C>(a.values.p + w.vo * size_of(D))));
  }
}

template <dtype D>
struct index_put_seq_fn {  // the whole put, in order, by one thread
  index_put_args a;
  CTFX_HD void operator()(index_t) const {
    if (a.reducing()) { scatter_reduce_seq<D>(a); return; }
    const int r = a.free.rank;
    // Rows: when the innermost selected dimension is a unit-stride dimension of x and of the
    // values, and no index varies along it, a row is one memcpy (or one add loop).
    bool rows = r > 0 && a.free.stride[r - 1] == 1 && a.values.stride[r - 1] == 1;
    for (int k = 0; rows && k < a.n_index; ++k) rows = a.index[k].stride[r - 1] == 0;
    if (!rows && is_scatter_1d(a)) {
      // The common scatter-add: x[i] (+)= v with one 1-D i64 index.
      using E = element_t<D>;
      const auto* ip = reinterpret_cast<const std::int64_t*>(a.index[0].p);
      const auto* vp = reinterpret_cast<const E*>(a.values.p);
      auto* xp = reinterpret_cast<E*>(a.x.p);
      const index_t is = a.index[0].stride[0], vs = a.values.stride[0], xs = a.x.stride[a.index_dim[0]], ext = a.index_extent[0];
      for (index_t j = 0; j < a.count; ++j) {
        index_t v = ip[j * is];
        if (v < 0) v += ext;
        put_element<D>(xp[v * xs], vp + j * vs, a.accumulate);
      }
      return;
    }
    put_walk w{a};
    if (!rows) {  // element by element in row-major order of S
      for (index_t j = 0; j < a.count; ++j, w.next(r)) {
        std::byte* p = a.x.p + w.dest() * size_of(D);
        const std::byte* v = a.values.p + w.vo * size_of(D);
        if (a.accumulate) {
          using C = compute_t<D>;
          store_as<D, C>(p, wrap_add(load_as<D, C>(p), load_as<D, C>(v)));
        } else {
          std::memcpy(p, v, sizeof(element_t<D>));
        }
      }
      return;
    }
    // Row by row in row-major order (the outer dimensions walked, the innermost one a run).
    const index_t inner = a.free.size[r - 1];
    const index_t n_rows = inner == 0 ? 0 : a.count / inner;
    const std::size_t row_bytes = static_cast<std::size_t>(inner) * sizeof(element_t<D>);
    // Indices that select one position of x for the whole put (a KV cache's `pos`): their part of
    // the address is read once, not per row (a load through the index dtype's switch per row).
    bool fixed = true;
    for (int k = 0; fixed && k < a.n_index; ++k)
      for (int d = 0; d < r; ++d) fixed = fixed && a.index[k].stride[d] == 0;
    const index_t fixed_part = fixed ? w.dest() - w.fo : 0;
    if (fixed && !a.accumulate) {
      // The outer dimensions collapsed into one run of rows when x's and the values' strides nest
      // (a KV cache's batch and heads): one loop, its counters in registers, no odometer.
      index_t n = 1, xs = 0, vs = 0;
      bool one = true;
      for (int d = r - 2; d >= 0 && one; --d) {
        if (a.free.size[d] == 1) continue;
        if (n == 1) { xs = a.free.stride[d]; vs = a.values.stride[d]; n = a.free.size[d]; }
        else if (a.free.stride[d] == xs * n && a.values.stride[d] == vs * n) n *= a.free.size[d];
        else one = false;
      }
      if (one) {
        std::byte* p = a.x.p + fixed_part * size_of(D);
        const std::byte* v = a.values.p;
#if defined(__CUDACC__)
        for (index_t row = 0; row < n_rows; ++row) copy_row_bytes(p + row * xs * size_of(D), v + row * vs * size_of(D), row_bytes);
#else
        copy_rows_host(p, xs * size_of(D), v, vs * size_of(D), n_rows, row_bytes);
#endif
        return;
      }
    }
    for (index_t row = 0; row < n_rows; ++row, w.next(r - 1)) {
      std::byte* p = a.x.p + (fixed ? w.fo + fixed_part : w.dest()) * size_of(D);
      const std::byte* v = a.values.p + w.vo * size_of(D);
      if (!a.accumulate) {
        copy_row_bytes(p, v, row_bytes);
      } else {
        using C = compute_t<D>;
        for (index_t e = 0; e < inner; ++e)
          store_as<D, C>(p + e * size_of(D), wrap_add(load_as<D, C>(p + e * size_of(D)), load_as<D, C>(v + e * size_of(D))));
      }
    }
  }
};

// Host only: the common scatter (one 1-D i64 index: x[i] (+)= v, x 1-D) with the index check
// fused into the put. The puts go, in row-major order, to a private copy of x on the stack (x must
// fit in `index_put_shadow_bytes`); x itself is written (the copy back) only after the last index
// was checked, so a bad index still leaves x untouched (validate before mutate) while the indices
// are read once instead of twice (a check pass, then the put). Same element type, same operations
// in the same order as index_put_seq_fn: bit-identical results. False when the put does not have
// that form, or when x shares bytes with the values or the index (then the order of reads and
// writes matters and only the plain path keeps it).
inline constexpr std::size_t index_put_shadow_bytes = 32 * 1024;

inline bool index_put_fusable_host(const index_put_args& a) {
  if (a.x.rank != 1 || a.nonneg || !is_scatter_1d(a) || a.index_extent[0] <= 0 || a.count <= 0) return false;
  if (static_cast<std::size_t>(a.index_extent[0]) * static_cast<std::size_t>(size_of(a.x.dt)) > index_put_shadow_bytes) return false;
  struct range { std::uintptr_t lo, hi; };  // the bytes a 1-D view reaches
  auto span = [](const std::byte* p, index_t n, index_t st, int sz) {
    const index_t last = (n - 1) * st * sz;
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    return range{at - static_cast<std::uintptr_t>(last < 0 ? -last : 0), at + static_cast<std::uintptr_t>(last > 0 ? last : 0) + static_cast<std::uintptr_t>(sz)};
  };
  const range x = span(a.x.p, a.index_extent[0], a.x.stride[0], size_of(a.x.dt));
  const range v = span(a.values.p, a.count, a.values.stride[0], size_of(a.values.dt));
  const range i = span(a.index[0].p, a.count, a.index[0].stride[0], 8);
  auto apart = [](range r, range q) { return r.hi <= q.lo || q.hi <= r.lo; };
  return apart(x, v) && apart(x, i);
}

// Runs the fused check-and-put (index_put_fusable_host(a) must hold), x of element type D (or, for
// index_put_checked_host, a.x.dt). Returns -1 when every index was in range and the put is done,
// else the first bad position (its value in *value) with x untouched.
template <dtype D>
inline index_t index_put_checked_typed(const index_put_args& a, index_t* value) {
  using E = element_t<D>;
  E shadow[index_put_shadow_bytes / sizeof(E)];
  const index_t ext = a.index_extent[0], xs = a.x.stride[0];
  auto* xp = reinterpret_cast<E*>(a.x.p);
  for (index_t e = 0; e < ext; ++e) shadow[e] = xp[e * xs];
  const auto* ip = reinterpret_cast<const std::int64_t*>(a.index[0].p);
  const auto* vp = reinterpret_cast<const E*>(a.values.p);
  const index_t is = a.index[0].stride[0], vs = a.values.stride[0];
  const auto span = static_cast<std::uint64_t>(2 * ext);
  // One loop per kind of put (accumulate or not, unit strides or not): the accumulate flag and the
  // strides are not read per element. `from`..`to` is a run of positions checked one by one: the
  // first bad one is returned, a negative index wraps.
  const auto checked = [&](auto acc, index_t from, index_t to, index_t ist, index_t vst) CTFX_ISA_BODY -> index_t {
    for (index_t j = from; j < to; ++j) {
      index_t v = ip[j * ist];
      if (static_cast<std::uint64_t>(v) + static_cast<std::uint64_t>(ext) >= span) { *value = v; return j; }  // v < -ext or v >= ext
      if (v < 0) v += ext;
      put_element<D>(shadow[v], vp + j * vst, decltype(acc)::value);
    }
    return -1;
  };
  // Unit strides (the common case): blocks of `block` positions. A block whose indices all lie in
  // [0, ext) (the OR of i and ext-1-i has no sign bit: one vectorized pass over 512 bytes that stay
  // in L1) is put without a check per element, a loop as short as the hand-written one, unrolled;
  // any other block is put by `checked`, which finds the first bad position and wraps negative
  // indices. Compiled for the host's ISA levels (core/isa.hpp): the check runs 8 indices per
  // instruction at AVX-512. Blocks of 64 measured fastest (bench/RESULTS.md, the scatter-add row).
  const auto blocked = [&](auto acc) CTFX_ISA_BODY -> index_t {
    constexpr index_t block = 64;
    for (index_t j0 = 0; j0 < a.count; j0 += block) {
      const index_t m = a.count - j0 < block ? a.count - j0 : block;
      const std::int64_t* ib = ip + j0;
      const E* vb = vp + j0;
      std::uint64_t any = 0;
      for (index_t j = 0; j < m; ++j) any |= static_cast<std::uint64_t>(ib[j]) | static_cast<std::uint64_t>(ext - 1 - ib[j]);
      if (any >> 63) {
        if (const index_t bad = checked(acc, j0, j0 + m, 1, 1); bad >= 0) return bad;
        continue;
      }
      if constexpr (D == dtype::f16 || D == dtype::bf16) {
        // (an f16 sum converts through float in software: unrolled, its code was 4x as large)
        for (index_t j = 0; j < m; ++j) put_element<D>(shadow[ib[j]], vb + j, decltype(acc)::value);
      } else {
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#pragma GCC unroll 8
#endif
        for (index_t j = 0; j < m; ++j) put_element<D>(shadow[ib[j]], vb + j, decltype(acc)::value);
      }
    }
    return -1;
  };
  using yes = std::true_type;
  using no = std::false_type;
  const index_t bad = is == 1 && vs == 1
                          ? isa::on_host_isa([&]() CTFX_ISA_BODY { return a.accumulate ? blocked(yes{}) : blocked(no{}); })
                          : (a.accumulate ? checked(yes{}, 0, a.count, is, vs) : checked(no{}, 0, a.count, is, vs));
  if (bad >= 0) return bad;
  for (index_t e = 0; e < ext; ++e) xp[e * xs] = shadow[e];
  return -1;
}
inline index_t index_put_checked_host(const index_put_args& a, index_t* value) {
  return visit_dtype(a.x.dt, [&](auto dd) -> index_t { return index_put_checked_typed<decltype(dd)::value>(a, value); });
}

// x[mask] = v (or += v): the put's one index is a bool mask over x's dimensions [dim0, dim0 + r)
// (its shape theirs, checked by ops/index.hpp). The values broadcast to the selected shape with
// extent 1 where the mask's true positions go, so every selected element takes the value at its
// non-mask coordinates: the put is elementwise over x — x = mask ? v (or x + v) : x. A mask selects
// each element once, so there is no order to keep.
template <dtype D>
struct masked_put_fn {
  strided x, mask, v;  // mask and v over x's extents
  bool accumulate = false;
  CTFX_HD void operator()(index_t i) const {
    if (*reinterpret_cast<const std::uint8_t*>(mask.at(i)) == 0) return;
    std::byte* p = x.at(i);
    if (accumulate) {
      using C = compute_t<D>;
      store_as<D, C>(p, wrap_add(load_as<D, C>(p), load_as<D, C>(v.at(i))));
    } else {
      std::memcpy(p, v.at(i), sizeof(element_t<D>));
    }
  }
};

// masked_put_fn's operands over x's extents: the mask's strides on [dim0, dim0 + r), the values'
// with extent 1 at the mask's place.
inline void masked_put_operands(const strided& x, const strided& mask, int dim0, const strided& values, strided& m, strided& v) {
  const int r = mask.rank;
  m = x;
  v = x;
  m.p = mask.p;
  m.dt = mask.dt;
  for (int d = 0; d < x.rank; ++d) m.stride[d] = d >= dim0 && d < dim0 + r ? mask.stride[d - dim0] : 0;
  // The values over the selected shape with extent 1 at the mask's place, then spread over x.
  index_t sel[max_rank]{};
  int n = 0;
  for (int d = 0; d < dim0; ++d) sel[n++] = x.size[d];
  sel[n++] = 1;
  for (int d = dim0 + r; d < x.rank; ++d) sel[n++] = x.size[d];
  const strided vs = values.broadcast_to(n, sel);
  v.p = values.p;
  v.dt = values.dt;
  for (int d = 0; d < x.rank; ++d)
    v.stride[d] = d < dim0 ? vs.stride[d] : d < dim0 + r ? 0 : vs.stride[d - r + 1];
}

// True when no two elements of x share memory (each dimension's stride, taken from the smallest,
// reaches past everything the smaller ones span): then rewriting an element with its own value is
// invisible, and a row may be written whole.
inline bool no_internal_overlap(const strided& x) {
  index_t st[max_rank], sz[max_rank];
  int n = 0;
  for (int d = 0; d < x.rank; ++d)
    if (x.size[d] > 1) {
      int k = n++;
      const index_t a = x.stride[d] < 0 ? -x.stride[d] : x.stride[d];
      for (; k > 0 && st[k - 1] > a; --k) { st[k] = st[k - 1]; sz[k] = sz[k - 1]; }
      st[k] = a;
      sz[k] = x.size[d];
    }
  index_t span = 1;  // elements spanned by the dimensions so far
  for (int k = 0; k < n; ++k) {
    if (st[k] < span) return false;
    span = st[k] * (sz[k] - 1) + span;
  }
  return true;
}

// The same over rows of x's last dimension (the host's loop): a row's start costs a division per
// outer dimension, its elements none. With `whole_rows` (x's rows unit-stride and disjoint, the
// mask's unit-stride, the values' unit-stride or one value) every element of the row is stored,
// with its own value where the mask is false: a select, not a branch, so the loop vectorizes and a
// mask without a pattern costs no mispredicted branches. The values are the same bits either way.
template <dtype D>
struct masked_put_rows_fn {
  strided x, mask, v;  // as masked_put_fn's
  bool accumulate = false, whole_rows = false;
  CTFX_HD void operator()(index_t row) const {
    const int last = x.rank - 1;
    index_t ox = 0, om = 0, ov = 0;
    for (int d = last - 1; d >= 0; --d) {
      const index_t c = row % x.size[d];
      row /= x.size[d];
      ox += c * x.stride[d];
      om += c * mask.stride[d];
      ov += c * v.stride[d];
    }
    using E = element_t<D>;
    using C = compute_t<D>;
    E* px = reinterpret_cast<E*>(x.p) + ox;
    const std::uint8_t* pm = reinterpret_cast<const std::uint8_t*>(mask.p) + om;
    const E* pv = reinterpret_cast<const E*>(v.p) + ov;
    const index_t n = x.size[last], sx = x.stride[last], sm = mask.stride[last], sv = v.stride[last];
    if (whole_rows) {
      auto put = [&](index_t j, E val) {
        const E cur = px[j];
        if (accumulate) store_as<D, C>(reinterpret_cast<std::byte*>(&val), wrap_add(load_as<D, C>(reinterpret_cast<const std::byte*>(&cur)),
                                                                                     load_as<D, C>(reinterpret_cast<const std::byte*>(&val))));
        px[j] = pm[j] != 0 ? val : cur;
      };
      if (sv == 0) {
        const E one = pv[0];
        for (index_t j = 0; j < n; ++j) put(j, one);
      } else {
        for (index_t j = 0; j < n; ++j) put(j, pv[j]);
      }
      return;
    }
    for (index_t j = 0; j < n; ++j) {
      if (pm[j * sm] == 0) continue;
      std::byte* p = reinterpret_cast<std::byte*>(px + j * sx);
      const std::byte* q = reinterpret_cast<const std::byte*>(pv + j * sv);
      if (accumulate) {
        store_as<D, C>(p, wrap_add(load_as<D, C>(p), load_as<D, C>(q)));
      } else {
        std::memcpy(p, q, sizeof(E));
      }
    }
  }
};

// x[mask] = v (or += v) for x of element type D (compiled<G>'s static plans: no dtype dispatch):
// row by row on the host, one element per thread on CUDA.
template <dtype D>
void masked_put_typed(const device_ctx& ctx, const strided& x, const strided& mask, int dim0, const strided& values, bool accumulate) {
  strided m, v;
  masked_put_operands(x, mask, dim0, values, m, v);
  if (x.numel() == 0) return;
  if (runs_device_kernels(ctx)) {
    parallel_for(ctx, x.numel(), masked_put_fn<D>{x, m, v, accumulate});
  } else if (x.rank == 0) {
    masked_put_fn<D>{x, m, v, accumulate}(0);
  } else {
    const int last = x.rank - 1;
    const bool whole_rows = x.stride[last] == 1 && m.stride[last] == 1 && (v.stride[last] == 0 || v.stride[last] == 1) &&
                            no_internal_overlap(x);
    parallel_for(ctx, x.numel() / x.size[last], masked_put_rows_fn<D>{x, m, v, accumulate, whole_rows});
  }
}

inline void masked_put(const device_ctx& ctx, const strided& x, const strided& mask, int dim0, const strided& values,
                       bool accumulate) {
  visit_dtype(x.dt, [&](auto dd) { masked_put_typed<decltype(dd)::value>(ctx, x, mask, dim0, values, accumulate); });
}

// Workspace bytes the deterministic CUDA path needs for `count` positions (0 on the host).
inline std::size_t index_put_scratch_bytes(index_t count, backend b) {
  if (b != backend::cuda || count <= 0) return 0;
#if defined(__CUDACC__)
  std::size_t temp = 0;
  cub::DeviceRadixSort::SortPairs(nullptr, temp, static_cast<const index_t*>(nullptr), static_cast<index_t*>(nullptr),
                                  static_cast<const index_t*>(nullptr), static_cast<index_t*>(nullptr),
                                  static_cast<int>(count));
  return temp + 4 * static_cast<std::size_t>(count) * sizeof(index_t) + 256;
#else
  return 0;
#endif
}

#if defined(__CUDACC__)
template <dtype D>
struct index_put_keys_fn {
  index_put_args a;
  index_t* keys;
  index_t* pos;
  CTFX_HD void operator()(index_t j) const { keys[j] = a.dest(j); pos[j] = j; }
};
template <dtype D>
struct index_put_runs_fn {  // one thread per sorted position that starts a run
  index_put_args a;
  const index_t* keys;
  const index_t* pos;
  CTFX_HD void operator()(index_t s) const {
    if (s > 0 && keys[s - 1] == keys[s]) return;
    index_t e = s;
    if (a.reducing()) {  // the run folded in j order, rounded to D at every step as on the host
      using C = compute_t<D>;
      std::byte* p = a.x.p + keys[s] * size_of(D);
      if (!a.include_self) store_as<D, C>(p, reduce_identity<D>(a.reduce));
      for (; e < a.count && keys[e] == keys[s]; ++e)
        store_as<D, C>(p, reduce_combine<D>(a.reduce, load_as<D, C>(p), load_as<D, C>(a.values.at(pos[e]))));
      return;
    }
    if (!a.accumulate) {
      while (e + 1 < a.count && keys[e + 1] == keys[s]) ++e;
      put_one<D>(a, pos[e], keys[s]);  // the last write wins
      return;
    }
    for (; e < a.count && keys[e] == keys[s]; ++e) put_one<D>(a, pos[e], keys[s]);
  }
};
template <dtype D>
struct index_put_atomic_fn {
  index_put_args a;
  __device__ void operator()(index_t j) const {
    using E = element_t<D>;
    E* p = reinterpret_cast<E*>(a.x.p) + a.dest(j);
    if constexpr (D == dtype::f32 || D == dtype::f64 || D == dtype::i32)
      atomicAdd(p, *reinterpret_cast<const E*>(a.values.at(j)));
    else
      put_one<D>(a, j, a.dest(j));  // no native atomic: same as the unordered plain put
  }
};
#endif

// Runs the put. `scratch` is the caller's workspace slice of index_put_scratch_bytes (CUDA only).
inline void index_put([[maybe_unused]] const device_ctx& ctx, const index_put_args& a, std::byte* scratch, bool atomic = false) {
  if (a.count == 0) return;
  visit_dtype(a.x.dt, [&](auto dd) {
    constexpr dtype D = decltype(dd)::value;
#if defined(__CUDACC__)
    if (ctx.where == backend::cuda) {
      auto stream = static_cast<cudaStream_t>(ctx.stream);
      if (atomic && a.accumulate && !a.reducing()) {
        thrust::for_each_n(thrust::cuda::par_nosync.on(stream), thrust::counting_iterator<index_t>(0), a.count,
                           index_put_atomic_fn<D>{a});
        return;
      }
      auto* keys = reinterpret_cast<index_t*>(scratch);
      index_t* pos = keys + a.count;
      index_t* keys2 = pos + a.count;
      index_t* pos2 = keys2 + a.count;
      std::byte* temp = reinterpret_cast<std::byte*>(pos2 + a.count);
      std::size_t temp_bytes = index_put_scratch_bytes(a.count, backend::cuda) - 4 * static_cast<std::size_t>(a.count) * sizeof(index_t);
      parallel_for(ctx, a.count, index_put_keys_fn<D>{a, keys, pos});
      cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys, keys2, pos, pos2, static_cast<int>(a.count), 0,
                                      static_cast<int>(sizeof(index_t) * 8), stream);
      parallel_for(ctx, a.count, index_put_runs_fn<D>{a, keys2, pos2});
      return;
    }
#endif
    (void)scratch;
    (void)atomic;
    index_put_seq_fn<D>{a}(0);
  });
}

}  // namespace ctfx::kernels
#include "../core/diagnostics_pop.hpp"
