// A rule broken by the pipeline, not by the builder: compiled<G> runs reinplacing, and the node
// marked require_inplace() stays functional. (The size bound is what keeps the executor's
// Boost.Hana kernel table from being printed more than once.)
// head-lines: 12
// expect-all: rule 'require-inplace' is broken; fix: remove the later use that blocks it
// expect-gxx: node .'write.' \(index_put\) at line 21: require_inplace, but it stays functional: a later use reads the storage it would overwrite; blocked by .'sum.'
// expect-clang: node_at_line<21, 'w', 'r', 'i', 't', 'e'>
// expect-nvcc: node_at_line<21, 'w', 'r', 'i', 't', 'e'>
// max-bytes-gxx: 5500
// max-bytes-clang: 5500
// max-bytes-nvcc: 9500
// expect-cxx26: error: static assertion failed due to requirement 'diag.ok\(\)': ctfx: rule 'require-inplace' is broken: node 'write' \(index_put\) at line 21: require_inplace, but it stays functional: a later use reads the storage it would overwrite; blocked by 'sum'; fix: remove
// max-bytes-cxx26: 5500
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>

constexpr auto step = ctfx::graph([](ctfx::builder& g) {
  auto cache = g.input("cache", ctfx::f32, {16, 4});
  auto k = g.input("k", ctfx::f32, {1, 4});
  auto pos = g.input("pos", ctfx::i64, {1});
  g.update(cache, ctfx::index_put(cache, {pos}, k).named("write").require_inplace());
  g.output(cache.sum({0}));
});
using plan = ctfx::compiled<decltype(step)>;
static_assert(plan::node_count > 0);
