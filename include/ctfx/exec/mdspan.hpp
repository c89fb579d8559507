// ctfx/exec/mdspan.hpp — libcu++'s cuda::std::mdspan as a plan argument: ctfx::ref(m) describes
// any mdspan whose element type is a ctfx dtype, with layout_right, layout_left or layout_stride.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cuda/std/mdspan>
#include "../kernels/element.hpp"
#include "tensor.hpp"

namespace ctfx {

/// The dtype of a C++ element type (`dtype_of<float>::value == dtype::f32`); see ctfx::ref.
template <class T> struct dtype_of;
/// `bool` elements are dtype::b8.
template <> struct dtype_of<bool> { static constexpr dtype value = dtype::b8; /**< dtype::b8 */ };
/// `std::int8_t` elements are dtype::i8.
template <> struct dtype_of<std::int8_t> { static constexpr dtype value = dtype::i8; /**< dtype::i8 */ };
/// `std::int32_t` elements are dtype::i32.
template <> struct dtype_of<std::int32_t> { static constexpr dtype value = dtype::i32; /**< dtype::i32 */ };
/// `std::int64_t` elements are dtype::i64.
template <> struct dtype_of<std::int64_t> { static constexpr dtype value = dtype::i64; /**< dtype::i64 */ };
/// `half_t` elements are dtype::f16.
template <> struct dtype_of<half_t> { static constexpr dtype value = dtype::f16; /**< dtype::f16 */ };
/// `bfloat16_t` elements are dtype::bf16.
template <> struct dtype_of<bfloat16_t> { static constexpr dtype value = dtype::bf16; /**< dtype::bf16 */ };
/// `float` elements are dtype::f32.
template <> struct dtype_of<float> { static constexpr dtype value = dtype::f32; /**< dtype::f32 */ };
/// `double` elements are dtype::f64.
template <> struct dtype_of<double> { static constexpr dtype value = dtype::f64; /**< dtype::f64 */ };

template <class T, class Extents, class Layout, class Accessor>
tensor_ref ref(const cuda::std::mdspan<T, Extents, Layout, Accessor>& m) {
  static_assert(Extents::rank() <= static_cast<std::size_t>(max_rank), "ctfx::ref(mdspan): rank above ctfx::max_rank");
  tensor_desc d;
  d.dt = dtype_of<std::remove_cv_t<T>>::value;
  d.rank = static_cast<int>(Extents::rank());
  for (std::size_t i = 0; i < Extents::rank(); ++i) {
    d.size[i] = static_cast<index_t>(m.extent(i));
    d.stride[i] = static_cast<index_t>(m.stride(i));
  }
  return {const_cast<std::remove_cv_t<T>*>(m.data_handle()), d};
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
