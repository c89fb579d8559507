// The report's warnings (passes/report.hpp): a value nothing uses (dropped by dce without running)
// and a read of a graph input's old value after its update (which clones the whole input). Each is
// a counter for static_assert and a warning line in the report's text, from the compile-time
// pipeline, the compiled plan, reinplace_report_of and the run-time plan alike.
#include <doctest/doctest.h>
#include <string>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/passes/pipeline.hpp>

namespace {

// The update was forgotten: the index_put's value is used by nothing, and the write vanishes.
constexpr auto forgot_update = ctfx::graph([](ctfx::builder& g) {
  auto cache = g.input("cache", ctfx::f32, {4, 8});
  auto k = g.input("k", ctfx::f32, {1, 8});
  auto pos = g.input("pos", ctfx::i64, {1});
  auto next = ctfx::index_put(cache, {pos}, k);
  (void)next;
  g.output(k + 1.0);
});
using forgot_pipeline = ctfx::pipeline<decltype(forgot_update)>;
static_assert(forgot_pipeline::report.unused_values() == 1);
static_assert(forgot_pipeline::report.unused_listed[0].name.view() == "index_put");
static_assert(forgot_pipeline::report.unused_listed[0].op == ctfx::op_kind::index_put);
static_assert(forgot_pipeline::report.old_input_reads() == 0);
static_assert(forgot_pipeline::report.warnings() == 1);
static_assert(ctfx::compiled<decltype(forgot_update)>::report.unused_values() == 1);
static_assert(ctfx::reinplace_report_of<decltype(forgot_update)>().unused_values() == 1);

// x is updated, and then read: the read sees the old x, so the index_put cannot write x in place.
constexpr auto read_after_update = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {8});
  auto i = g.input("i", ctfx::i64, {2});
  auto v = g.input("v", ctfx::f32, {2});
  g.update(x, ctfx::index_put(x, {i}, v));
  g.output(x * 2.0);
});
using stale_plan = ctfx::compiled<decltype(read_after_update)>;
static_assert(stale_plan::report.old_input_reads() == 1);
static_assert(stale_plan::report.unused_values() == 0);
static_assert(!stale_plan::report.all_inplace());
static_assert(ctfx::pipeline<decltype(read_after_update)>::report.old_input_reads() == 1);

// Reading the new value instead: no warning, and the update runs in place.
constexpr auto read_new_value = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {8});
  auto i = g.input("i", ctfx::i64, {2});
  auto v = g.input("v", ctfx::f32, {2});
  auto y = ctfx::index_put(x, {i}, v);
  g.update(x, y);
  g.output(y * 2.0);
});
static_assert(ctfx::compiled<decltype(read_new_value)>::report.warnings() == 0);
static_assert(ctfx::compiled<decltype(read_new_value)>::report.all_inplace());

// A view feeding a scatter that the canonicalizer fuses is left dead by that pass, not by the
// program: no warning.
constexpr auto fused_rows = ctfx::graph([](ctfx::builder& g) {
  auto grid = g.input("grid", ctfx::f32, {6, 6});
  auto north = g.input("north", ctfx::f32, {4});
  g.update(grid, ctfx::slice_scatter(grid, ctfx::slice_scatter(grid.select(0, 0), north, 0, 1, 5).unsqueeze(0), 0, 0, 1));
});
static_assert(ctfx::pipeline<decltype(fused_rows)>::report.warnings() == 0);
static_assert(ctfx::compiled<decltype(fused_rows)>::report.warnings() == 0);

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("report warnings: an unused value is a warning line naming the node, its op and the fix") {
  const std::string t = ctfx::to_text(forgot_pipeline::report);
  INFO(t);
  CHECK(contains(t, "  warning: unused-value: %index_put (index_put) is used by nothing (not an output, not written back "
                    "by update): it is dropped, and never runs (pass it to g.output() or g.update(), or remove it)\n"));
  // The run-time pipeline says the same.
  ctfx::runtime_plan p(forgot_update.get());
  REQUIRE(p.error().ok());
  REQUIRE(p.decisions().unused.size() == 1);
  CHECK(p.decisions().unused[0].name.view() == "index_put");
  CHECK(contains(ctfx::to_text(p.decisions()), "warning: unused-value: %index_put (index_put)"));
}

TEST_CASE("report warnings: a read of an input's old value after its update names the read, the input and the bytes") {
  const std::string t = ctfx::to_text(stale_plan::report);
  INFO(t);
  CHECK(contains(t, "  warning: old-input-read: %mul reads input %x after its new value %index_put was computed: it reads "
                    "the old value, and keeping it clones all 32 bytes of %x (read the new value %index_put instead, or "
                    "read before the update)\n"));
  ctfx::runtime_plan p(read_after_update.get());
  REQUIRE(p.error().ok());
  CHECK(contains(ctfx::to_text(p.decisions()), "warning: old-input-read: %mul reads input %x"));
  // The program still computes what it says: the old x, doubled.
  std::vector<float> x{0, 1, 2, 3, 4, 5, 6, 7}, v{-1, -2}, out(8);
  std::vector<std::int64_t> i{1, 6};
  auto st = stale_plan::run({ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {8}), ctfx::tensor_ref::contiguous(i.data(), ctfx::i64, {2}),
                             ctfx::tensor_ref::contiguous(v.data(), ctfx::f32, {2})},
                            {ctfx::tensor_ref::contiguous(out.data(), ctfx::f32, {8})});
  REQUIRE_MESSAGE(st.ok, st.message);
  CHECK(out == std::vector<float>{0, 2, 4, 6, 8, 10, 12, 14});
  CHECK(x == std::vector<float>{0, -1, 2, 3, 4, 5, -2, 7});
}

TEST_CASE("report warnings: none for a program that uses every value and reads the new one") {
  CHECK(ctfx::warnings_text(ctfx::compiled<decltype(read_new_value)>::report).empty());
  CHECK(!contains(ctfx::to_text(ctfx::compiled<decltype(fused_rows)>::report), "warning"));
}
