// ctfx/exec/tensor.hpp — how a caller hands tensors to a plan: a pointer, a dtype, extents and
// element strides (tensor_ref), or a cuda::std::mdspan converted by ctfx::ref(); and how a run
// reports failure (run_status: no exceptions, so a failed run is a value the caller inspects).
// A typed pointer gives its dtype (dtype_of); a label that disagrees with it does not compile.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstddef>
#include <cstdint>
#include <concepts>
#include <initializer_list>
#include <span>
#include <string>
#include <type_traits>
#include "../core/config.hpp"
#include "../core/dtype.hpp"
#include "../kernels/element.hpp"

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

/// The dtype of a C++ element type (`dtype_of<float>::value == dtype::f32`); see tensor_ref and ctfx::ref.
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

/// An element type with a ctfx dtype (cv-qualifiers aside).
template <class T>
concept has_dtype = requires { dtype_of<std::remove_cv_t<T>>::value; };

/// Memory without an element type: `void`, `std::byte`, `char`, `unsigned char` (`std::uint8_t`,
/// the storage of b8). A pointer to it takes any dtype label.
template <class T>
concept untyped_storage = std::is_void_v<T> || std::is_same_v<T, std::byte> || std::is_same_v<T, char> ||
                          std::is_same_v<T, unsigned char>;

/// The message of a mislabelled buffer, under every compiler: the name of the function a constant
/// evaluation cannot call.
namespace rule_buffer_dtype {
/// Not constexpr on purpose: buffer_label calls it when the label disagrees, and the compiler names it.
inline void the_dtype_label_disagrees_with_the_pointers_element_type__fix_drop_the_label_or_pass_a_void_pointer() {}
}  // namespace rule_buffer_dtype

/// A dtype label for a buffer of T, checked where the call is compiled: it must be T's dtype
/// (a label taken at run time needs an untyped pointer: `static_cast<void*>(p)`).
template <class T>
struct buffer_label {
  static_assert(has_dtype<T>,
                "ctfx: rule 'buffer-dtype' is broken; fix: point at bool, std::int8_t, std::int32_t, std::int64_t, "
                "ctfx::half_t, ctfx::bfloat16_t, float or double, or pass a void* with a dtype label");
  dtype value;  ///< the label, equal to dtype_of<T>::value
  /// Checks the label (at compile time).
  consteval buffer_label(dtype d) : value(d) {
    if constexpr (has_dtype<T>)
      if (d != dtype_of<std::remove_cv_t<T>>::value)
        rule_buffer_dtype::the_dtype_label_disagrees_with_the_pointers_element_type__fix_drop_the_label_or_pass_a_void_pointer();
  }
};

/// A caller's tensor: its description and the address of its element [0, ..., 0].
struct tensor_ref : tensor_desc {
  void* data = nullptr;  ///< the address of element [0, ..., 0] (host or device memory)
  constexpr tensor_ref() = default;
  /// A tensor at `p` with description `d` (untyped: `d.dt` is taken as it is).
  constexpr tensor_ref(void* p, const tensor_desc& d) : tensor_desc(d), data(p) {}
  /// A contiguous (row-major) tensor at `p`, its dtype that of T
  /// (`tensor_ref::contiguous(x.data(), {8})` with `std::vector<float> x` is f32).
  template <class T>
    requires(!untyped_storage<T>)
  static constexpr tensor_ref contiguous(T* p, std::initializer_list<index_t> sizes) {
    if constexpr (has_dtype<T>) {
      return {p, tensor_desc::contiguous(dtype_of<std::remove_cv_t<T>>::value, sizes)};
    } else {  // one message, not the incomplete dtype_of's too
      static_assert(has_dtype<T>,
                    "ctfx: rule 'buffer-dtype' is broken; fix: point at bool, std::int8_t, std::int32_t, std::int64_t, "
                    "ctfx::half_t, ctfx::bfloat16_t, float or double, or pass a void* with a dtype label");
      return {};
    }
  }
  /// A contiguous tensor at a typed `p`, labelled `d`: the label must be T's dtype, checked at
  /// compile time (a `float*` labelled ctfx::f16 does not compile).
  template <class T>
    requires(!untyped_storage<T>)
  static constexpr tensor_ref contiguous(T* p, std::type_identity_t<buffer_label<T>> d,
                                         std::initializer_list<index_t> sizes) {
    return {p, tensor_desc::contiguous(d.value, sizes)};
  }
  /// An empty tensor with no buffer (`contiguous(nullptr, ctfx::f32, {0, 8})`).
  static constexpr tensor_ref contiguous(std::nullptr_t, dtype d, std::initializer_list<index_t> sizes) {
    return {nullptr, tensor_desc::contiguous(d, sizes)};
  }
  /// A contiguous tensor in untyped memory (`void*`, bytes) of dtype `d`, which may be known only
  /// at run time.
  template <class V>
    requires untyped_storage<V>
  static constexpr tensor_ref contiguous(V* p, dtype d, std::initializer_list<index_t> sizes) {
    return {p, tensor_desc::contiguous(d, sizes)};
  }
};

/// The tensors a run takes: a read-only list of tensor_ref, built from a braced list
/// (`{ctfx::tensor_ref::contiguous(x.data(), {4}), ...}` or `{}`), a `std::vector`, a
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
