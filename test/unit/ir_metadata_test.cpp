// Metadata rules (ops/*.hpp through ops/meta.hpp): every node's dtype, sizes, strides, storage
// offset and storage, checked against values computed by hand (as PyTorch's fake tensors give them).
//
// Each layout is computed in the compiler (`constexpr auto got = layout(...)`) and compared at run
// time, so that a mismatch prints both texts. The format is layout_string's:
// "f32[4, 3][8, 2]+1" = dtype, sizes, strides, then the storage offset when it is not 0.
#include <doctest/doctest.h>
#include "layout_text.hpp"
#include <ctfx.hpp>
#include <ctfx/passes/rewrite.hpp>
#include <string>
#include <string_view>

namespace {

using ctfx::builder;
using ctfx_test::layout;
using ctfx_test::str;
using ctfx::detail::msg;


// The message of the first broken rule ("ok" when the graph is valid).
template <class F>
constexpr msg error_of(F f) {
  ctfx::diagnostic d{};
  (void)ctfx::build_checked(f, &d);
  msg m;
  m << (d.ok() ? std::string_view("ok") : d.message());
  return m;
}

template <class F>
constexpr ctfx::tensor_meta meta_of(F f, std::string_view name) {
  ctfx::ir g = ctfx::build_checked(f);
  return g.meta(g.find(name));
}
template <class F>
constexpr bool same_storage(F f, std::string_view a, std::string_view b) {
  ctfx::ir g = ctfx::build_checked(f);
  return g.meta(g.find(a)).storage == g.meta(g.find(b)).storage;
}


#define CHECK_LAYOUT(F, NAME, EXPECT)              \
  do {                                             \
    constexpr auto got_ = layout(F, NAME);         \
    CHECK(str(got_) == std::string(EXPECT));       \
  } while (0)
#define CHECK_ERROR(F, EXPECT)                     \
  do {                                             \
    constexpr auto got_ = error_of(F);             \
    CHECK(str(got_) == std::string(EXPECT));       \
  } while (0)

}  // namespace

// ----- views -----

TEST_CASE("ir metadata: slice, with negative dims and bounds, steps and empty results") {
  constexpr auto f = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {4, 8});
    g.output(x.slice(1, 1, 7, 2).named("step2"), x.slice(-1, -3).named("neg"), x.slice(0, 1, -1).named("neg_end"),
             x.slice(1, 0, 8, 3).named("step3"), x.slice(0, 4).named("empty"),
             x.slice(1, 2).slice(1, 1, 5, 2).named("twice"), x.slice(0, 0, ctfx::end_of_dim).named("all"));
  };
  CHECK_LAYOUT(f, "x", "f32[4, 8][8, 1]");
  CHECK_LAYOUT(f, "step2", "f32[4, 3][8, 2]+1");     // columns 1, 3, 5
  CHECK_LAYOUT(f, "neg", "f32[4, 3][8, 1]+5");       // columns 5..7
  CHECK_LAYOUT(f, "neg_end", "f32[2, 8][8, 1]+8");   // rows 1..2
  CHECK_LAYOUT(f, "step3", "f32[4, 3][8, 3]");       // columns 0, 3, 6
  CHECK_LAYOUT(f, "empty", "f32[0, 8][8, 1]+32");
  CHECK_LAYOUT(f, "twice", "f32[4, 2][8, 2]+3");     // columns 3, 5 of x
  CHECK_LAYOUT(f, "all", "f32[4, 8][8, 1]");
}

TEST_CASE("ir metadata: select with negative dims and indices") {
  constexpr auto f = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {4, 8});
    auto t = g.input("t", ctfx::f32, {2, 3, 4});
    g.output(x.select(1, -1).named("last_col"), x.select(0, 2).named("row2"), t.select(1, 2).named("mid"),
             t.select(-1, 0).named("first"), x.slice(1, 2).select(0, 1).named("of_slice"));
  };
  CHECK_LAYOUT(f, "last_col", "f32[4][8]+7");
  CHECK_LAYOUT(f, "row2", "f32[8][1]+16");
  CHECK_LAYOUT(f, "mid", "f32[2, 4][12, 1]+8");
  CHECK_LAYOUT(f, "first", "f32[2, 3][12, 4]");
  CHECK_LAYOUT(f, "of_slice", "f32[6][1]+10");
}

TEST_CASE("ir metadata: diagonal with positive, negative and out-of-matrix offsets") {
  constexpr auto f = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {4, 8});
    auto t = g.input("t", ctfx::f32, {2, 3, 4});
    g.output(x.diagonal().named("main"), x.diagonal(1).named("above"), x.diagonal(5).named("short"),
             x.diagonal(-2).named("below"), x.diagonal(-5).named("none_left"), x.diagonal(0, 1, 0).named("swapped"),
             x.diagonal(2, 1, 0).named("swapped_off"), t.diagonal(0, 0, 2).named("outer"),
             t.diagonal(1, -1, 0).named("outer_off"));
  };
  CHECK_LAYOUT(f, "main", "f32[4][9]");
  CHECK_LAYOUT(f, "above", "f32[4][9]+1");
  CHECK_LAYOUT(f, "short", "f32[3][9]+5");          // x[0,5], x[1,6], x[2,7]
  CHECK_LAYOUT(f, "below", "f32[2][9]+16");         // x[2,0], x[3,1]
  CHECK_LAYOUT(f, "none_left", "f32[0][9]");        // empty: the offset is not moved
  CHECK_LAYOUT(f, "swapped", "f32[4][9]");
  CHECK_LAYOUT(f, "swapped_off", "f32[2][9]+16");   // rows = columns + 2: x[2,0], x[3,1]
  CHECK_LAYOUT(f, "outer", "f32[3, 2][4, 13]");     // the remaining dim first, the diagonal last
  CHECK_LAYOUT(f, "outer_off", "f32[3, 1][4, 13]+12");
}

TEST_CASE("ir metadata: as_strided takes an absolute storage offset") {
  constexpr auto f = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {4, 8});
    g.output(x.as_strided({2, 2}, {1, 8}, 3).named("a"), x.slice(0, 2).as_strided({4}, {9}, 0).named("b"),
             x.as_strided({3, 8}, {0, 1}).named("bcast"));
  };
  CHECK_LAYOUT(f, "a", "f32[2, 2][1, 8]+3");
  CHECK_LAYOUT(f, "b", "f32[4][9]");  // not +16: as_strided ignores its base's offset
  CHECK_LAYOUT(f, "bcast", "f32[3, 8][0, 1]");
  { constexpr auto f_ = [](builder& g) { g.output(g.input("x", ctfx::f32, {4, 8}).as_strided({2}, {1}, -1)); };
              CHECK_ERROR(f_, "node 'as_strided' (as_strided) at ir_metadata_test.cpp:119: as_strided reaches element 0 of a base whose last element is 31 [rule static-index-in-range]"); }
}

TEST_CASE("ir metadata: view keeps the offset and infers -1") {
  constexpr auto f = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {4, 8});
    g.output(x.view({2, -1}).named("infer"), x.slice(0, 1, 3).view({16}).named("of_rows"),
             x.view({4, 2, 4}).named("split"), x.slice(1, 0, 4).reshape({16}).named("reshaped"));
  };
  CHECK_LAYOUT(f, "infer", "f32[2, 16][16, 1]");
  CHECK_LAYOUT(f, "of_rows", "f32[16][1]+8");
  CHECK_LAYOUT(f, "split", "f32[4, 2, 4][8, 4, 1]");
  // reshape of a tensor that is not contiguous copies first (clone, then view of the copy).
  CHECK_LAYOUT(f, "reshaped", "f32[16][1]");
  CHECK_LAYOUT(f, "clone", "f32[4, 4][4, 1]");
  static_assert(!same_storage(f, "reshaped", "x"));
  static_assert(same_storage(f, "of_rows", "x"));
}

TEST_CASE("ir metadata: permute and transpose with negative dims") {
  constexpr auto f = [](builder& g) {
    auto t = g.input("t", ctfx::f32, {2, 3, 4});
    g.output(t.permute({2, 0, 1}).named("p"), t.permute({-1, -3, -2}).named("pneg"),
             t.transpose(-1, -2).named("tr"), t.slice(2, 1).transpose(0, 2).named("tr_off"));
  };
  CHECK_LAYOUT(f, "p", "f32[4, 2, 3][1, 12, 4]");
  CHECK_LAYOUT(f, "pneg", "f32[4, 2, 3][1, 12, 4]");
  CHECK_LAYOUT(f, "tr", "f32[2, 4, 3][12, 1, 4]");
  CHECK_LAYOUT(f, "tr_off", "f32[3, 3, 2][1, 4, 12]+1");
}

TEST_CASE("ir metadata: unsqueeze (also at the end) and squeeze (also of a non-1 dim)") {
  constexpr auto f = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {4, 8});
    g.output(x.unsqueeze(2).named("end"), x.unsqueeze(-1).named("end_neg"), x.unsqueeze(0).named("front"),
             x.unsqueeze(1).named("mid"), x.transpose(0, 1).unsqueeze(2).named("t_end"),
             x.slice(1, 0, 8, 2).unsqueeze(2).named("strided_end"), x.squeeze(0).named("sq_non1"),
             x.unsqueeze(1).squeeze(-2).named("sq"), x.unsqueeze(0).squeeze(0).named("sq_front"));
  };
  CHECK_LAYOUT(f, "end", "f32[4, 8, 1][8, 1, 1]");
  CHECK_LAYOUT(f, "end_neg", "f32[4, 8, 1][8, 1, 1]");
  CHECK_LAYOUT(f, "front", "f32[1, 4, 8][32, 8, 1]");
  CHECK_LAYOUT(f, "mid", "f32[4, 1, 8][8, 8, 1]");
  CHECK_LAYOUT(f, "t_end", "f32[8, 4, 1][1, 8, 1]");
  CHECK_LAYOUT(f, "strided_end", "f32[4, 4, 1][8, 2, 1]");
  CHECK_LAYOUT(f, "sq_non1", "f32[4, 8][8, 1]");  // PyTorch: squeezing a dim of size 4 changes nothing
  CHECK_LAYOUT(f, "sq", "f32[4, 8][8, 1]");
  CHECK_LAYOUT(f, "sq_front", "f32[4, 8][8, 1]");
}

TEST_CASE("ir metadata: expand gives stride 0 to new and broadcast dims") {
  constexpr auto f = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {4, 8});
    auto c = g.input("c", ctfx::f32, {4, 1});
    g.output(c.expand({2, 4, 3}).named("e"), c.expand({-1, 5}).named("keep"), x.expand({4, 8}).named("same"),
             x.expand({3, 4, -1}).named("lead"), c.slice(0, 1).expand({3, 6}).named("off"));
  };
  CHECK_LAYOUT(f, "e", "f32[2, 4, 3][0, 1, 0]");
  CHECK_LAYOUT(f, "keep", "f32[4, 5][1, 0]");
  CHECK_LAYOUT(f, "same", "f32[4, 8][8, 1]");
  CHECK_LAYOUT(f, "lead", "f32[3, 4, 8][0, 8, 1]");
  CHECK_LAYOUT(f, "off", "f32[3, 6][1, 0]+1");
}

TEST_CASE("ir metadata: storages — views share their base's, results get fresh ones") {
  constexpr auto f = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {4, 8});
    auto y = g.input("y", ctfx::f32, {4, 8});
    auto v = x.slice(0, 1).transpose(0, 1).unsqueeze(0).named("v");
    auto a = x.alias().named("a");
    auto c = x.clone().named("c");
    auto s = ctfx::slice_scatter(x, y.slice(0, 0, 1), 0, 0, 1).named("s");
    auto r = ctfx::foreach_add({x, y}, 1.0);
    g.update(x, s);
    g.output(v, a, c, s, x + y, r[0].named("r0"), r[1].named("r1"));
  };
  static_assert(!same_storage(f, "x", "y"));
  static_assert(same_storage(f, "v", "x"));
  static_assert(same_storage(f, "a", "x"));
  static_assert(same_storage(f, "slice_1", "y"));
  static_assert(!same_storage(f, "c", "x"));
  static_assert(!same_storage(f, "s", "x") && !same_storage(f, "s", "y"));
  static_assert(!same_storage(f, "add", "x") && !same_storage(f, "add", "y"));
  static_assert(!same_storage(f, "r0", "x") && !same_storage(f, "r0", "r1"));
  static_assert(same_storage(f, "copy_", "x"));  // the epilogue writes x itself
  static_assert(meta_of(f, "foreach_add").storage == -1);  // a tuple is no tensor
  static_assert(meta_of(f, "output").storage == -1);
  CHECK_LAYOUT(f, "a", "f32[4, 8][8, 1]");
  CHECK_LAYOUT(f, "v", "f32[1, 8, 3][8, 1, 8]+8");
  CHECK_LAYOUT(f, "r1", "f32[4, 8][8, 1]");
}

// ----- elementwise -----

TEST_CASE("ir metadata: broadcasting") {
  constexpr auto f = [](builder& g) {
    auto a = g.input("a", ctfx::f32, {4, 1});
    auto b = g.input("b", ctfx::f32, {3});
    auto c = g.input("c", ctfx::f32, {1, 8});
    auto s = g.input("s", ctfx::f32, {});
    auto t = g.input("t", ctfx::f32, {2, 1, 3});
    g.output((a + b).named("ab"), (c * a).named("ca"), (s - c).named("sc"), (a / t).named("at"),
             ctfx::maximum(b, s).named("bs"), (a + 1.0).named("scalar"), (b + b).named("same"));
  };
  CHECK_LAYOUT(f, "ab", "f32[4, 3][3, 1]");
  CHECK_LAYOUT(f, "ca", "f32[4, 8][8, 1]");
  CHECK_LAYOUT(f, "sc", "f32[1, 8][8, 1]");
  CHECK_LAYOUT(f, "at", "f32[2, 4, 3][12, 3, 1]");
  CHECK_LAYOUT(f, "bs", "f32[3][1]");
  CHECK_LAYOUT(f, "scalar", "f32[4, 1][1, 1]");
  CHECK_LAYOUT(f, "same", "f32[3][1]");
  CHECK_LAYOUT(f, "s", "f32[][]");
  CHECK_ERROR(
      [](builder& g) {
        auto a = g.input("a", ctfx::f32, {4, 2});
        g.output(a + g.input("b", ctfx::f32, {3, 1, 3}));
      },
      "node 'add' (add): operand shapes f32[4, 2] and f32[3, 1, 3] do not broadcast [rule broadcast-shapes]");
}

TEST_CASE("ir metadata: type promotion") {
  // promote(): bool < integers < floats; the wider type within a category; f16 with bf16 is f32.
  static_assert(ctfx::promote(ctfx::f16, ctfx::bf16) == ctfx::f32);
  static_assert(ctfx::promote(ctfx::bf16, ctfx::f16) == ctfx::f32);
  static_assert(ctfx::promote(ctfx::i32, ctfx::i64) == ctfx::i64);
  static_assert(ctfx::promote(ctfx::i64, ctfx::f16) == ctfx::f16);
  static_assert(ctfx::promote(ctfx::b8, ctfx::i8) == ctfx::i8);
  static_assert(ctfx::promote(ctfx::b8, ctfx::b8) == ctfx::b8);
  static_assert(ctfx::promote(ctfx::f64, ctfx::f32) == ctfx::f64);
  static_assert(ctfx::promote(ctfx::i8, ctfx::i32) == ctfx::i32);
  static_assert(ctfx::promote(ctfx::bf16, ctfx::f32) == ctfx::f32);

  constexpr auto f = [](builder& g) {
    auto h = g.input("h", ctfx::f16, {4});
    auto bh = g.input("bh", ctfx::bf16, {4});
    auto i = g.input("i", ctfx::i32, {4});
    auto l = g.input("l", ctfx::i64, {4});
    auto bo = g.input("bo", ctfx::b8, {4});
    g.output((h + bh).named("h_bh"), (i / i).named("i_div_i"), (l / 2).named("l_div_2"), (i * 2).named("i_mul_2"),
             (i + 1.5).named("i_add_f"), (h * 2.5).named("h_mul_f"), (i + l).named("i_l"), (l - h).named("l_h"),
             (bo + bo).named("b_b"), (bo * i).named("b_i"), (h / h).named("h_div_h"), i.to(ctfx::f64).named("conv"));
  };
  static_assert(meta_of(f, "h_bh").dt == ctfx::f32);
  static_assert(meta_of(f, "i_div_i").dt == ctfx::f32);  // true division of integers
  static_assert(meta_of(f, "l_div_2").dt == ctfx::f32);
  static_assert(meta_of(f, "i_mul_2").dt == ctfx::i32);  // an integer scalar does not widen
  static_assert(meta_of(f, "i_add_f").dt == ctfx::f32);  // a float scalar makes an integer tensor f32
  static_assert(meta_of(f, "h_mul_f").dt == ctfx::f16);  // ... but does not widen a float tensor
  static_assert(meta_of(f, "i_l").dt == ctfx::i64);
  static_assert(meta_of(f, "l_h").dt == ctfx::f16);
  static_assert(meta_of(f, "b_b").dt == ctfx::b8);
  static_assert(meta_of(f, "b_i").dt == ctfx::i32);
  static_assert(meta_of(f, "h_div_h").dt == ctfx::f16);
  CHECK_LAYOUT(f, "conv", "f64[4][1]");
  CHECK_LAYOUT(f, "h_bh", "f32[4][1]");
}

TEST_CASE("ir metadata: elementwise results are fresh and contiguous") {
  constexpr auto f = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {4, 8});
    g.output(ctfx::exp(x.slice(1, 1, 7, 2)).named("e"), (-x.select(1, 3)).named("n"));
  };
  CHECK_LAYOUT(f, "e", "f32[4, 3][3, 1]");
  CHECK_LAYOUT(f, "n", "f32[4][1]");
  static_assert(!same_storage(f, "e", "x"));
}

// ----- indexing -----

TEST_CASE("ir metadata: index_put's indexed shape, adjacent and non-adjacent advanced indices") {
  // Values that fit are accepted; values that do not fit are reported with the indexed shape, which
  // makes the rule's result visible.
  constexpr auto adjacent = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {4, 5, 6});
    auto i = g.input("i", ctfx::i64, {3});
    auto j = g.input("j", ctfx::i32, {3});
    g.output(ctfx::index_put(x, {ctfx::none, i, j}, g.input("v", ctfx::f32, {4, 3})).named("r"),
             ctfx::index_put(x, {ctfx::none, i, j}, g.input("w", ctfx::f32, {3})).named("bcast"));
  };
  CHECK_LAYOUT(adjacent, "r", "f32[4, 5, 6][30, 6, 1]");
  CHECK_LAYOUT(adjacent, "bcast", "f32[4, 5, 6][30, 6, 1]");
  static_assert(!same_storage(adjacent, "r", "x"));
  { constexpr auto f_ =
      [](builder& g) {
        auto x = g.input("x", ctfx::f32, {4, 5, 6});
        auto i = g.input("i", ctfx::i64, {3});
        g.output(ctfx::index_put(x, {ctfx::none, i, i}, g.input("v", ctfx::f32, {7})));
      };
      CHECK_ERROR(f_, "node 'index_put' (index_put) at ir_metadata_test.cpp:306: values f32[7] do not broadcast to the indexed shape f32[4, 3] [rule broadcast-shapes]"); }
  // Separated by a full slice: the broadcast index shape goes first.
  { constexpr auto f_ =
      [](builder& g) {
        auto x = g.input("x", ctfx::f32, {4, 5, 6});
        auto i = g.input("i", ctfx::i64, {3});
        g.output(ctfx::index_put(x, {i, ctfx::none, i}, g.input("v", ctfx::f32, {7})));
      };
      CHECK_ERROR(f_, "node 'index_put' (index_put) at ir_metadata_test.cpp:314: values f32[7] do not broadcast to the indexed shape f32[3, 5] [rule broadcast-shapes]"); }
  // Index shapes broadcast with each other: [2, 1] with [3] is [2, 3], in front of the rest.
  { constexpr auto f_ =
      [](builder& g) {
        auto x = g.input("x", ctfx::f32, {4, 5, 6});
        auto i = g.input("i", ctfx::i64, {2, 1});
        auto j = g.input("j", ctfx::i64, {3});
        g.output(ctfx::index_put(x, {i, j}, g.input("v", ctfx::f32, {7})));
      };
      CHECK_ERROR(f_, "node 'index_put' (index_put) at ir_metadata_test.cpp:323: values f32[7] do not broadcast to the indexed shape f32[2, 3, 6] [rule broadcast-shapes]"); }
  // A KV-cache position: one index in dimension 2.
  { constexpr auto f_ =
      [](builder& g) {
        auto c = g.input("cache", ctfx::f16, {2, 4, 16, 8});
        auto pos = g.input("pos", ctfx::i64, {1});
        g.output(ctfx::index_put(c, {ctfx::none, ctfx::none, pos}, g.input("k", ctfx::f16, {2, 4, 2, 8})));
      };
      CHECK_ERROR(f_, "node 'index_put' (index_put) at ir_metadata_test.cpp:331: values f16[2, 4, 2, 8] do not broadcast to the indexed shape f16[2, 4, 1, 8] [rule broadcast-shapes]"); }
  constexpr auto kv = [](builder& g) {
    auto c = g.input("cache", ctfx::f16, {2, 4, 16, 8});
    auto pos = g.input("pos", ctfx::i64, {1});
    g.update(c, ctfx::index_put(c, {ctfx::none, ctfx::none, pos}, g.input("k", ctfx::f16, {2, 4, 1, 8}), true));
  };
  CHECK_LAYOUT(kv, "index_put", "f16[2, 4, 16, 8][512, 128, 8, 1]");
  static_assert(meta_of(kv, "index_put").dt == ctfx::f16);
}

TEST_CASE("ir metadata: index_put with a bool mask selects a data-dependent count") {
  constexpr auto ok = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {4, 5, 6});
    auto m = g.input("m", ctfx::b8, {4, 5});
    g.output(ctfx::index_put(x, {m}, g.input("v", ctfx::f32, {1, 6})).named("r"),
             ctfx::index_put(x, {m}, g.input("w", ctfx::f32, {6})).named("r2"));
  };
  CHECK_LAYOUT(ok, "r", "f32[4, 5, 6][30, 6, 1]");
  CHECK_LAYOUT(ok, "r2", "f32[4, 5, 6][30, 6, 1]");
  { constexpr auto f_ =
      [](builder& g) {
        auto x = g.input("x", ctfx::f32, {4, 5, 6});
        auto m = g.input("m", ctfx::b8, {4, 5});
        g.output(ctfx::index_put(x, {m}, g.input("v", ctfx::f32, {3, 6})));
      };
      CHECK_ERROR(f_, "node 'index_put' (index_put) at ir_metadata_test.cpp:356: values f32[3, 6] do not broadcast to the indexed shape f32[-1, 6] [rule broadcast-shapes]"); }
  { constexpr auto f_ =
      [](builder& g) {
        auto x = g.input("x", ctfx::f32, {4, 5, 6});
        auto m = g.input("m", ctfx::b8, {4, 6});
        g.output(ctfx::index_put(x, {m}, g.input("v", ctfx::f32, {1})));
      };
      CHECK_ERROR(f_, "node 'index_put' (index_put) at ir_metadata_test.cpp:363: mask b8[4, 6] does not match the indexed dimensions of f32[4, 5, 6] [rule valid-argument]"); }
}

TEST_CASE("ir metadata: index_put keeps a permuted input's strides (a clone)") {
  constexpr auto f = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {4, 8});
    auto i = g.input("i", ctfx::i64, {2});
    g.output(ctfx::index_put(x.transpose(0, 1), {i}, g.input("v", ctfx::f32, {4})).named("r"));
  };
  CHECK_LAYOUT(f, "r", "f32[8, 4][1, 8]");
}

// ----- reductions and cat -----

TEST_CASE("ir metadata: sum and amax, with and without keepdim") {
  constexpr auto f = [](builder& g) {
    auto t = g.input("t", ctfx::f32, {2, 3, 4});
    auto i = g.input("i", ctfx::i32, {2, 3, 4});
    auto b = g.input("b", ctfx::b8, {5});
    g.output(t.sum({1}).named("s1"), t.sum({1}, true).named("s1k"), t.sum({-1, 0}).named("s_neg"),
             t.sum().named("all"), t.sum({}, true).named("all_k"), i.amax({0}, true).named("mx"),
             i.sum({2}).named("isum"), b.sum().named("bsum"), t.transpose(0, 2).sum({0}).named("of_t"));
  };
  CHECK_LAYOUT(f, "s1", "f32[2, 4][4, 1]");
  CHECK_LAYOUT(f, "s1k", "f32[2, 1, 4][4, 4, 1]");
  CHECK_LAYOUT(f, "s_neg", "f32[3][1]");
  CHECK_LAYOUT(f, "all", "f32[][]");
  CHECK_LAYOUT(f, "all_k", "f32[1, 1, 1][1, 1, 1]");
  CHECK_LAYOUT(f, "mx", "i32[1, 3, 4][12, 4, 1]");  // amax keeps the dtype
  CHECK_LAYOUT(f, "isum", "i64[2, 3][3, 1]");       // sum of integers (and bools) is i64
  CHECK_LAYOUT(f, "bsum", "i64[][]");
  CHECK_LAYOUT(f, "of_t", "f32[3, 2][2, 1]");
  { constexpr auto f_ = [](builder& g) { g.output(g.input("t", ctfx::f32, {2, 3}).sum({2})); };
              CHECK_ERROR(f_, "node 'sum' (sum) at ir_metadata_test.cpp:397: dimension 2 is out of range for a tensor of rank 2 [rule dimension-in-range]"); }
}

TEST_CASE("ir metadata: cat") {
  constexpr auto f = [](builder& g) {
    auto a = g.input("a", ctfx::f32, {2, 8});
    auto b = g.input("b", ctfx::f32, {3, 8});
    auto c = g.input("c", ctfx::f32, {2, 5});
    auto i = g.input("i", ctfx::i32, {2});
    auto h = g.input("h", ctfx::f32, {3});
    auto s = g.input("s", ctfx::f32, {g.sym("s0"), 8});
    g.output(ctfx::cat({a, b}).named("rows"), ctfx::cat({a, c, a}, -1).named("cols"), ctfx::cat({i, h}).named("mixed"),
             ctfx::cat({s, a}).named("sym"), ctfx::cat({a.transpose(0, 1), c.transpose(0, 1)}).named("of_t"));
  };
  CHECK_LAYOUT(f, "rows", "f32[5, 8][8, 1]");
  CHECK_LAYOUT(f, "cols", "f32[2, 21][21, 1]");
  CHECK_LAYOUT(f, "mixed", "f32[5][1]");  // promoted
  CHECK_LAYOUT(f, "sym", "f32[s0 + 2, 8][8, 1]");
  CHECK_LAYOUT(f, "of_t", "f32[13, 2][2, 1]");
}

// ----- clone -----

TEST_CASE("ir metadata: clone preserves dense permuted strides, keeps the stride order of a non-dense one and drops the offset") {
  constexpr auto f = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {4, 8});
    auto t = g.input("t", ctfx::f32, {2, 3, 4});
    auto c = g.input("c", ctfx::f32, {4, 1});
    g.output(x.transpose(0, 1).clone().named("tr"), t.permute({2, 0, 1}).clone().named("perm"),
             x.slice(1, 0, 4).clone().named("gappy"), c.expand({4, 3}).clone().named("expanded"),
             x.slice(0, 1, 3).clone().named("rows"), t.select(1, 1).transpose(0, 1).clone().named("sel_t"),
             x.clone().named("plain"));
  };
  CHECK_LAYOUT(f, "tr", "f32[8, 4][1, 8]");
  CHECK_LAYOUT(f, "perm", "f32[4, 2, 3][1, 12, 4]");
  CHECK_LAYOUT(f, "gappy", "f32[4, 4][4, 1]");      // not dense: dense in its stride order
  CHECK_LAYOUT(f, "expanded", "f32[4, 3][3, 1]");   // stride 0 orders nothing: row-major
  CHECK_LAYOUT(f, "rows", "f32[2, 8][8, 1]");       // contiguous with an offset: offset 0
  CHECK_LAYOUT(f, "sel_t", "f32[4, 2][1, 4]");      // [4, 2][1, 12]+4 has gaps: dense, dim 0 innermost
  CHECK_LAYOUT(f, "plain", "f32[4, 8][8, 1]");
  static_assert(!same_storage(f, "plain", "x"));
}

// ----- symbolic extents -----

TEST_CASE("ir metadata: symbolic extents") {
  constexpr auto f = [](builder& g) {
    auto s0 = g.sym("s0");
    auto s1 = g.sym("s1");
    auto u0 = g.unbacked("u0");
    auto a = g.input("a", ctfx::f32, {s0, 8});
    auto b = g.input("b", ctfx::f32, {8, s0});
    auto c = g.input("c", ctfx::f32, {s0, s1, 4});
    auto d = g.input("d", ctfx::f32, {s0, s1});
    g.output(a.slice(0, 1).named("a1"), b.slice(1, 2).named("b2"), a.select(0, 2).named("a_row"),
             b.select(1, 3).named("b_col"), a.view({s0 * 8}).named("flat"), g.zeros({u0, 4}).named("z"),
             (a + 1.0).named("a_add"), c.transpose(0, 2).named("c_t"), d.sum({1}, true).named("d_sum"),
             a.slice(0, 1, 3).named("a13"));
  };
  CHECK_LAYOUT(f, "a", "f32[s0, 8][8, 1]");
  CHECK_LAYOUT(f, "b", "f32[8, s0][s0, 1]");
  CHECK_LAYOUT(f, "c", "f32[s0, s1, 4][4*s1, 4, 1]");
  CHECK_LAYOUT(f, "d", "f32[s0, s1][s1, 1]");
  CHECK_LAYOUT(f, "a1", "f32[s0 - 1, 8][8, 1]+8");
  CHECK_LAYOUT(f, "b2", "f32[8, s0 - 2][s0, 1]+2");
  CHECK_LAYOUT(f, "a_row", "f32[8][1]+16");
  CHECK_LAYOUT(f, "b_col", "f32[8][s0]+3");
  CHECK_LAYOUT(f, "flat", "f32[8*s0][1]");
  CHECK_LAYOUT(f, "z", "f32[u0, 4][4, 1]");
  CHECK_LAYOUT(f, "a_add", "f32[s0, 8][8, 1]");
  CHECK_LAYOUT(f, "c_t", "f32[4, s1, s0][1, 4, 4*s1]");
  CHECK_LAYOUT(f, "d_sum", "f32[s0, 1][1, 1]");
  CHECK_LAYOUT(f, "a13", "f32[2, 8][8, 1]+8");  // an explicit end is checked at run time
  // numel of [s0, s1] is the product s0*s1 (symbols 0 and 1 in declaration order).
  static_assert(meta_of(f, "d").numel() == ctfx::sym_expr::symbol(0) * ctfx::sym_expr::symbol(1));
  static_assert(meta_of(f, "a").numel() == ctfx::sym_expr::symbol(0) * 8);
  static_assert(!meta_of(f, "a").is_static() && meta_of(f, "a_row").is_static());
}

TEST_CASE("ir metadata: symbols are bound to the first input dimension that carries them") {
  constexpr auto f = [](builder& g) {
    auto s0 = g.sym("s0");
    auto s1 = g.sym("s1");
    auto u0 = g.unbacked("u0");
    auto a = g.input("a", ctfx::f32, {4, s0});
    auto b = g.input("b", ctfx::f32, {s1, s0});
    g.output(a, b, g.zeros({u0}));
  };
  constexpr auto check = [](auto fn) {
    ctfx::ir g = ctfx::build_checked(fn);
    return g.syms.size() == 3 && g.syms[0].input == 0 && g.syms[0].dim == 1 && g.syms[1].input == 1 &&
           g.syms[1].dim == 0 && g.syms[2].kind == ctfx::symbol_kind::unbacked && g.syms[2].input == -1 &&
           g.syms[0].kind == ctfx::symbol_kind::backed;
  };
  static_assert(check(f));
}

// ops/meta.hpp's memoized path (CTFX_MEMO_META; on under g++ in the CMake build) answers from a
// scratch graph with storages renumbered: its answer must be the rule's on the graph itself, the
// storage mapped back (a view shares its base's, x + x and x + y differ only there), and a broken
// rule must come back unanswered so that the rule on the graph names the node.
namespace {
constexpr auto memo_graph = [](builder& g) {
  auto x = g.input("x", ctfx::f32, {8, 6});
  auto y = g.input("y", ctfx::f32, {8, 6});
  auto s = g.input("s", ctfx::f32, {1, 6});
  auto v = x.slice(0, 2, 5).transpose(0, 1);        // views: storage of x
  auto a = x + x;                                     // one storage read twice
  auto b = x + y;                                     // two storages
  auto c = ctfx::slice_scatter(a, s, 0, 3, 4);        // a fresh result
  auto d = ctfx::slice_scatter(b, s * 2.0, 0, 7, 8);  // its source made here
  auto e = v.clone().sum({0});
  g.output(v, c, d, e, y.select(1, -1).unsqueeze(0));
};
constexpr bool memo_agrees() {
  ctfx::ir g = ctfx::build_checked(memo_graph);
  int answered = 0;
  for (std::int32_t i = 0; i < g.size(); ++i) {
    ctfx::tensor_meta m{}, r{};
    const bool hit = ctfx::detail::memo_meta(g, i, m);
    if (!ctfx::detail::compute_meta_rule(g, i, r)) return false;
    if (!hit) continue;
    ++answered;
    if (!ctfx::detail::same_meta_and_storage(m, r)) return false;
  }
  return answered >= 10;
}
}  // namespace

TEST_CASE("ir metadata: the memoized rules answer as the rules, storages mapped back") {
  static_assert(memo_agrees());
  CHECK(memo_agrees());  // and at run time (no memo there: the same scratch-graph answers)
  // A broken rule is not answered from the memo: the graph's own rule names the node.
  constexpr auto bad = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {4, 4});
    g.output(ctfx::slice_scatter(x, g.input("s", ctfx::f32, {2, 4}), 0, 0, 1));
  };
  constexpr bool unanswered = [] {
    ctfx::ir g = ctfx::build_checked([](builder& b) {
      auto x = b.input("x", ctfx::f32, {4, 4});
      b.output(ctfx::slice_scatter(x, b.input("s", ctfx::f32, {2, 4}), 0, 0, 1));
    });
    ctfx::tensor_meta m{};
    return !ctfx::detail::memo_meta(g, 2, m);
  }();
  static_assert(unanswered);
  // Symbolic extents: a broken rule's message, made on the graph, names the symbols.
  constexpr auto bad_sym = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {g.sym("s0"), 4});
    g.output(x + g.input("y", ctfx::f32, {3, 5}));
  };
  constexpr auto sym_text = error_of(bad_sym);
  CHECK(std::string(sym_text.view()).find("s0") != std::string::npos);
  CHECK(std::string(sym_text.view()).find("do not broadcast") != std::string::npos);
  constexpr auto text = error_of(bad);
  CHECK(std::string(text.view()).find("slice_scatter") != std::string::npos);
  CHECK(std::string(text.view()).find("does not fit the view") != std::string::npos);
}

TEST_CASE("ir metadata: view of a non-contiguous tensor where its strides merge, as PyTorch's computeStride") {
  // attention's k^T [2, 3, 8, 7] (strides [168, 56, 1, 8]) viewed as [6, 8, 7]: dims 0 and 1 merge
  constexpr auto f = [](builder& g) {
    auto k = g.input("k", ctfx::f32, {2, 3, 7, 8});
    auto kt = k.permute({0, 1, 3, 2});
    g.output(kt.view({6, 8, 7}).named("batches"), kt.view({2, 3, 2, 4, 7}).named("split"), kt.view({1, 6, 1, 8, 7}).named("ones"),
             k.slice(2, 0, 7, 2).view({6, 4, 8}).named("strided"));
  };
  CHECK_LAYOUT(f, "batches", "f32[6, 8, 7][56, 1, 8]");
  CHECK_LAYOUT(f, "split", "f32[2, 3, 2, 4, 7][168, 56, 4, 1, 8]");
  CHECK_LAYOUT(f, "ones", "f32[1, 6, 1, 8, 7][336, 56, 8, 1, 8]");
  CHECK_LAYOUT(f, "strided", "f32[6, 4, 8][56, 16, 1]");
  static_assert(same_storage(f, "batches", "k"));
  // merging the transposed pair needs a copy
  constexpr auto bad = error_of([](builder& g) { g.output(g.input("k", ctfx::f32, {2, 7, 8}).transpose(1, 2).view({2, 56})); });
  CHECK(str(bad).find("view of a non-contiguous tensor f32[2, 8, 7] across dimensions its strides do not merge; use reshape, which copies [rule view-shape]") !=
        std::string::npos);
}
