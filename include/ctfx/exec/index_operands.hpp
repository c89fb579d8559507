// ctfx/exec/index_operands.hpp — an index op (index_put, its in-place and unsafe forms, index) as
// numbers: its operand nodes and the x dimension each index tensor addresses, read from the graph
// once. From them and a run's layouts come the kernels' arguments (kernels::index_put_args), the
// host check of the index values, the position of a put's row, and a failure's words. The run-time
// program (exec/program.hpp) and the static runner (exec/static_run.hpp) both use these, so the
// two executors check the same values and refuse a bad one with the same message.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include "../graph/ir.hpp"
#include "../kernels/index_put.hpp"
#include "layouts.hpp"

namespace ctfx {

/// An index op's operands: the nodes it reads and writes, and the x dimension of each index tensor.
struct index_operands {
  std::int32_t node = -1;    ///< the index op
  std::int32_t x = -1;       ///< the indexed tensor (its first argument)
  std::int32_t values = -1;  ///< the values put (index_put), or the result read into (index: the node itself)
  bool gather = false;       ///< index (a read), else a put
  bool inplace = false;      ///< index_put_ / unsafe_index_put_: x is written (else the op's own result)
  bool accumulate = false;   ///< the put adds (+=) rather than assigns
  kernels::put_reduce reduce = kernels::put_reduce::assign;  ///< a scatter's combine (aux's low bits)
  bool include_self = true;  ///< a scatter_reduce's include_self (aux's bit 8 clear)
  int along = -1;            ///< gather / scatter: the dimension the one index addresses (every other is its own coordinate)
  int n_index = 0;           ///< index tensors (a dimension without one is taken whole)
  std::int32_t index[max_rank]{};  ///< their nodes, in dimension order
  int dim[max_rank]{};             ///< the x dimension each one indexes
};

/// Index op `i`'s operands in graph `g`.
constexpr index_operands index_operands_of(const ir& g, std::int32_t i) {
  index_operands o;
  const op_kind k = g[i].op;
  o.node = i;
  o.x = g.arg(i, 0);
  o.gather = is_index_read(k);
  o.values = o.gather ? i : g.arg(i, 1);
  o.inplace = k == op_kind::index_put_ || k == op_kind::unsafe_index_put_ || k == op_kind::scatter_;
  o.accumulate = g[i].aux != 0;
  if (is_along_dim(k)) {
    o.reduce = static_cast<kernels::put_reduce>(g[i].aux & scatter_reduce_mask);
    o.include_self = (g[i].aux & scatter_without_self) == 0;
    o.accumulate = o.reduce != kernels::put_reduce::assign;
    o.along = static_cast<int>(g.iparam(i, 0));
    o.n_index = 1;
    o.index[0] = g.arg(i, first_index_arg(k));
    o.dim[0] = o.along;
    return o;
  }
  int dim = 0;
  for (std::int32_t q = first_index_arg(k); q < g[i].nargs; ++q, ++dim)
    if (const std::int32_t t = g.arg(i, q); t >= 0 && o.n_index < max_rank) {
      o.index[o.n_index] = t;
      o.dim[o.n_index++] = dim;
    }
  return o;
}

namespace detail {

// bshape (rank brank) becomes its broadcast with extents `size` (rank r; shapes already checked to agree).
inline void broadcast_into(index_t* bshape, int& brank, const index_t* size, int rank) {
  const int r = brank > rank ? brank : rank;
  index_t out[max_rank]{};
  for (int d = 0; d < r; ++d) {
    const int p = d - (r - brank), q = d - (r - rank);
    const index_t s1 = p >= 0 ? bshape[p] : 1, s2 = q >= 0 ? size[q] : 1;
    out[d] = s1 == 1 ? s2 : s1;
  }
  brank = r;
  for (int d = 0; d < r; ++d) bshape[d] = out[d];
}

// The kernels' arguments of gather or scatter `o` (a.x and a.accumulate set): S is the index's
// shape; x's part of an address is its strides at S's coordinates, but for `along`, whose
// coordinate is the index's value; the result (gather) or the source (scatter, cut to S's extents
// as PyTorch reads it) is read at S's coordinates.
inline kernels::index_put_args along_args(const index_operands& o, const bound_layout* L, std::byte* const* base, kernels::index_put_args a,
                                          const bound_layout& v) {
  const bound_layout& il = L[o.index[0]];
  const strided t = il.at(base[il.storage]);
  a.nonneg = true;
  a.n_index = 1;
  a.index[0] = t;
  a.index_dim[0] = o.along;
  a.index_extent[0] = a.x.size[o.along];
  a.free = a.x;
  a.values = v.at(base[v.storage]);
  for (int d = 0; d < t.rank; ++d) {
    a.free.size[d] = t.size[d];
    a.free.stride[d] = d == o.along ? 0 : a.x.stride[d];
    a.values.size[d] = t.size[d];
  }
  a.count = t.numel();
  return a;
}

// The kernels' arguments of index op `o` on a run's layouts `L` (per node) and bases (per storage),
// writing (or, for a gather, reading) `dst` at `dst_base`: every operand over the selected shape S
// (the shape of x[indices], as ops/index.hpp computes it).
inline kernels::index_put_args index_args(const index_operands& o, const bound_layout* L, std::byte* const* base, std::byte* dst_base,
                                          const bound_layout& dst) {
  kernels::index_put_args a;
  a.x = dst.at(dst_base);
  a.accumulate = o.accumulate;
  a.reduce = o.reduce;
  a.include_self = o.include_self;
  const bound_layout& v = L[o.values];
  if (o.along >= 0) return along_args(o, L, base, a, v);
  if (o.n_index == 0) {
    a.free = a.x;
    a.values = v.at(base[v.storage]).broadcast_to(a.x.rank, a.x.size);
    a.count = a.x.numel();
    return a;
  }
  bool adjacent = true;
  for (int k = 1; k < o.n_index; ++k) adjacent = adjacent && o.dim[k] == o.dim[k - 1] + 1;
  int brank = 0;
  index_t bshape[max_rank]{};
  for (int k = 0; k < o.n_index; ++k) broadcast_into(bshape, brank, L[o.index[k]].size, L[o.index[k]].rank);
  // S's dims: where the broadcast block sits (b0), and which x dim each free S dim comes from.
  strided S{};
  int b0 = 0;
  int free_src[max_rank];
  auto push = [&](index_t sz, int src) { S.size[S.rank] = sz; free_src[S.rank] = src; ++S.rank; };
  if (adjacent) {
    for (int d = 0; d < o.dim[0]; ++d) push(a.x.size[d], d);
    b0 = S.rank;
    for (int d = 0; d < brank; ++d) push(bshape[d], -1);
    for (int d = o.dim[o.n_index - 1] + 1; d < a.x.rank; ++d) push(a.x.size[d], d);
  } else {
    for (int d = 0; d < brank; ++d) push(bshape[d], -1);
    for (int d = 0; d < a.x.rank; ++d) {
      bool indexed = false;
      for (int k = 0; k < o.n_index; ++k) indexed = indexed || o.dim[k] == d;
      if (!indexed) push(a.x.size[d], d);
    }
  }
  a.count = S.numel();
  a.free = a.x;
  a.free.rank = S.rank;
  for (int d = 0; d < S.rank; ++d) {
    a.free.size[d] = S.size[d];
    a.free.stride[d] = free_src[d] >= 0 ? a.x.stride[free_src[d]] : 0;
  }
  a.n_index = o.n_index;
  for (int k = 0; k < o.n_index; ++k) {
    const bound_layout& l = L[o.index[k]];
    const strided t = l.at(base[l.storage]);
    strided s = t;
    s.rank = S.rank;
    for (int d = 0; d < S.rank; ++d) { s.size[d] = S.size[d]; s.stride[d] = 0; }
    for (int d = 0; d < l.rank; ++d) {  // right-aligned inside the broadcast block
      const int sd = b0 + brank - l.rank + d;
      s.stride[sd] = l.size[d] == 1 ? 0 : t.stride[d];
    }
    a.index[k] = s;
    a.index_dim[k] = o.dim[k];
    a.index_extent[k] = a.x.size[o.dim[k]];
  }
  a.values = v.at(base[v.storage]).broadcast_to(S.rank, S.size);
  return a;
}

// An index value out of range: which index tensor (its place in index_operands), the value, and
// its element's position in that tensor's row-major order (-1: none out of range).
struct bad_index {
  int which = -1;
  index_t value = 0;
  index_t at = -1;
};

// The first index value of op `o` out of range for x (`x`: x's layout), host buffers: each index
// tensor's own elements (not every selected position), in order.
inline bad_index first_bad_index_host(const index_operands& o, const bound_layout* L, std::byte* const* base, const bound_layout& x) {
  bad_index bad;
  for (int k = 0; k < o.n_index && bad.at < 0; ++k) {
    const bound_layout& il = L[o.index[k]];
    const strided t = il.at(base[il.storage]);
    const index_t lo = o.along >= 0 ? 0 : -x.size[o.dim[k]], hi = x.size[o.dim[k]];
    if (t.rank == 1 && t.dt == dtype::i64) {  // the common case, as a plain loop
      const auto* p = reinterpret_cast<const std::int64_t*>(t.p);
      const index_t n = t.size[0], st = t.stride[0];
      for (index_t e = 0; e < n; ++e)
        if (p[e * st] < lo || p[e * st] >= hi) { bad = {k, p[e * st], e}; break; }
      continue;
    }
    index_t e = 0;
    const int isz = size_of(t.dt);
    t.for_each_offset([&](index_t off) {
      const index_t v = t.dt == dtype::i64 ? *reinterpret_cast<const std::int64_t*>(t.p + off * 8)
                                           : kernels::load_dyn<index_t>(t.dt, t.p + off * isz);
      if (bad.at < 0 && (v < lo || v >= hi)) bad = {k, v, e};
      ++e;
    });
  }
  return bad;
}

// The refusal of an index value out of range, at node `node` (named `name`), from index tensor
// `index_name` addressing dimension `dim` of size `extent`.
inline run_status index_failure(std::int32_t node, std::string_view name, std::string_view index_name, int dim, index_t extent,
                                index_t value) {
  return run_status::failure(node, "rule index-in-range: node '" + std::string(name) + "': index " + std::to_string(value) +
                                       " (from '" + std::string(index_name) + "') is out of range for dimension " + std::to_string(dim) +
                                       " of size " + std::to_string(extent));
}

// Elements from the start of a row put's destination to the row its index selects (host
// buffers; the index checked in range): the index's first element `at`, of dtype `dt` (i64 or
// i32), wrapped by `extent` when negative, times x's `stride` along the indexed dimension.
inline index_t row_shift_host(const std::byte* at, dtype dt, index_t extent, index_t stride) {
  std::int64_t v = 0;
  if (dt == dtype::i64) {
    std::memcpy(&v, at, 8);
  } else {
    std::int32_t w = 0;
    std::memcpy(&w, at, 4);
    v = w;
  }
  if (v < 0) v += extent;
  return static_cast<index_t>(v) * stride;
}

}  // namespace detail
}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
