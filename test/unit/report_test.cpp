// The reinplacing report: constexpr data a user can static_assert on, the run-time printer, the
// pipeline at compile time, and require_inplace misses as errors that name the node and the blocker.
#include <doctest/doctest.h>
#include <ctfx.hpp>
#include <ctfx/passes/pipeline.hpp>
#include <string>

namespace {

// One decode step of a KV cache: write this token's keys at position `pos`.
constexpr auto kv_step = ctfx::graph([](ctfx::builder& g) {
  auto cache = g.input("cache", ctfx::f16, {2, 4, 16, 8});
  auto k = g.input("k", ctfx::f16, {2, 4, 1, 8});
  auto pos = g.input("pos", ctfx::i64, {1});
  auto next = ctfx::index_put(cache, {ctfx::none, ctfx::none, pos}, k).named("next").require_inplace();
  g.update(cache, next);
});
using kv = ctfx::pipeline<decltype(kv_step)>;
static_assert(kv::report.all_inplace());
static_assert(kv::report.clones() == 0);
static_assert(kv::report.missed_bytes() == 0);
static_assert(kv::report.size() == 1);

// The same program that also returns the new cache value: it would alias the input (#195451).
constexpr auto kv_returned = ctfx::graph([](ctfx::builder& g) {
  auto cache = g.input("cache", ctfx::f16, {2, 4, 16, 8});
  auto k = g.input("k", ctfx::f16, {2, 4, 1, 8});
  auto pos = g.input("pos", ctfx::i64, {1});
  auto next = ctfx::index_put(cache, {ctfx::none, ctfx::none, pos}, k).named("next");
  g.update(cache, next);
  g.output(next);
});
constexpr auto r_ret = ctfx::reinplace_report_of<decltype(kv_returned)>();
static_assert(!r_ret.all_inplace() && r_ret.clones() == 1);
static_assert(r_ret.missed(ctfx::reinplace_trigger::aten) == 1);
static_assert(r_ret.missed_bytes() == 2 * 4 * 16 * 8 * 2);
static_assert(r_ret.inductor_missed() == 0);  // Inductor does not count index_put

// require_inplace on a node that cannot run in place: the pass records an error naming both.
constexpr auto required_but_live = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {4});
  auto i = g.input("i", ctfx::i64, {1});
  auto c = ctfx::cos(x).named("c");
  auto p = ctfx::index_put(c, {i}, g.full({}, 0.0)).named("p").require_inplace();
  g.output(p, (c * 2.0).named("reader"));
});
constexpr ctfx::diagnostic required_diag = ctfx::verify(ctfx::reinplace_inplaceable_ops_core(required_but_live.get()));
static_assert(required_diag.r == ctfx::rule::require_inplace);

constexpr auto required_not_inplaceable = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {4});
  g.output(ctfx::cos(x).named("c").require_inplace());
});
static_assert(ctfx::reinplace_inplaceable_ops_core(required_not_inplaceable.get()).error.r == ctfx::rule::require_inplace);

// A user custom op with an in-place twin, registered from user code.
struct my_scale : ctfx::custom_op<"my_scale", "my_scale(Tensor x) -> Tensor"> {};
struct my_scale_ : ctfx::custom_op<"my_scale_", "my_scale_(Tensor(a!) x) -> ()"> {};
constexpr auto my_table = ctfx::inplaceable_ops_with(
    boost::hana::make_pair(boost::hana::type_c<my_scale>, boost::hana::type_c<ctfx::inplace<my_scale_>>));
using my_table_t = std::remove_cv_t<decltype(my_table)>;
constexpr auto scaled = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {4});
  auto y = ctfx::exp(x).named("y");
  g.output(g.call<my_scale>(y)[0].named("z").require_inplace());
});
using scaled_p = ctfx::pipeline<decltype(scaled), my_table_t>;
static_assert(scaled_p::report.all_inplace());
static_assert(scaled_p::report.is_reinplaced("custom"));
// The table is data too: one row per pair, read by the pass.
static_assert(ctfx::inplace_rows<my_table_t>.size() == ctfx::inplace_rows<>.size() + 1);
static_assert(ctfx::is_meta_only(ctfx::op_kind::sym_size) && !ctfx::is_meta_only(ctfx::op_kind::add));

// Meta-only readers do not block: sym_size of the buffer after the write.
constexpr auto meta_only = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {4});
  auto i = g.input("i", ctfx::i64, {1});
  auto c = ctfx::cos(x).named("c");
  auto p = ctfx::index_put(c, {i}, g.full({}, 0.0)).named("p");
  auto n = c.sym_size(0).named("n");
  auto v = c.view({2, 2}).named("v");  // a view read only for its size
  (void)v.sym_size(0);
  g.output(p, n);
});
static_assert(ctfx::reinplace_report_of<decltype(meta_only)>().is_reinplaced("p"));

// Foreach lists go in place as a whole; an aliasing element keeps the whole list functional.
constexpr auto foreach_ok = ctfx::graph([](ctfx::builder& g) {
  auto a = g.input("a", ctfx::f32, {4});
  auto b = g.input("b", ctfx::f32, {4});
  auto r = ctfx::foreach_add({a, b}, 1.0);
  g.update(a, r[0]);
  g.update(b, r[1]);
});
static_assert(ctfx::reinplace_report_of<decltype(foreach_ok)>().all_inplace());
constexpr auto foreach_alias = ctfx::graph([](ctfx::builder& g) {
  auto a = g.input("a", ctfx::f32, {4});
  auto c = ctfx::cos(a).named("c");
  auto r = ctfx::foreach_mul({c, c.alias()}, 2.0);
  g.output(r[0], r[1]);
});
static_assert(ctfx::reinplace_report_of<decltype(foreach_alias)>().reason("foreach_mul") ==
              ctfx::reinplace_reason::aliasing_list_elements);

// all_reduce -> all_reduce_.
constexpr auto reduce = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {4});
  g.output(ctfx::all_reduce(ctfx::exp(x)).named("r"));
});
static_assert(ctfx::reinplace_report_of<decltype(reduce)>().is_reinplaced("r"));

}  // namespace

TEST_CASE("report: KV-cache step through the pipeline at compile time") {
  CHECK(ctfx::to_text(kv::report) ==
        "reinplace report: 1 of 1 candidates reinplaced, 0 clones, missed 0 tensors / 0 bytes\n"
        "  %next (index_put) on %cache: reinplaced, 2048 bytes, required\n");
  auto t = ctfx::to_text(kv::get());
  CHECK(t.find("index_put_(%cache, [None, None, %pos], %k)") != std::string::npos);
  CHECK(t.find("copy_") == std::string::npos);
  CHECK(ctfx::run_pipeline(kv_step.get()).phase == ctfx::graph_phase::reinplaced);
}

TEST_CASE("report: a miss names its reason and blocker, and is counted") {
  CHECK(ctfx::to_text(r_ret) ==
        "reinplace report: 0 of 1 candidates reinplaced, 1 clones, missed 1 tensors / 2048 bytes\n"
        "  %next (index_put) on %cache: not reinplaced, result-escapes (by %output), 2048 bytes, 1 clone, missed (ATEN)\n"
        "  missed_tensors_ATEN = 1, missed_bytes_ATEN = 2048\n");
}

TEST_CASE("report: require_inplace misses name the node and what blocks it") {
  CHECK(std::string(required_diag.message()) ==
        "node 'p' (index_put) at line 44: require_inplace, but it stays functional: a later use reads the storage it "
        "would overwrite; blocked by 'reader' [rule require-inplace]");
  auto g = ctfx::run_pipeline(required_but_live.get());
  CHECK(g.error.r == ctfx::rule::require_inplace);
  CHECK(std::string(ctfx::reinplace_inplaceable_ops_core(required_not_inplaceable.get()).error.message()) ==
        "node 'c' (cos) at line 52: require_inplace, but the op has no in-place form (add a pair to the inplace table for "
        "user ops) [rule require-inplace]");
}

TEST_CASE("report: a user op pair registered from user code") {
  auto t = ctfx::to_text(scaled_p::get());
  CHECK(t.find("custom(my_scale_, %y)") != std::string::npos);
  CHECK(t.find("return (%y,)") != std::string::npos);
}

TEST_CASE("report: foreach and all_reduce") {
  auto t = ctfx::to_text(ctfx::reinplace_inplaceable_ops_core(foreach_ok.get()));
  CHECK(t.find("_foreach_add_([%a, %b], 1)") != std::string::npos);
  CHECK(t.find("copy_") == std::string::npos);
  CHECK(ctfx::to_text(ctfx::reinplace_inplaceable_ops_core(reduce.get())).find("all_reduce_(%exp") != std::string::npos);
}
