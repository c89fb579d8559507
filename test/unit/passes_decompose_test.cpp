// decompose_generalized_scatter (A.8) and dce: the functional form (nested view scatters), the
// mutating form (clone, views, copy_) for as_strided/diagonal and for the in-place G_, on printed
// graphs; and the passes chained as compile-time stages.
#include <doctest/doctest.h>
#include <ctfx.hpp>
#include <ctfx/passes/canonicalize_view_scatter_ops.hpp>
#include <ctfx/passes/dce.hpp>
#include <ctfx/passes/decompose_generalized_scatter.hpp>
#include <ctfx/passes/remove_noop_ops.hpp>
#include <string>

namespace {

std::string checked(const ctfx::ir& h) {
  CHECK(ctfx::to_string(ctfx::verify(h)) == "ok");
  return ctfx::to_text(h);
}

constexpr auto nested = ctfx::graph([](ctfx::builder& g) {
  auto self = g.input("self", ctfx::f32, {4, 8});
  auto src = g.input("src", ctfx::f32, {2, 4});
  auto a = ctfx::slice_scatter(self.slice(0, 0, 2), src, 1, 0, 4);
  g.output(ctfx::slice_scatter(self, a, 0, 0, 2));
});

TEST_CASE("decompose: a functional G becomes nested view scatters") {
  ctfx::ir d = ctfx::decompose_generalized_scatter(ctfx::canonicalize_view_scatter_ops(nested.get()));
  CHECK(d.phase == ctfx::graph_phase::functional);
  // The seed's docstring: view = slice(inp); view_updated = slice_scatter(view, src);
  // inp_updated = slice_scatter(inp, view_updated). The old view (%slice) is dead: dce drops it.
  CHECK(checked(d) == R"(graph(%self : f32[4, 8], %src : f32[2, 4]):
  %slice : f32[2, 8] = slice(%self, dim=0, start=0, end=2)
  %slice_1 : f32[2, 8] = slice(%self, dim=0, start=0, end=2)
  %slice_scatter : f32[2, 8] = slice_scatter(%slice_1, %src, dim=1, start=0, end=4)
  %slice_scatter_1 : f32[4, 8] = slice_scatter(%self, %slice_scatter, dim=0, start=0, end=2)
  return (%slice_scatter_1,)
)");
  CHECK(checked(ctfx::dce(d)) == R"(graph(%self : f32[4, 8], %src : f32[2, 4]):
  %slice_1 : f32[2, 8] = slice(%self, dim=0, start=0, end=2)
  %slice_scatter : f32[2, 8] = slice_scatter(%slice_1, %src, dim=1, start=0, end=4)
  %slice_scatter_1 : f32[4, 8] = slice_scatter(%self, %slice_scatter, dim=0, start=0, end=2)
  return (%slice_scatter_1,)
)");
}

TEST_CASE("decompose: diagonal and as_strided always decompose with mutation") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4, 4});
    auto r = b.input("r", ctfx::f32, {4});
    auto r2 = b.input("r2", ctfx::f32, {2});
    auto d = ctfx::diagonal_scatter(x, r);
    b.output(ctfx::as_strided_scatter(d, r2, {2}, {2}, 1));
  });
  ctfx::ir d = ctfx::decompose_generalized_scatter(ctfx::canonicalize_view_scatter_ops(g));
  CHECK(d.phase == ctfx::graph_phase::reinplaced);  // copy_ into a clone: the verifier accepts it now
  CHECK(checked(d) == R"(graph(%x : f32[4, 4], %r : f32[4], %r2 : f32[2]):
  %clone : f32[4, 4] = clone(%x)
  %diagonal : f32[4] = diagonal(%clone, offset=0, dim1=0, dim2=1)
  %copy_ : f32[4] = copy_(%diagonal, %r)
  %clone_1 : f32[4, 4] = clone(%clone)
  %as_strided : f32[2] = as_strided(%clone_1, size=[2], stride=[2], storage_offset=1)
  %copy__1 : f32[2] = copy_(%as_strided, %r2)
  return (%clone_1,)
)");
}

TEST_CASE("decompose: the in-place G_ writes its input through the view chain") {
  // What reinplacing leaves: G_ on a graph input whose copy-back it made redundant.
  ctfx::ir g = ctfx::canonicalize_view_scatter_ops(nested.get());
  std::int32_t G = g.find("generalized_scatter");
  REQUIRE(G >= 0);
  g[G].op = ctfx::op_kind::generalized_scatter_;
  g.phase = ctfx::graph_phase::reinplaced;
  ctfx::infer_meta(g, G);
  g.nodes.back().meta = {};
  ctfx::infer_meta(g, g.size() - 1);
  CHECK(checked(ctfx::decompose_generalized_scatter(g)) == R"(graph(%self : f32[4, 8], %src : f32[2, 4]):
  %slice : f32[2, 8] = slice(%self, dim=0, start=0, end=2)
  %slice_1 : f32[2, 8] = slice(%self, dim=0, start=0, end=2)
  %slice_2 : f32[2, 4] = slice(%slice_1, dim=1, start=0, end=4)
  %copy_ : f32[2, 4] = copy_(%slice_2, %src)
  return (%self,)
)");
}

TEST_CASE("dce: drops what nobody reads, keeps inputs, outputs and writes") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4});
    auto unused = b.input("unused", ctfx::f32, {4});
    auto dead = ctfx::exp(x).slice(0, 0, 2);
    (void)dead;
    (void)unused;
    auto y = x + 1;
    b.update(x, y * 2);
    b.output(y);
  });
  CHECK(checked(ctfx::dce(g)) == R"(graph(%x : f32[4], %unused : f32[4]):
  %add : f32[4] = add(%x, 1)
  %mul : f32[4] = mul(%add, 2)
  %copy_ : f32[4] = copy_(%x, %mul)
  return (%add,)
)");
}

// The passes as compile-time stages; each output verifies.
using s1 = ctfx::stage<decltype(nested), &ctfx::remove_noop_ops>;
using s2 = ctfx::stage<s1, &ctfx::canonicalize_view_scatter_ops>;
using s3 = ctfx::stage<s2, &ctfx::decompose_generalized_scatter>;
using s4 = ctfx::stage<s3, &ctfx::dce>;
static_assert(ctfx::verify(s2::get()).ok() && ctfx::verify(s3::get()).ok() && ctfx::verify(s4::get()).ok());
static_assert(s2::get()[3].op == ctfx::op_kind::generalized_scatter);
static_assert(s4::get().size() == 6);  // self, src, slice, slice_scatter x2, output

}  // namespace
