// expect-error: node .'index_put_.' \(index_put_\): mutates .'cache.' in a functional graph; .*\[rule functional-except-epilogue\]
// index_put_ (the in-place form) in a functional graph.
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto cache = b.input("cache", ctfx::f32, {16, 8});
  auto pos = b.input("pos", ctfx::i64, {1});
  auto row = b.input("row", ctfx::f32, {1, 8});
  b.output(ctfx::index_put_(cache, {pos}, row));
});
