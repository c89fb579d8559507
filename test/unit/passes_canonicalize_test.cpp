// canonicalize_view_scatter_ops (A.5): view scatters become _generalized_scatter, nested scatters
// fuse as the seed does (the docstring example), and the cases that must not fuse.
#include <doctest/doctest.h>
#include <ctfx.hpp>
#include <ctfx/passes/canonicalize_view_scatter_ops.hpp>
#include <string>

namespace {

std::string after(const ctfx::ir& g) {
  ctfx::ir h = ctfx::canonicalize_view_scatter_ops(g);
  CHECK(ctfx::to_string(ctfx::verify(h)) == "ok");
  return ctfx::to_text(h);
}

// The view↔scatter table is the type table of ops/scatters.hpp.
static_assert(ctfx::ops::slice_scatter_t::view::kind == ctfx::op_kind::slice);
static_assert(ctfx::detail::view_of_scatter(ctfx::op_kind::diagonal_scatter) == ctfx::op_kind::diagonal);
static_assert(ctfx::detail::view_of_scatter(ctfx::op_kind::as_strided_scatter) == ctfx::op_kind::as_strided);

TEST_CASE("canonicalize: each view scatter becomes one generalized scatter") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4, 4});
    auto r = b.input("r", ctfx::f32, {4});
    auto a = ctfx::select_scatter(x, r, 0, 1);
    auto c = ctfx::diagonal_scatter(a, r);
    auto d = ctfx::as_strided_scatter(c, r, {4}, {1}, 4);
    b.output(ctfx::slice_scatter(d, x.slice(1, 0, 2), 1, 2, 4));
  });
  CHECK(after(g) == R"(graph(%x : f32[4, 4], %r : f32[4]):
  %generalized_scatter : f32[4, 4] = _generalized_scatter(%x, %r, [select(dim=0, index=1)])
  %generalized_scatter_1 : f32[4, 4] = _generalized_scatter(%generalized_scatter, %r, [diagonal(offset=0, dim1=0, dim2=1)])
  %generalized_scatter_2 : f32[4, 4] = _generalized_scatter(%generalized_scatter_1, %r, [as_strided(size=[4], stride=[1], storage_offset=4)])
  %slice : f32[4, 2] = slice(%x, dim=1, start=0, end=2)
  %generalized_scatter_3 : f32[4, 4] = _generalized_scatter(%generalized_scatter_2, %slice, [slice(dim=1, start=2, end=4)])
  return (%generalized_scatter_3,)
)");
}

// A.5's docstring: a = scatter(view2(self), src, [view1]); b = scatter(self, a, [view2])
//               -> b = scatter(self, src, [view2, view1]); a = view2(b)
constexpr auto docstring = ctfx::graph([](ctfx::builder& g) {
  auto self = g.input("self", ctfx::f32, {4, 8});
  auto src = g.input("src", ctfx::f32, {2, 4});
  auto a = ctfx::slice_scatter(self.slice(0, 0, 2), src, 1, 0, 4).named("a");
  auto b = ctfx::slice_scatter(self, a, 0, 0, 2).named("b");
  auto a1 = a + 1;
  g.output(b, a1);
});

TEST_CASE("canonicalize: the docstring example fuses and re-creates the inner view of the result") {
  CHECK(ctfx::to_text(docstring.get()) == R"(graph(%self : f32[4, 8], %src : f32[2, 4]):
  %slice : f32[2, 8] = slice(%self, dim=0, start=0, end=2)
  %a : f32[2, 8] = slice_scatter(%slice, %src, dim=1, start=0, end=4)
  %b : f32[4, 8] = slice_scatter(%self, %a, dim=0, start=0, end=2)
  %add : f32[2, 8] = add(%a, 1)
  return (%b, %add)
)");
  CHECK(after(docstring.get()) == R"(graph(%self : f32[4, 8], %src : f32[2, 4]):
  %slice : f32[2, 8] = slice(%self, dim=0, start=0, end=2)
  %generalized_scatter : f32[4, 8] = _generalized_scatter(%self, %src, [slice(dim=0, start=0, end=2), slice(dim=1, start=0, end=4)])
  %slice_1 : f32[2, 8] = slice(%generalized_scatter, dim=0, start=0, end=2)
  %add : f32[2, 8] = add(%slice_1, 1)
  return (%generalized_scatter, %add)
)");
}

TEST_CASE("canonicalize: an inner scatter without other users is simply absorbed, chains nest") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4, 8, 8});
    auto v = b.input("v", ctfx::f32, {3});
    auto x0 = x.select(0, 1);
    auto x01 = x0.slice(0, 2, 4);
    auto x012 = x01.select(0, 1);
    auto i = ctfx::slice_scatter(x012, v, 0, 0, 3);  // innermost
    auto m = ctfx::select_scatter(x01, i, 0, 1);
    auto o = ctfx::slice_scatter(x0, m, 0, 2, 4);
    b.output(ctfx::select_scatter(x, o, 0, 1));
  });
  // Four scatters, one G; the views stay for dce.
  CHECK(after(g) == R"(graph(%x : f32[4, 8, 8], %v : f32[3]):
  %select : f32[8, 8] = select(%x, dim=0, index=1)
  %slice : f32[2, 8] = slice(%select, dim=0, start=2, end=4)
  %select_1 : f32[8] = select(%slice, dim=0, index=1)
  %generalized_scatter : f32[4, 8, 8] = _generalized_scatter(%x, %v, [select(dim=0, index=1), slice(dim=0, start=2, end=4), select(dim=0, index=1), slice(dim=0, start=0, end=3)])
  return (%generalized_scatter,)
)");
}

TEST_CASE("canonicalize: not fusable — another base, another view, or the inner view missing") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4, 8});
    auto y = b.input("y", ctfx::f32, {4, 8});
    auto s = b.input("s", ctfx::f32, {2, 4});
    auto a = ctfx::slice_scatter(y.slice(0, 0, 2), s, 1, 0, 4);   // view of y, scattered into x
    auto b1 = ctfx::slice_scatter(x, a, 0, 0, 2);
    auto c = ctfx::slice_scatter(x.slice(0, 1, 3), s, 1, 0, 4);   // rows 1:3, scattered into rows 2:4
    auto d = ctfx::slice_scatter(x, c, 0, 2, 4);
    auto e = ctfx::slice_scatter(x, ctfx::exp(x.slice(0, 0, 2)), 0, 0, 2);  // source is no scatter
    b.output(b1, d, e);
  });
  CHECK(after(g) == R"(graph(%x : f32[4, 8], %y : f32[4, 8], %s : f32[2, 4]):
  %slice : f32[2, 8] = slice(%y, dim=0, start=0, end=2)
  %generalized_scatter : f32[2, 8] = _generalized_scatter(%slice, %s, [slice(dim=1, start=0, end=4)])
  %generalized_scatter_1 : f32[4, 8] = _generalized_scatter(%x, %generalized_scatter, [slice(dim=0, start=0, end=2)])
  %slice_1 : f32[2, 8] = slice(%x, dim=0, start=1, end=3)
  %generalized_scatter_2 : f32[2, 8] = _generalized_scatter(%slice_1, %s, [slice(dim=1, start=0, end=4)])
  %generalized_scatter_3 : f32[4, 8] = _generalized_scatter(%x, %generalized_scatter_2, [slice(dim=0, start=2, end=4)])
  %slice_2 : f32[2, 8] = slice(%x, dim=0, start=0, end=2)
  %exp : f32[2, 8] = exp(%slice_2)
  %generalized_scatter_4 : f32[4, 8] = _generalized_scatter(%x, %exp, [slice(dim=0, start=0, end=2)])
  return (%generalized_scatter_1, %generalized_scatter_3, %generalized_scatter_4)
)");
}

TEST_CASE("canonicalize: no fusion that would make two outputs alias") {
  // Returning both a and b: a = view2(b) would alias two outputs that were distinct.
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto self = b.input("self", ctfx::f32, {4, 8});
    auto src = b.input("src", ctfx::f32, {2, 4});
    auto a = ctfx::slice_scatter(self.slice(0, 0, 2), src, 1, 0, 4).named("a");
    auto bb = ctfx::slice_scatter(self, a, 0, 0, 2).named("b");
    b.output(bb, a);
  });
  CHECK(after(g) == R"(graph(%self : f32[4, 8], %src : f32[2, 4]):
  %slice : f32[2, 8] = slice(%self, dim=0, start=0, end=2)
  %generalized_scatter : f32[2, 8] = _generalized_scatter(%slice, %src, [slice(dim=1, start=0, end=4)])
  %generalized_scatter_1 : f32[4, 8] = _generalized_scatter(%self, %generalized_scatter, [slice(dim=0, start=0, end=2)])
  return (%generalized_scatter_1, %generalized_scatter)
)");
}

TEST_CASE("canonicalize: no re-created view whose layout differs from the inner result") {
  // The inner result is a fresh [4, 2] tensor (strides [2, 1]); the view of the update would be a
  // column slice of a [4, 8] tensor (strides [8, 1]): its user `view` needs the fresh layout.
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto self = b.input("self", ctfx::f32, {4, 8});
    auto src = b.input("src", ctfx::f32, {2, 2});
    auto a = ctfx::slice_scatter(self.slice(1, 0, 2), src, 0, 0, 2).named("a");
    auto bb = ctfx::slice_scatter(self, a, 1, 0, 2).named("b");
    auto flat = a.view({8});
    b.output(bb, flat);
  });
  CHECK(after(g) == R"(graph(%self : f32[4, 8], %src : f32[2, 2]):
  %slice : f32[4, 2] = slice(%self, dim=1, start=0, end=2)
  %generalized_scatter : f32[4, 2] = _generalized_scatter(%slice, %src, [slice(dim=0, start=0, end=2)])
  %generalized_scatter_1 : f32[4, 8] = _generalized_scatter(%self, %generalized_scatter, [slice(dim=1, start=0, end=2)])
  %view : f32[8] = view(%generalized_scatter, size=[8])
  return (%generalized_scatter_1, %view)
)");
}

// At compile time, as a stage.
using canon = ctfx::stage<decltype(docstring), &ctfx::canonicalize_view_scatter_ops>;
static_assert(ctfx::verify(canon::get()).ok());
static_assert(canon::get()[3].op == ctfx::op_kind::generalized_scatter);
static_assert(canon::get()[3].origin == docstring.get().find("b"));  // provenance: the outer scatter

}  // namespace
