// The pooled-arena planner (plan/arena.hpp): valid offsets, optimum on small cases, never worse than
// first fit, graph pools (static, symbolic, unbacked, partitions), the listing, the trace reader.
#include <doctest/doctest.h>
#include <ctfx.hpp>
#include <ctfx/plan/arena.hpp>
#include <ctfx/plan/listing.hpp>
#include <ctfx/plan/trace.hpp>

namespace {

using blocks = std::vector<ctfx::arena_block>;

// Three staggered blocks of 4 bytes: at most two live at once, so the optimum is 8.
constexpr blocks stagger() { return {{0, 2, 4, 1}, {1, 3, 4, 1}, {2, 4, 4, 1}}; }
static_assert(ctfx::arena_lower_bound(stagger()) == 8);
static_assert(ctfx::plan_arena_blocks(stagger()).pool_bytes == 8);
static_assert(ctfx::arena_check(stagger(), ctfx::plan_arena_blocks(stagger()).offset).ok());

// Start-order first fit puts the early small block at 0, the long one above it, and the last one on
// top (10 bytes); the optimum puts the two 4-byte blocks side by side (8 = the lower bound).
constexpr blocks trap() { return {{1, 4, 2, 1}, {2, 5, 4, 1}, {5, 8, 1, 1}, {4, 5, 4, 1}}; }
static_assert(ctfx::arena_lower_bound(trap()) == 8);
static_assert(ctfx::plan_arena_blocks(trap()).pool_bytes == 8);
static_assert(ctfx::arena_first_fit(trap()).pool_bytes == 10);

// Alignment: two 3-byte blocks aligned to 4 that overlap in time need 7 bytes, the second at 4.
constexpr blocks aligned() { return {{0, 2, 3, 4}, {1, 3, 3, 4}}; }
static_assert(ctfx::plan_arena_blocks(aligned()).pool_bytes == 7);
static_assert(ctfx::arena_check(aligned(), ctfx::plan_arena_blocks(aligned()).offset).ok());

// The planned peak of a graph, checked by the compiler: a chain of pointwise ops. An arena packs
// blocks from their defining step (it cannot promise the same offset that an elementwise result
// needs to take its dying input's memory — plan/reuse.hpp's slots do that), so the chain alternates
// two 128 B tiles, and d (32 B, aligned to 64) sits beside them.
constexpr auto chain = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {4, 8});
  auto a = (x + 1.0).named("a");
  auto b = (a * 2.0).named("b");
  auto c = (b - 3.0).named("c");
  auto d = c.sum({0}).named("d");
  auto e = (x * 4.0).named("e");
  auto f = (e + 1.0).named("f");
  g.output(d, f);
});
constexpr ctfx::arena_plan chain_plan() {
  auto g = chain.get();
  return ctfx::plan_arena(g, ctfx::compute_liveness(g));
}
static_assert(chain_plan().n_pools() == 1);
static_assert(chain_plan().pool_bytes(0) == 320, "two 128 B tiles for the chain and d (32 B, aligned to 64)");
static_assert(chain_plan().peak_bytes == chain_plan().lower_bound);
static_assert(chain_plan().unplanned_peak == 5 * 128 + 64);

// A pseudo-random trace, the same at compile time and at run time.
blocks random_blocks(std::uint64_t seed, int n, std::int64_t horizon) {
  ctfx::detail::splitmix r{seed};
  blocks b;
  for (int i = 0; i < n; ++i) {
    const std::int64_t lo = r.below(horizon), len = 1 + r.below(horizon / 4);
    b.push_back({lo, lo + len, 1 + r.below(1000), 1 + 7 * r.below(2)});
  }
  return b;
}

// A puzzle with a known optimum: a 64-byte × 16-step rectangle cut into blocks by random guillotine
// cuts (in time or in space, depth levels deep). The blocks tile the rectangle, so the optimum is
// 64 = the lower bound; greedy orders leave gaps.
constexpr void guillotine(blocks& b, ctfx::detail::splitmix& r, std::int64_t t0, std::int64_t t1, std::int64_t o0, std::int64_t o1, int depth) {
  if (depth == 0 || (t1 - t0 < 2 && o1 - o0 < 2)) { b.push_back({t0, t1, o1 - o0, 1}); return; }
  if ((r.below(2) == 0 && t1 - t0 >= 2) || o1 - o0 < 2) {
    const std::int64_t t = t0 + 1 + r.below(t1 - t0 - 1);
    guillotine(b, r, t0, t, o0, o1, depth - 1);
    guillotine(b, r, t, t1, o0, o1, depth - 1);
  } else {
    const std::int64_t o = o0 + 1 + r.below(o1 - o0 - 1);
    guillotine(b, r, t0, t1, o0, o, depth - 1);
    guillotine(b, r, t0, t1, o, o1, depth - 1);
  }
}
constexpr blocks puzzle(std::uint64_t seed, int depth) {
  blocks b;
  ctfx::detail::splitmix r{seed};
  guillotine(b, r, 0, 16, 0, 64, depth);
  return b;
}
constexpr ctfx::arena_options greedy_only() {
  ctfx::arena_options o;
  o.improve = false;
  return o;
}
// The exact search (arena_search.hpp) finds the tiling in the compiler too (16 blocks, where the
// best greedy order needs 74 bytes).
static_assert(puzzle(47, 4).size() == 16);
static_assert(ctfx::arena_lower_bound(puzzle(47, 4)) == 64);
static_assert(ctfx::plan_arena_blocks(puzzle(47, 4), greedy_only()).pool_bytes == 74);
static_assert(ctfx::plan_arena_blocks(puzzle(47, 4)).pool_bytes == 64);
static_assert(ctfx::arena_check(puzzle(47, 4), ctfx::plan_arena_blocks(puzzle(47, 4)).offset).ok());

// The placer keeps unions of taken intervals: adding merges overlapping and touching ones.
constexpr bool spans_merge() {
  std::vector<ctfx::detail::span> v;
  ctfx::detail::add_span(v, {10, 20});
  ctfx::detail::add_span(v, {30, 40});
  ctfx::detail::add_span(v, {0, 5});
  const bool inside = !ctfx::detail::add_span(v, {12, 18});  // already there: nothing changes
  ctfx::detail::add_span(v, {20, 30});                       // touches both: one run [10, 40)
  return inside && v.size() == 2 && v[0].begin == 0 && v[0].end == 5 && v[1].begin == 10 && v[1].end == 40;
}
static_assert(spans_merge());

// The reference placement the tree must reproduce: scan every placed block, keep those overlapping
// in time, sort by offset, walk the gaps (quadratic; what the placer did before the tree). Best fit
// compares the aligned gap with the best one's unaligned gap, as TFLite's SimpleMemoryArena does.
std::vector<std::int64_t> naive_placement(const blocks& b, const std::vector<std::int32_t>& order, bool best_fit) {
  std::vector<std::int64_t> off(b.size(), -1);
  std::vector<std::int32_t> placed;
  for (auto i : order) {
    const auto& x = b[static_cast<std::size_t>(i)];
    std::vector<std::pair<std::int64_t, std::int64_t>> taken;
    if (x.lower < x.upper && x.size > 0)
      for (auto j : placed) {
        const auto& y = b[static_cast<std::size_t>(j)];
        if (y.lower < y.upper && y.lower < x.upper && x.lower < y.upper && y.size > 0) taken.push_back({off[static_cast<std::size_t>(j)], off[static_cast<std::size_t>(j)] + y.size});
      }
    std::sort(taken.begin(), taken.end());
    std::int64_t cur = 0, best = -1, best_gap = 0;
    for (const auto& [s, e] : taken) {
      const std::int64_t at = ctfx::detail::align_up(cur, x.align);
      if (s > cur && at + x.size <= s && (best < 0 || s - at < best_gap)) {
        best = at;
        best_gap = s - cur;
        if (!best_fit) break;
      }
      cur = std::max(cur, e);
    }
    off[static_cast<std::size_t>(i)] = best < 0 ? ctfx::detail::align_up(cur, x.align) : best;
    placed.push_back(i);
  }
  return off;
}

}  // namespace

TEST_CASE("arena placer: the interval-union tree places exactly as the quadratic scan does") {
  for (std::uint64_t seed = 11; seed <= 16; ++seed) {
    auto b = random_blocks(seed, 400, 300);
    b.push_back({7, 7, 50, 1});  // empty lifetime and zero size: placed at 0, take nothing
    b.push_back({3, 90, 0, 1});
    std::vector<std::int32_t> order;
    for (std::int32_t i = 0; i < static_cast<std::int32_t>(b.size()); ++i) order.push_back(i);
    ctfx::detail::splitmix r{seed};
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[static_cast<std::size_t>(r.below(static_cast<std::int64_t>(i)))]);
    ctfx::detail::arena_placer P(b);
    for (bool best_fit : {true, false}) {
      P.run(order, best_fit);
      const auto ref = naive_placement(b, order, best_fit);
      CHECK(P.off == ref);
      CHECK(ctfx::arena_check(b, P.off).ok());
    }
  }
}

TEST_CASE("arena: plans are overlap-free, at least the lower bound, never worse than first fit") {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const auto b = random_blocks(seed, 300, 500);
    ctfx::arena_options opt;
    opt.work = 20'000'000;
    const auto r = ctfx::plan_arena_blocks(b, opt);
    const auto ff = ctfx::arena_first_fit(b);
    CHECK(ctfx::arena_check(b, r.offset).ok());
    CHECK(ctfx::arena_check(b, ff.offset).ok());
    CHECK(r.pool_bytes >= r.lower_bound);
    CHECK(r.pool_bytes <= ff.pool_bytes);
    for (std::size_t i = 0; i < b.size(); ++i) CHECK(r.offset[i] + b[i].size <= r.pool_bytes);
  }
}

TEST_CASE("arena search: exact packings that the greedy orders miss") {
  // Puzzles whose optimum is the lower bound (64) and whose best greedy plan is larger.
  int strictly_better = 0;
  for (std::uint64_t seed : {1u, 2u, 7u, 11u, 17u, 30u}) {
    for (int depth : {4, 5, 6}) {
      const auto b = puzzle(seed, depth);
      ctfx::arena_options opt;
      // Generous (each puzzle takes well under 10 ms here): the search stops when it reaches the lower
      // bound.
      opt.work = 60'000'000'000;
      const auto r = ctfx::plan_arena_blocks(b, opt);
      const auto greedy = ctfx::plan_arena_blocks(b, greedy_only());
      CHECK(ctfx::arena_check(b, r.offset).ok());
      CHECK(r.lower_bound == 64);
      CHECK(r.pool_bytes == 64);
      CHECK(greedy.pool_bytes >= 64);
      if (greedy.pool_bytes > 64) ++strictly_better;
    }
  }
  CHECK(strictly_better >= 6);
  // The search alone: a plan within the optimum; none below the lower bound (pruned at the root).
  const auto b = puzzle(17, 5);
  ctfx::detail::arena_bnb B;
  REQUIRE(B.build(b, 1'000'000));
  REQUIRE(B.search(64, 1'000'000, 0, 0) == ctfx::detail::arena_bnb::outcome::found);
  CHECK(ctfx::arena_check(b, B.best_off).ok());
  for (std::size_t i = 0; i < b.size(); ++i) CHECK(B.best_off[i] + b[i].size <= 64);
  CHECK(B.search(63, 1'000'000, 0, 0) == ctfx::detail::arena_bnb::outcome::infeasible);
  // Alignment: every block at a multiple of its alignment.
  blocks al = puzzle(2, 5);
  for (auto& x : al) { x.size *= 8; x.align = 8; }
  const auto ra = ctfx::plan_arena_blocks(al);
  CHECK(ctfx::arena_check(al, ra.offset).ok());
  CHECK(ra.pool_bytes == 512);
}

TEST_CASE("arena: the checker finds two blocks that overlap in time and space") {
  const blocks b = {{0, 4, 8, 1}, {2, 6, 8, 1}, {6, 8, 8, 1}};
  CHECK(ctfx::arena_check(b, {0, 8, 0}).ok());  // the third starts when the second ends
  const auto c = ctfx::arena_check(b, {0, 4, 0});
  CHECK(!c.ok());
  CHECK(((c.a == 0 && c.b == 1) || (c.a == 1 && c.b == 0)));
  CHECK(!ctfx::arena_check({{0, 1, 4, 8}}, {4}).ok());  // misaligned
}

TEST_CASE("arena: symbolic sizes stack in lanes after the static region, unbacked sizes get late pools") {
  constexpr auto gd = ctfx::graph([](ctfx::builder& g) {
    auto s0 = g.sym("s0");
    auto u0 = g.unbacked("u0");
    auto x = g.input("x", ctfx::f32, {s0, 8});
    auto y = g.input("y", ctfx::f32, {4, 8});
    auto a = (x * 2.0).named("a");   // 32*s0 B
    auto sa = a.sum().named("sa");   // static 4 B
    auto b = (x * 3.0).named("b");   // 32*s0 B, a is dead by then: same lane
    auto sb = b.sum().named("sb");
    auto c = (y + 1.0).named("c");   // static 128 B
    auto z = g.zeros({u0, 4}).named("z");  // data-dependent: its own pool, created at its step
    auto sz = z.sum().named("sz");
    g.output(sa, sb, c.sum().named("sc"), sz);
  });
  auto g = gd.get();
  auto L = ctfx::compute_liveness(g);
  auto A = ctfx::plan_arena(g, L);
  auto slot = [&](std::string_view n) { return A.slots[static_cast<std::size_t>(L.buffer_of[static_cast<std::size_t>(g[g.find(n)].meta.storage)])]; };
  REQUIRE(A.n_pools() == 2);
  CHECK(A.pools[0].kind == ctfx::pool_kind::intermediates);
  CHECK(A.pools[0].lanes.size() == 1);  // a and b share one lane
  CHECK(slot("a").pool == 0);
  CHECK(slot("a").lane == 0);
  CHECK(slot("b").lane == 0);
  CHECK(slot("a").offset == A.pool_bytes(0));  // after the static region
  CHECK(A.pools[1].kind == ctfx::pool_kind::unbacked);
  CHECK(slot("z").pool == 1);
  const auto& zb = L.buffers[static_cast<std::size_t>(L.buffer_of[static_cast<std::size_t>(g[g.find("z")].meta.storage)])];
  CHECK(A.pools[1].begin == zb.begin);  // never before its size is known
  CHECK(zb.unbacked);
  // Run time: s0 = 3, u0 = 5.
  const std::vector<ctfx::index_t> v = {3, 5};
  CHECK(A.offset_of(L.buffer_of[static_cast<std::size_t>(g[g.find("a")].meta.storage)], v) == A.pool_bytes(0));
  CHECK(A.pool_size(0, v) == A.pool_bytes(0) + 128);  // 96 B rounded up to 64
  CHECK(A.pool_size(1, v) == 128);                    // 80 B rounded up to 64
  const std::string text = ctfx::arena_listing(g, L, A);
  CHECK(text.find("pool0 = empty_strided((" + std::to_string(A.pool_bytes(0)) + " + align(32*s0),), (1,), dtype=uint8)") != std::string::npos);
  CHECK(text.find("pool1 = empty_strided((0 + align(16*u0),), (1,), dtype=uint8)  # after its data-dependent size is known") != std::string::npos);
  // pool1 is created after the step that computes nothing before z: it follows every earlier step.
  CHECK(text.find("pool1 =") > text.find("= sum(%b"));
}

TEST_CASE("arena: each partition has its own pools") {
  constexpr auto gd = ctfx::graph([](ctfx::builder& g) {
    auto x = g.input("x", ctfx::f32, {4, 8});
    auto a = (x + 1.0).named("a");
    auto b = a.sum({0}).named("b");  // read by partition 1
    g.partition_boundary();
    auto d = (x * 3.0).named("d");  // could take a's memory, but a belongs to partition 0
    auto e = (d + b).named("e");
    g.output(e);
  });
  auto g = gd.get();
  auto L = ctfx::compute_liveness(g);
  auto A = ctfx::plan_arena(g, L);
  REQUIRE(A.n_pools() == 2);
  CHECK(A.pools[0].partition == 0);
  CHECK(A.pools[1].partition == 1);
  CHECK(A.pools[0].returned);  // holds b, which partition 1 reads: never freed by partition 0
  for (std::size_t i = 0; i < L.buffers.size(); ++i)
    CHECK(A.pools[static_cast<std::size_t>(A.slots[i].pool)].partition == L.buffers[i].partition);
}

TEST_CASE("arena listing: pools, alloc_from_pool, kernels with provenance, peak and lower bound") {
  auto g = chain.get();
  auto L = ctfx::compute_liveness(g);
  auto A = ctfx::plan_arena(g, L);
  ctfx::listing_options opt;
  opt.original = &g;
  CHECK(ctfx::arena_listing(g, L, A, opt) ==
        "def call(x):\n"
        "    pool0 = empty_strided((320,), (1,), dtype=uint8)\n"
        "    buf0 = alloc_from_pool(pool0, " + std::to_string(A.slots[0].offset) + ", f32, (4, 8), (8, 1))\n"
        "    %a : f32[4, 8] = add(%x, 1.0)  # step 0, from %a\n"
        "    buf1 = alloc_from_pool(pool0, " + std::to_string(A.slots[1].offset) + ", f32, (4, 8), (8, 1))\n"
        "    %b : f32[4, 8] = mul(%a, 2.0)  # step 1, from %b\n"
        "    buf2 = alloc_from_pool(pool0, " + std::to_string(A.slots[2].offset) + ", f32, (4, 8), (8, 1))\n"
        "    %c : f32[4, 8] = sub(%b, 3.0)  # step 2, from %c\n"
        "    buf3 = alloc_from_pool(pool0, " + std::to_string(A.slots[3].offset) + ", f32, (8,), (1,))\n"
        "    %d : f32[8] = sum(%c, [0])  # step 3, from %d\n"
        "    buf4 = alloc_from_pool(pool0, " + std::to_string(A.slots[4].offset) + ", f32, (4, 8), (8, 1))\n"
        "    %e : f32[4, 8] = mul(%x, 4.0)  # step 4, from %e\n"
        "    buf5 = alloc_from_pool(pool0, " + std::to_string(A.slots[5].offset) + ", f32, (4, 8), (8, 1))\n"
        "    %f : f32[4, 8] = add(%e, 1.0)  # step 5, from %f\n"
        "    return (%d, %f)\n"
        "# peak: 320 bytes (lower bound 320, 704 without reuse)\n");
  // The pointwise chain a -> b -> c alternates two 128-byte tiles: a and c share one, b the other
  // (each result is live at the step its input is read).
  CHECK(A.slots[0].offset == A.slots[2].offset);
  CHECK(A.slots[0].offset != A.slots[1].offset);
}

TEST_CASE("trace reader: blocks, and errors that name the line") {
  auto t = ctfx::parse_trace("id,lower,upper,size\n0,0,2,16\n1,1,3,8\n");
  REQUIRE(t.ok());
  CHECK(t.blocks.size() == 2);
  CHECK(t.blocks[1].size == 8);
  CHECK(ctfx::parse_trace("id,lower,upper\n").error.find("line 1: expected the header") == 0);
  CHECK(ctfx::parse_trace("id,lower,upper,size\n0,0,2,16\n1,1,x,8\n").error == "line 3: field 'upper' is not an integer: 'x'");
  CHECK(ctfx::parse_trace("id,lower,upper,size\n0,3,2,16\n").error.find("line 2: lifetime [3, 2)") == 0);
  CHECK(ctfx::parse_trace("id,lower,upper,size\n0,1,2\n").error.find("line 2: expected 4 comma-separated") == 0);
}
