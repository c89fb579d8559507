// hoist_computed_indices (the pipeline's last pass): index tensors the graph computes after the first
// write into an input move ahead of it with what they depend on, every other order kept; graphs
// without such an index, or whose indices depend on that write, are returned as they are.
#include <doctest/doctest.h>
#include <ctfx.hpp>
#include <ctfx/exec/inplace_table.hpp>
#include <ctfx/passes/hoist_computed_indices.hpp>
#include <ctfx/passes/pipeline.hpp>
#include <string>

namespace {

std::string checked(const ctfx::ir& h) {
  CHECK(ctfx::to_string(ctfx::verify(h)) == "ok");
  return ctfx::to_text(h);
}

// x[0] = y[0] (reinplaced: the first write into an input), then y with j = i + 1 put into it.
constexpr auto after_write = ctfx::graph([](ctfx::builder& gb) {
  auto x = gb.input("x", ctfx::f32, {4});
  auto y = gb.input("y", ctfx::f32, {4});
  auto i = gb.input("i", ctfx::i64, {2});
  gb.update(x, ctfx::slice_scatter(x, y.slice(0, 0, 1), 0, 0, 1));
  auto j = i + 1;
  gb.output(ctfx::index_put(y, {j}, y.slice(0, 0, 2)));
});
using after_write_pipeline = ctfx::pipeline<decltype(after_write), ctfx::executor_inplace_table>;

constexpr std::int32_t position(const ctfx::ir& g, ctfx::op_kind k) {
  for (std::int32_t n = 0; n < g.size(); ++n)
    if (g[n].op == k) return n;
  return -1;
}
// In the compiler: the pipeline ends with the pass, the add now comes before the write into x.
static_assert(position(after_write_pipeline::dced::get(), ctfx::op_kind::add) >
              position(after_write_pipeline::dced::get(), ctfx::op_kind::copy_));
static_assert(position(after_write_pipeline::get(), ctfx::op_kind::add) <
              position(after_write_pipeline::get(), ctfx::op_kind::copy_));

}  // namespace

TEST_CASE("hoist: indices computed after the first write into an input move ahead of it") {
  const ctfx::ir before = after_write_pipeline::dced::get();
  CHECK(checked(before) == R"(graph(%x : f32[4], %y : f32[4], %i : i64[2]):
  %slice : f32[1] = slice(%y, dim=0, start=0, end=1)
  %slice_2 : f32[1] = slice(%x, dim=0, start=0, end=1)
  %copy_ : f32[1] = copy_(%slice_2, %slice)
  %add : i64[2] = add(%i, 1)
  %slice_1 : f32[2] = slice(%y, dim=0, start=0, end=2)
  %index_put : f32[4] = index_put(%y, [%add], %slice_1)
  return (%index_put,)
)");
  // Only the add moves: the write into x keeps its place relative to everything else.
  CHECK(checked(ctfx::hoist_computed_indices(before)) == R"(graph(%x : f32[4], %y : f32[4], %i : i64[2]):
  %slice : f32[1] = slice(%y, dim=0, start=0, end=1)
  %slice_2 : f32[1] = slice(%x, dim=0, start=0, end=1)
  %add : i64[2] = add(%i, 1)
  %copy_ : f32[1] = copy_(%slice_2, %slice)
  %slice_1 : f32[2] = slice(%y, dim=0, start=0, end=2)
  %index_put : f32[4] = index_put(%y, [%add], %slice_1)
  return (%index_put,)
)");
  CHECK(ctfx::to_text(after_write_pipeline::get()) == ctfx::to_text(ctfx::hoist_computed_indices(before)));
  CHECK(ctfx::to_text(ctfx::run_pipeline<ctfx::executor_inplace_table>(after_write.get())) == ctfx::to_text(after_write_pipeline::get()));
}

TEST_CASE("hoist: graphs whose indices need no move, or cannot move, are returned as they are") {
  // The put is itself the first write (x[i - 3] = v): its indices are checked at its own step.
  auto put_first = ctfx::run_pipeline<ctfx::executor_inplace_table>(ctfx::build_checked([](ctfx::builder& gb) {
    auto x = gb.input("x", ctfx::f32, {10});
    auto i = gb.input("i", ctfx::i64, {2});
    auto v = gb.input("v", ctfx::f32, {2});
    gb.update(x, ctfx::index_put(x, {i - 3}, v));
  }));
  // No index at all.
  auto no_index = ctfx::run_pipeline<ctfx::executor_inplace_table>(ctfx::build_checked([](ctfx::builder& gb) {
    auto x = gb.input("x", ctfx::f32, {4});
    gb.update(x, ctfx::slice_scatter(x, x.slice(0, 2, 3) + 1.0f, 0, 0, 1));
    gb.output(x * 2.0f);
  }));
  // p[0] = p[1] + 1 in place, then y[p]: the indices are what the write wrote.
  auto depends = ctfx::run_pipeline<ctfx::executor_inplace_table>(ctfx::build_checked([](ctfx::builder& gb) {
    auto y = gb.input("y", ctfx::f32, {4});
    auto p = gb.input("p", ctfx::i64, {2});
    auto np = ctfx::slice_scatter(p, p.slice(0, 1, 2) + 1, 0, 0, 1);
    gb.update(p, np);
    gb.output(ctfx::index(y, {np}));
  }));
  for (const ctfx::ir* g : {&put_first, &no_index, &depends}) {
    REQUIRE(g->error.ok());
    CHECK(checked(ctfx::hoist_computed_indices(*g)) == ctfx::to_text(*g));
  }
  CHECK(position(depends, ctfx::op_kind::copy_) < position(depends, ctfx::op_kind::index));
}
