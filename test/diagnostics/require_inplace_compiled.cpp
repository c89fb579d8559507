// A rule broken by the pipeline, not by the builder: compiled<G> runs reinplacing, and the node
// marked require_inplace() stays functional. (The size bounds keep the error reported from
// compiled<G>'s own context: from the pipeline's, the compiler prints the executor's Boost.Hana
// in-place table type twice, about 2 KB each, and it grows with every op.)
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

// What each compiler must print (cmake/check_diagnostic_text.cmake):
// head-lines: 12
// expect-all: rule 'require-inplace' is broken; fix: remove the later use that blocks it
// expect-gxx: node .'write.' \(index_put\) at line 12: require_inplace, but it stays functional: a later use reads the storage it would overwrite; blocked by .'sum.'
// expect-clang: node_at_line<12, ctfx::detail::shapes<>, 'w', 'r', 'i', 't', 'e'>
// expect-nvcc: node_at_line<12, ctfx::detail::shapes<>, 'w', 'r', 'i', 't', 'e'>
// max-bytes-gxx: 2000
// max-bytes-clang: 2200
// max-bytes-nvcc: 10000
// expect-cxx26: error: static assertion failed: ctfx: rule 'require-inplace' is broken: node 'write' \(index_put\) at line 12: require_inplace, but it stays functional: a later use reads the storage it would overwrite; blocked by 'sum'; fix: remove
// max-bytes-cxx26: 2200
