// expect-error: node .'foreach_add.' \(_foreach_add\) at foreach_unequal_lists\.cpp:9: list arguments of unequal length \[rule list-arguments\]
// _foreach_add of a list of two tensors with a list of one.
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto a = b.input("a", ctfx::f32, {4});
  auto c = b.input("c", ctfx::f32, {4});
  auto d = b.input("d", ctfx::f32, {4});
  auto r = ctfx::foreach_add({a, c}, {d});
  b.output(r[0]);
});
