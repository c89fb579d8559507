// ctfx/exec/mdspan.hpp — libcu++'s cuda::std::mdspan as a plan argument: ctfx::ref(m) describes
// any mdspan whose element type has a ctfx dtype (dtype_of), with layout_right, layout_left or layout_stride.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cuda/std/mdspan>
#include "../kernels/element.hpp"
#include "tensor.hpp"

namespace ctfx {

/// The tensor an mdspan describes, its dtype that of its element type (dtype_of: an mdspan of
/// float is f32; one of an element type without a dtype does not compile).
template <class T, class Extents, class Layout, class Accessor>
tensor_ref ref(const cuda::std::mdspan<T, Extents, Layout, Accessor>& m) {
  static_assert(Extents::rank() <= static_cast<std::size_t>(max_rank), "ctfx::ref(mdspan): rank above ctfx::max_rank");
  static_assert(has_dtype<T>,
                "ctfx: rule 'buffer-dtype' is broken; fix: make the mdspan's element type bool, std::int8_t, "
                "std::int32_t, std::int64_t, ctfx::half_t, ctfx::bfloat16_t, float or double");
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
