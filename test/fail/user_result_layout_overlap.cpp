// expect-error: node .'custom.' \(custom\): .'t::padded.' declares strides that place two elements of its results at one address \(or are negative\): f32\[3, 4\] with strides \(2, 1\) \[rule user-result-layout\]
// A user op whose type declares strides for its result that overlap: row i starts 2 elements
// after row i - 1, inside it.
#include <ctfx.hpp>

struct padded : ctfx::custom_op<"t::padded", "padded(Tensor x) -> Tensor"> {
  static constexpr ctfx::fresh_layout layout = ctfx::fresh_layout::strides({2, 1});
};

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {3, 4});
  b.output(b.call<padded>(x)[0]);
});
