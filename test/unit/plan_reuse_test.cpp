// Lifetimes, the reuse rule and Inductor-style reuse lines (plan/reuse.hpp, plan/listing.hpp).
#include <doctest/doctest.h>
#include <ctfx.hpp>
#include <ctfx/plan/listing.hpp>
#include <ctfx/plan/reuse.hpp>

namespace {

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

constexpr ctfx::liveness chain_life() { return ctfx::compute_liveness(chain.get()); }

// Each pointwise op may write into the input that dies at the same step; outputs live to the end.
static_assert(ctfx::plan_reuse(chain_life()).reuses == 4);
static_assert(ctfx::plan_reuse(chain_life()).peak_static_bytes == 128 + 32);

}  // namespace

TEST_CASE("lifetimes are half-open half-step intervals, and pointwise outputs start after their inputs are read") {
  auto g = chain.get();
  auto L = ctfx::compute_liveness(g);
  REQUIRE(L.n_steps() == 6);
  REQUIRE(L.buffers.size() == 6);
  auto life = [&](std::string_view n) {
    auto s = g[g.find(n)].meta.storage;
    return L.buffers[static_cast<std::size_t>(L.buffer_of[static_cast<std::size_t>(s)])];
  };
  CHECK(life("a").begin == 1);  // step 0, pointwise over contiguous inputs: from 2*0+1
  CHECK(life("a").end == 3);    // last read by step 1: until 2*1+1
  CHECK(life("d").begin == 6);  // a reduction may not take its input's memory: from 2*3
  CHECK(life("d").is_output);
  CHECK(life("d").end == 13);   // outputs live to the end (2*6+1)
  CHECK(life("a").bytes == ctfx::sym_expr(128));
}

namespace {
// q = a / s reads a at the index it writes and s broadcast; f = t + t^T reads t at the index and
// transposed.
constexpr auto per_input = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {8, 8});
  auto a = ctfx::exp(x).named("a");
  auto s = a.sum({1}, true).named("s");
  auto t = (x * 2.0).named("t");
  auto q = (a / s).named("q");
  auto f = (t + t.transpose(0, 1)).named("f");
  g.output(q, f);
});
}  // namespace

TEST_CASE("the in-place rule is per input: an input read elsewhere than the written index stays live through the step") {
  const auto g = per_input.get();
  const auto L = ctfx::compute_liveness(g);
  auto life = [&](std::string_view n) {
    auto s = g[g.find(n)].meta.storage;
    return L.buffers[static_cast<std::size_t>(L.buffer_of[static_cast<std::size_t>(s)])];
  };
  REQUIRE(L.n_steps() == 5);
  CHECK(life("q").begin == 7);  // step 3 reads a at the index it writes: from 2*3+1
  CHECK(life("a").end == 7);    // a dies there: q may take its memory
  CHECK(life("s").end == 8);    // s is read broadcast: live through step 3
  CHECK(life("f").begin == 9);  // step 4 reads t at the index it writes...
  CHECK(life("t").end == 10);   // ... and transposed: t stays live through it
  const auto R = ctfx::plan_reuse(L);
  const std::string text = ctfx::listing(g, L, R);
  CHECK(text.find("buf3 = buf0; del buf0  # reuse, %q") != std::string::npos);
  CHECK(text.find("# reuse, %f") == std::string::npos);  // f + t^T would overwrite t's elements not yet read
  CHECK(R.reuses == 1);
}

TEST_CASE("reuse lines: allocate, reuse of the most recently freed buffer with the same key, free") {
  auto g = chain.get();
  auto L = ctfx::compute_liveness(g);
  auto R = ctfx::plan_reuse(L);
  CHECK(ctfx::listing(g, L, R) ==
        "def call(x):\n"
        "    buf0 = empty_strided((4, 8), (8, 1), f32)  # %a\n"
        "    %a : f32[4, 8] = add(%x, 1.0)  # step 0\n"
        "    buf1 = buf0; del buf0  # reuse, %b\n"
        "    %b : f32[4, 8] = mul(%a, 2.0)  # step 1\n"
        "    buf2 = buf1; del buf1  # reuse, %c\n"
        "    %c : f32[4, 8] = sub(%b, 3.0)  # step 2\n"
        "    buf3 = empty_strided((8,), (1,), f32)  # %d\n"
        "    %d : f32[8] = sum(%c, [0])  # step 3\n"
        "    buf4 = buf2; del buf2  # reuse, %e\n"
        "    %e : f32[4, 8] = mul(%x, 4.0)  # step 4\n"
        "    buf5 = buf4; del buf4  # reuse, %f\n"
        "    %f : f32[4, 8] = add(%e, 1.0)  # step 5\n"
        "    return (%d, %f)\n"
        "# peak 160 B of static-size buffers; 4 reuses, 0 vetoed\n");
}

TEST_CASE("a reuse that would raise the peak is vetoed") {
  constexpr auto gd = ctfx::graph([](ctfx::builder& g) {
    auto x = g.input("x", ctfx::f32, {4, 8});
    auto y = g.input("y", ctfx::f32, {64, 8});
    auto a = (x * 2.0).named("a");  // 128 B, dies early
    auto s = a.sum().named("s");
    auto c = (y * 2.0).named("c");  // 2048 B: the peak is here
    auto t = c.sum().named("t");
    auto e = (x * 3.0).named("e");  // 128 B again: taking a's memory would hold it across c
    g.output(s, t, e);
  });
  auto g = gd.get();
  auto L = ctfx::compute_liveness(g);
  auto R = ctfx::plan_reuse(L);
  CHECK(R.vetoed == 1);
  CHECK(R.peak_static_bytes == 2048 + 4 + 4);
}

TEST_CASE("an in-place op is a rename: it extends the buffer it writes, and allocates nothing") {
  // Built at run time, then switched to the reinplaced phase by hand: c = index_put_(a, ...).
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {8});
    auto i = b.input("i", ctfx::i64, {2});
    auto v = b.input("v", ctfx::f32, {2});
    auto a = (x + 1.0).named("a");
    auto c = ctfx::index_put(a, {i}, v).named("c");
    b.output((c * 2.0).named("d"));
  });
  g[g.find("c")].op = ctfx::op_kind::index_put_;
  g.phase = ctfx::graph_phase::reinplaced;
  g[g.find("c")].meta.storage = g[g.find("a")].meta.storage;
  REQUIRE(ctfx::verify(g).ok());
  auto L = ctfx::compute_liveness(g);
  CHECK(L.buffers.size() == 2);  // a (renamed to c) and d
  auto& a = L.buffers[static_cast<std::size_t>(L.buffer_of[static_cast<std::size_t>(g[g.find("a")].meta.storage)])];
  CHECK(a.last_step == 2);  // read through its new name c by step 2
}

TEST_CASE("symbolic sizes: byte counts are expressions, and reuse needs the same expression") {
  constexpr auto gd = ctfx::graph([](ctfx::builder& g) {
    auto s0 = g.sym("s0");
    auto s1 = g.sym("s1");
    auto x = g.input("x", ctfx::f32, {s0, 8});
    auto y = g.input("y", ctfx::f32, {s1, 8});
    auto a = (x * 2.0).named("a");
    auto sa = a.sum().named("sa");
    auto b = (y * 2.0).named("b");  // same size hint maybe, but s1 is not s0: no reuse of a
    g.output(sa, b);
  });
  auto g = gd.get();
  auto L = ctfx::compute_liveness(g);
  auto R = ctfx::plan_reuse(L);
  CHECK(ctfx::to_string(g, L.buffers[0].bytes) == "32*s0");
  CHECK(R.reuses == 0);
}

TEST_CASE("partitions keep reuse inside a partition and return what a later partition reads (pytorch#165514)") {
  constexpr auto gd = ctfx::graph([](ctfx::builder& g) {
    auto x = g.input("x", ctfx::f32, {4, 8});
    auto a = (x + 1.0).named("a");
    auto b = (a * 2.0).named("b");   // reuses a inside partition 0
    auto c = (b + 1.0).named("c");   // read by partition 1: an output of partition 0
    g.partition_boundary();
    auto d = (c * 3.0).named("d");   // may not take c's memory: c is partition 1's input
    auto e = (d - 1.0).named("e");   // reuses d inside partition 1
    g.output(e);
  });
  auto g = gd.get();
  auto L = ctfx::compute_liveness(g);
  auto R = ctfx::plan_reuse(L);
  CHECK(ctfx::listing(g, L, R) ==
        "def partition_0(x):\n"
        "    buf0 = empty_strided((4, 8), (8, 1), f32)  # %a\n"
        "    %a : f32[4, 8] = add(%x, 1.0)  # step 0\n"
        "    buf1 = buf0; del buf0  # reuse, %b\n"
        "    %b : f32[4, 8] = mul(%a, 2.0)  # step 1\n"
        "    buf2 = buf1; del buf1  # reuse, %c\n"
        "    %c : f32[4, 8] = add(%b, 1.0)  # step 2\n"
        "    return (buf2,)\n"
        "def partition_1(x, buf2):\n"
        "    buf3 = empty_strided((4, 8), (8, 1), f32)  # %d\n"
        "    %d : f32[4, 8] = mul(%c, 3.0)  # step 3\n"
        "    del buf2\n"
        "    buf4 = buf3; del buf3  # reuse, %e\n"
        "    %e : f32[4, 8] = sub(%d, 1.0)  # step 4\n"
        "    return (%e,)\n"
        "# peak 256 B of static-size buffers; 3 reuses, 0 vetoed\n");
}

TEST_CASE("the reuse key is dtype and bytes: a freed buffer of another dtype with the same bytes is not taken") {
  // s (i32[2, 8], 64 B) is free from step 2 on; u (f32[2, 8], also 64 B) is allocated at step 3.
  constexpr auto g = ctfx::graph([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {2, 8});
    auto a = x.to(ctfx::i32).named("a");
    auto s = (a + a).named("s");        // i32 from a, which dies here: reuses a
    auto r = s.sum({0}).named("r");     // last read of s
    auto u = (x * 3.0).named("u");      // f32, 64 B
    b.output(r, u);
  });
  auto ir = g.get();
  auto L = ctfx::compute_liveness(ir);
  auto R = ctfx::plan_reuse(L);
  auto buf = [&](std::string_view n) { return L.buffer_of[static_cast<std::size_t>(ir[ir.find(n)].meta.storage)]; };
  REQUIRE(L.buffers[static_cast<std::size_t>(buf("s"))].bytes == L.buffers[static_cast<std::size_t>(buf("u"))].bytes);
  CHECK(R.reuses == 1);
  for (const auto& l : R.lines) {  // the line that gives each its memory (s also has a free line)
    if (l.kind == ctfx::line_kind::free) continue;
    if (l.buffer == buf("s")) CHECK((l.kind == ctfx::line_kind::reuse && l.from == buf("a")));
    if (l.buffer == buf("u")) CHECK(l.kind == ctfx::line_kind::allocate);
  }
}
