// What the compile-time savings must not change: detail::cvec behaves as the std::vector subset the
// passes use; the verifier between passes at `structure` level gives the same final graph and the
// same verdict as `full`; remove_noop_ops without a candidate returns its graph unchanged.
#include <doctest/doctest.h>
#include <ctfx.hpp>
#include <ctfx/detail/cvec.hpp>
#include <ctfx/passes/pipeline.hpp>
#include <string>

namespace {

using ctfx::detail::cvec;

// push_back of one of its own elements while growing, resize/assign/clear, copies and moves.
constexpr bool cvec_semantics() {
  cvec<int> v;
  for (int i = 0; i < 8; ++i) v.push_back(i);  // capacity 8 exactly
  v.push_back(v[3]);                              // grows; the argument lives in the old storage
  if (v.size() != 9 || v[8] != 3 || v.back() != 3) return false;
  v.resize(12);
  if (v[11] != 0 || v.size() != 12) return false;
  v.resize(2);
  if (v.size() != 2 || v[1] != 1) return false;
  v.assign(5, -1);
  if (v.size() != 5 || v[0] != -1 || v[4] != -1) return false;
  cvec<int> w = v;  // copy
  w[0] = 7;
  if (v[0] != -1 || w[0] != 7) return false;
  cvec<int> m = static_cast<cvec<int>&&>(w);  // move
  if (m.size() != 5 || m[0] != 7 || !w.empty()) return false;
  v = m;
  if (v[0] != 7) return false;
  cvec<int> r(m.begin() + 1, m.end());  // a range
  if (r.size() != 4 || r[0] != -1) return false;
  cvec<int> f(3, 9);
  int s = 0;
  for (int x : f) s += x;
  if (s != 27) return false;
  f.pop_back();
  f.clear();
  return f.empty() && cvec<int>{1, 2, 3}.size() == 3;
}
static_assert(cvec_semantics());

// Elements with a destructor are destroyed (a vector of vectors frees its inner storage: constant
// evaluation rejects a leak).
constexpr bool cvec_nested() {
  cvec<cvec<int>> vv;
  for (int i = 0; i < 20; ++i) vv.push_back(cvec<int>(static_cast<std::size_t>(i), i));
  vv.resize(3);
  return vv[2].size() == 2 && vv[2][1] == 2;
}
static_assert(cvec_nested());

constexpr auto kv_step = ctfx::graph([](ctfx::builder& g) {
  auto cache = g.input("cache", ctfx::f16, {2, 4, 16, 8});
  auto k = g.input("k", ctfx::f16, {2, 4, 1, 8});
  auto src = g.input("src", ctfx::f16, {2, 4, 1, 8});
  auto pos = g.input("pos", ctfx::i64, {1});
  auto next = ctfx::index_put(cache, {ctfx::none, ctfx::none, pos}, k);
  auto y = ctfx::slice_scatter(next, src * 2.0, 2, 0, 1);
  g.update(cache, y);
});

// A chain of scatters with nothing for remove_noop_ops to remove.
constexpr auto chain = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {16, 8});
  auto s = g.input("s", ctfx::f32, {1, 8});
  auto y = x;
  for (int i = 0; i < 6; ++i) y = ctfx::slice_scatter(y, s * static_cast<double>(i + 2), 0, i, i + 1);
  g.update(x, y);
});

TEST_CASE("structure checks between passes give the graph and verdict of full checks") {
  for (const ctfx::ir& g : {kv_step.get(), chain.get()}) {
    ctfx::reinplace_log a, b;
    const ctfx::ir full = ctfx::run_pipeline(g, &a, ctfx::verify_level::full);
    const ctfx::ir fast = ctfx::run_pipeline(g, &b, ctfx::verify_level::structure);
    ctfx::reinplace_log c;
    const ctfx::ir links = ctfx::run_pipeline(g, &c, ctfx::verify_level::links);
    CHECK(full.error.ok());
    CHECK(fast.error.ok());
    CHECK(links.error.ok());
    CHECK(ctfx::to_text(full) == ctfx::to_text(fast));
    CHECK(ctfx::to_text(full) == ctfx::to_text(links));
    CHECK(a.items.size() == b.items.size());
    CHECK(a.items.size() == c.items.size());
  }
  // The compile-time pipeline (structure between passes under g++ and clang) agrees as well.
  CHECK(ctfx::to_text(ctfx::pipeline<decltype(chain)>::get()) == ctfx::to_text(ctfx::run_pipeline(chain.get())));
}

TEST_CASE("remove_noop_ops without a candidate returns the graph as it was") {
  const ctfx::ir g = chain.get();
  const ctfx::ir h = ctfx::remove_noop_ops(g);
  CHECK(ctfx::to_text(h) == ctfx::to_text(g));
  CHECK(h.size() == g.size());
  // With a no-op in it, it still removes it: x * 1 is x.
  constexpr auto with_noop = ctfx::graph([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4});
    b.output(ctfx::relu(x * 1.0));
  });
  const ctfx::ir w = with_noop.get();
  CHECK(ctfx::remove_noop_ops(w).size() == w.size() - 1);
}

}  // namespace
