// ctfx/exec/tensor.hpp — how a caller hands tensors to a plan: a pointer, a dtype, extents and
// element strides (tensor_ref), or a cuda::std::mdspan converted by ctfx::ref(); and how a run
// reports failure (run_status: no exceptions, so a failed run is a value the caller inspects).
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstddef>
#include <cstdint>
#include <concepts>
#include <initializer_list>
#include <span>
#include <string>
#include "../core/config.hpp"
#include "../core/dtype.hpp"

namespace ctfx {

/// Extents and element strides of a tensor, without its data.
struct tensor_desc {
  dtype dt = dtype::f32;  ///< the element type
  int rank = 0;  ///< the number of dimensions
  index_t size[max_rank]{};  ///< the extents
  index_t stride[max_rank]{};  ///< the strides, in elements

  /// The number of elements.
  constexpr index_t numel() const {
    index_t n = 1;
    for (int i = 0; i < rank; ++i) n *= size[i];
    return n;
  }
  /// Bytes from the first element to one past the last reachable one (0 for an empty tensor).
  constexpr std::size_t span_bytes() const {
    index_t hi = 0;
    for (int i = 0; i < rank; ++i) {
      if (size[i] == 0) return 0;
      hi += (size[i] - 1) * stride[i];
    }
    return static_cast<std::size_t>(hi + 1) * static_cast<std::size_t>(size_of(dt));
  }
  /// A contiguous (row-major) description.
  static constexpr tensor_desc contiguous(dtype d, std::initializer_list<index_t> sizes) {
    tensor_desc t;
    t.dt = d;
    for (index_t s : sizes) t.size[t.rank++] = s;
    t.set_contiguous();
    return t;
  }
  /// Sets the row-major strides of the current extents.
  constexpr void set_contiguous() {
    index_t s = 1;
    for (int i = rank - 1; i >= 0; --i) { stride[i] = s; s *= size[i]; }
  }
  /// Same dtype, extents and strides (strides of extent-1 dimensions are not compared).
  constexpr bool operator==(const tensor_desc& o) const {
    if (dt != o.dt || rank != o.rank) return false;
    for (int i = 0; i < rank; ++i)
      if (size[i] != o.size[i] || (size[i] != 1 && stride[i] != o.stride[i])) return false;
    return true;
  }
};

/// A caller's tensor: its description and the address of its element [0, ..., 0].
struct tensor_ref : tensor_desc {
  void* data = nullptr;  ///< the address of element [0, ..., 0] (host or device memory)
  constexpr tensor_ref() = default;
  /// A tensor at `p` with description `d`.
  constexpr tensor_ref(void* p, const tensor_desc& d) : tensor_desc(d), data(p) {}
  /// A contiguous (row-major) tensor at `p`.
  static constexpr tensor_ref contiguous(void* p, dtype d, std::initializer_list<index_t> sizes) {
    return {p, tensor_desc::contiguous(d, sizes)};
  }
};

/// The tensors a run takes: a read-only list of tensor_ref, built from a braced list
/// (`{ctfx::tensor_ref::contiguous(p, ctfx::f32, {4}), ...}` or `{}`), a `std::vector`, a
/// `std::array`, a C array or a `std::span`. It does not own the tensors: a braced list lives until
/// the end of the full expression that calls `run`, which is as long as a run needs it.
class tensor_refs {
 public:
  /// No tensors.
  constexpr tensor_refs() = default;
  /// A braced list of tensors.
  constexpr tensor_refs(std::initializer_list<tensor_ref> l) : s_(l.begin(), l.size()) {}
  /// Any contiguous range of tensor_ref: `std::vector`, `std::array`, a C array, a span.
  template <class R>
    requires(!std::same_as<std::remove_cvref_t<R>, tensor_refs> && std::convertible_to<R&&, std::span<const tensor_ref>>)
  constexpr tensor_refs(R&& r) : s_(static_cast<R&&>(r)) {}
  /// The tensors as a span.
  constexpr std::span<const tensor_ref> span() const { return s_; }
  /// The tensors as a span (what the executors take).
  constexpr operator std::span<const tensor_ref>() const { return s_; }
  /// The number of tensors.
  constexpr std::size_t size() const { return s_.size(); }
  /// Tensor i.
  constexpr const tensor_ref& operator[](std::size_t i) const { return s_[i]; }
  /// The first tensor.
  constexpr const tensor_ref* begin() const { return s_.data(); }
  /// One past the last tensor.
  constexpr const tensor_ref* end() const { return s_.data() + s_.size(); }

 private:
  std::span<const tensor_ref> s_;
};

/// The outcome of binding or running a plan. On failure `node` names the graph node whose check
/// failed (or -1) and `message` says which rule and what was found; every caller buffer is then
/// exactly as it was before the call.
struct run_status {
  bool ok = true;  ///< whether the call succeeded
  std::int32_t node = -1;  ///< the node whose check failed, or -1
  std::string message;  ///< the rule and what was found (empty on success)
  /// True on success.
  explicit operator bool() const { return ok; }
  /// A failure at node `n` with message `m`.
  static run_status failure(std::int32_t n, std::string m) { return {false, n, static_cast<std::string&&>(m)}; }
};

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
