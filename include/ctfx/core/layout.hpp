// ctfx/core/layout.hpp — the metadata every tensor node carries: dtype, extents, strides, storage
// offset and storage (alias class), as Inductor's fake tensors carry them.
#pragma once
#include "diagnostics_push.hpp"
#include <cstdint>
#include "config.hpp"
#include "dtype.hpp"
#include "symbolic.hpp"

namespace ctfx {

/// A node's tensor metadata, as the compiler knows it: dtype, extents, element strides, storage offset (all symbolic), and its storage (alias class).
struct tensor_meta {
  dtype dt = dtype::f32;  ///< the element type
  std::int8_t rank = 0;  ///< the number of dimensions
  sym_expr size[max_rank]{};  ///< the extents, dimension by dimension
  sym_expr stride[max_rank]{};  ///< the strides, in elements
  sym_expr offset{};  ///< the storage offset, in elements
  /// Alias class: nodes with equal storage share memory (views share their base's storage, fresh
  /// results get a fresh one). -1 marks a non-tensor value (a tuple of results, or nothing).
  std::int32_t storage = -1;

  /// Whether the value is a tensor (it has a storage), not a tuple or nothing.
  constexpr bool is_tensor() const { return storage >= 0; }
  /// The number of elements (symbolic).
  constexpr sym_expr numel() const {
    sym_expr r(1);
    for (int i = 0; i < rank; ++i) r = r * size[i];
    return r;
  }
  /// Whether every extent, stride and the offset are static.
  constexpr bool is_static() const {
    for (int i = 0; i < rank; ++i)
      if (!size[i].is_static() || !stride[i].is_static()) return false;
    return offset.is_static();
  }
  /// The layout helpers below take static extents (the common case) in plain integers, reading the
  /// fields: in constant evaluation each sym_expr operation or comparison is a call, dearer than the
  /// arithmetic. Symbolic extents go through sym_expr as before.
  constexpr bool same_shape(const tensor_meta& o) const {
    if (rank != o.rank) return false;
    for (int i = 0; i < rank; ++i) {
      const sym_expr &x = size[i], &y = o.size[i];
      if (x.n == 0 && y.n == 0 ? (x.c != y.c || x.overflow != y.overflow) : !(x == y)) return false;
    }
    return true;
  }
  /// Inductor's same_meta plus the storage offset (pytorch#197489): shape, strides, offset, dtype.
  constexpr bool same_layout(const tensor_meta& o) const {
    if (!same_shape(o) || dt != o.dt || !(offset == o.offset)) return false;
    for (int i = 0; i < rank; ++i)
      if (size[i] != sym_expr(1) && !(stride[i] == o.stride[i])) return false;
    return true;
  }
  /// Row-major strides for the current sizes.
  constexpr void set_contiguous() {
    bool fixed = true;
    for (int i = 0; fixed && i < rank; ++i) fixed = size[i].n == 0 && !size[i].overflow;
    if (fixed) {
      index_t s = 1;
      for (int i = rank - 1; i >= 0; --i) {
        sym_expr& st = stride[i];
        if (st.n != 0) st = sym_expr(s);
        st.c = s;  // a static sym_expr's terms are already empty
        st.overflow = false;
        s *= size[i].c;
      }
      offset = sym_expr(0);
      return;
    }
    sym_expr s(1);
    for (int i = rank - 1; i >= 0; --i) {
      stride[i] = s;
      s = s * size[i];
    }
    offset = sym_expr(0);
  }
  /// Whether the strides are the contiguous (row-major) ones.
  constexpr bool is_contiguous() const {
    bool fixed = true;
    for (int i = 0; fixed && i < rank; ++i)
      fixed = size[i].n == 0 && !size[i].overflow && stride[i].n == 0 && !stride[i].overflow;
    if (fixed) {
      index_t s = 1;
      for (int i = rank - 1; i >= 0; --i) {
        if (size[i].c != 1 && stride[i].c != s) return false;
        s *= size[i].c;
      }
      return true;
    }
    sym_expr s(1);
    for (int i = rank - 1; i >= 0; --i) {
      if (!(size[i] == sym_expr(1)) && !(stride[i] == s)) return false;
      s = s * size[i];
    }
    return true;
  }
  /// Whether a symbolic computation of an extent, stride or offset overflowed its fixed room, or
  /// the last element it reaches (offset + Σ (size-1)·stride, what its storage must hold) would:
  /// a plan sizes buffers from that, and a truncated size is a buffer too small.
  /// The offset of the last element, offset + Σ (size - 1) * stride, summed from the innermost
  /// dimension out (by the degree of its stride, then its largest coefficient), so that a dense
  /// layout's terms cancel as they come (a channels-last one summed in dimension order would pass
  /// through more terms than fit).
  constexpr sym_expr last_element() const {
    auto weight = [&](int i) {
      int deg = 0;
      index_t coeff = stride[i].c < 0 ? -stride[i].c : stride[i].c;
      for (int k = 0; k < stride[i].n; ++k) {
        const int dk = stride[i].t[k].degree();
        const index_t ck = stride[i].t[k].coeff < 0 ? -stride[i].t[k].coeff : stride[i].t[k].coeff;
        if (dk > deg) { deg = dk; coeff = ck; } else if (dk == deg && ck > coeff) coeff = ck;
      }
      return static_cast<index_t>(deg) * (index_t{1} << 40) + coeff;
    };
    int order[max_rank]{};
    for (int i = 0; i < rank; ++i) order[i] = i;
    for (int i = 1; i < rank; ++i)
      for (int j = i; j > 0 && weight(order[j]) < weight(order[j - 1]); --j) { const int t = order[j]; order[j] = order[j - 1]; order[j - 1] = t; }
    sym_expr hi = offset;
    for (int k = 0; k < rank; ++k) hi = hi + (size[order[k]] - sym_expr(1)) * stride[order[k]];
    return hi;
  }
  /// True when an extent, a stride, the offset or the last element's offset does not fit the
  /// symbolic size type (sym_expr's overflow flag): the layout cannot be represented.
  constexpr bool any_overflow() const {
    bool fixed = !offset.overflow && offset.n == 0;
    for (int i = 0; i < rank; ++i) {
      if (size[i].overflow || stride[i].overflow) return true;
      fixed = fixed && size[i].n == 0 && stride[i].n == 0;
    }
    if (offset.overflow) return true;
    if (fixed) return false;
    return last_element().overflow;
  }
};

}  // namespace ctfx
#include "diagnostics_pop.hpp"
