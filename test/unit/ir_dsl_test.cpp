// The DSL (graph/builder.hpp, graph/graph.hpp): names, the epilogue, outputs, handles, user ops,
// partitions, and what ctfx::graph gives at compile time (size, diagnostic, the frozen ir).
#include <doctest/doctest.h>
#include <ctfx.hpp>
#include <string>

namespace {

using ctfx::builder;
using ctfx::op_kind;

constexpr auto kv_step = ctfx::graph([](builder& g) {
  auto cache = g.input("cache", ctfx::f16, {2, 4, 16, 8});
  auto k = g.input("k", ctfx::f16, {2, 4, 1, 8});
  auto pos = g.input("pos", ctfx::i64, {1});
  g.update(cache, ctfx::index_put(cache, {ctfx::none, ctfx::none, pos}, k));
});

// ----- compile-time facts of a graph_def -----
static_assert(decltype(kv_step)::diag.ok());
static_assert(decltype(kv_step)::sizes.nodes == 6);  // 3 inputs, index_put, copy_, output
static_assert(kv_step.get().size() == 6);
static_assert(kv_step.get()[3].op == op_kind::index_put);
static_assert(kv_step.get()[4].op == op_kind::copy_ && kv_step.get().arg(4, 0) == 0 && kv_step.get().arg(4, 1) == 3);
static_assert(kv_step.get().output_node() == 5 && kv_step.get()[5].nargs == 0);
static_assert(ctfx::verify(kv_step.get()).ok());
static_assert(std::is_empty_v<decltype(kv_step)>);  // a graph is a type; the value holds nothing

// A pass run at compile time in its own constant evaluation (graph/frozen.hpp).
constexpr ctfx::ir drop_nothing(ctfx::ir g) { return g; }
using staged = ctfx::stage<decltype(kv_step), drop_nothing>;
static_assert(staged::sizes.nodes == 6 && staged::get().find("copy_") == 4);

template <class F>
constexpr ctfx::ir built(F f) { return ctfx::build_checked(f); }

}  // namespace

TEST_CASE("ir dsl: names are the op's, numbered from the second, named() renames") {
  constexpr auto f = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {4});
    auto a = x + x;
    auto b = a + 1.0;
    auto c = (b + a).named("c");
    auto d = b + c;
    auto r = ctfx::foreach_add({x}, 1.0);
    auto r0 = r[0];
    auto i = g.input("i", ctfx::i64, {4});
    g.output(ctfx::unsafe_index_put(d, {i}, r0));
  };
  constexpr auto names_ok = [](auto fn) {
    ctfx::ir g = ctfx::build_checked(fn);
    // add, add_1, (add_2 renamed c), add_3: the counter runs on; the leading '_' of an op is dropped.
    return ctfx::verify(g).ok() && g[1].name == ctfx::name_t("add") && g[2].name == ctfx::name_t("add_1") && g[3].name == ctfx::name_t("c") &&
           g[4].name == ctfx::name_t("add_3") && g[5].name == ctfx::name_t("foreach_add") &&
           g[6].name == ctfx::name_t("getitem") && g[7].name == ctfx::name_t("i") &&
           g[8].name == ctfx::name_t("unsafe_index_put") && g[9].name == ctfx::name_t("output");
  };
  static_assert(names_ok(f));
  // Names longer than ctfx::max_name - 1 are cut, not rejected.
  static_assert(ctfx::name_t("a_very_long_name_that_goes_past_the_limit").view() == "a_very_long_name_that_goes_past");
}

TEST_CASE("ir dsl: the epilogue comes last, in update order, one copy_ per input") {
  constexpr auto f = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {4});
    auto y = g.input("y", ctfx::f32, {4});
    auto a = x + 1.0;
    g.update(y, a);
    auto b = a * 2.0;
    g.update(x, b);
    g.update(y, b + y);  // a second update of y replaces the first
    g.output(a);
    g.output(b, a);      // and a second output() replaces the first
  };
  CHECK(ctfx::to_text(built(f)) == R"(graph(%x : f32[4], %y : f32[4]):
  %add : f32[4] = add(%x, 1.0)
  %mul : f32[4] = mul(%add, 2.0)
  %add_1 : f32[4] = add(%mul, %y)
  %copy_ : f32[4] = copy_(%y, %add_1)
  %copy__1 : f32[4] = copy_(%x, %mul)
  return (%mul, %add)
)");
}

TEST_CASE("ir dsl: inputs, handles and their metadata") {
  constexpr auto f = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {4, 8});
    auto s = g.input("s", ctfx::i32, {g.sym("n")});
    g.output(x, s);
  };
  constexpr auto positions = [](auto fn) {
    ctfx::ir g = ctfx::build_checked(fn);
    return g[0].aux == 0 && g[1].aux == 1 && g[0].op == op_kind::placeholder && g.next_storage == 2;
  };
  static_assert(positions(f));
  constexpr auto handle = [] {
    builder g;
    auto x = g.input("x", ctfx::f32, {4, 8});
    auto y = x.slice(1, 2);
    return y.rank() == 2 && y.size(-1) == 6 && y.size(0) == 4 && y.dt() == ctfx::f32 && y.id == 1 &&
           y.meta().offset == 2;
  };
  static_assert(handle());
}

TEST_CASE("ir dsl: reshape copies only when the layout needs it") {
  constexpr auto f = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {4, 8});
    auto a = x.reshape({32});
    auto b = x.slice(1, 0, 4).reshape({16});
    g.output(a, b);
  };
  CHECK(ctfx::to_text(built(f)) == R"(graph(%x : f32[4, 8]):
  %view : f32[32] = view(%x, size=[32])
  %slice : f32[4, 4] = slice(%x, dim=1, start=0, end=4)
  %clone : f32[4, 4] = clone(%slice)
  %view_1 : f32[16] = view(%clone, size=[16])
  return (%view, %view_1)
)");
}

namespace {
struct sync_read : ctfx::custom_op<"sync_read", "sync_read(Tensor x) -> Tensor"> {
  static constexpr bool host_sync = true;
};
}  // namespace

TEST_CASE("ir dsl: require_inplace, partitions and host-synchronizing user ops") {
  constexpr auto f = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {4});
    auto a = (x + 1.0).require_inplace();
    g.partition_boundary();
    auto b = a * 2.0;
    auto r = g.call<sync_read>(b);
    auto c = r[0] - 1.0;
    g.output(c);
  };
  constexpr auto check = [](auto fn) {
    ctfx::ir g = ctfx::build_checked(fn);
    return g[0].partition == 0 && g[1].partition == 0 && g[1].require_inplace && !g[2].require_inplace &&
           g[2].partition == 1 && g[3].partition == 1 && g[4].partition == 2 && g[5].partition == 2 &&
           g.customs.size() == 1 && g.customs[0].host_sync && g[g.output_node()].partition == 2;
  };
  static_assert(check(f));
}

TEST_CASE("ir dsl: the first error is kept, build_checked reports it at run time") {
  ctfx::diagnostic d{};
  ctfx::ir g = ctfx::build_checked(
      [](builder& b) {
        auto x = b.input("x", ctfx::f32, {4, 8});
        auto bad = x.select(0, 9);           // first error
        auto worse = x.view({5});            // a later one, not reported
        b.output(bad, worse, x.sum({0}));
      },
      &d);
  CHECK(ctfx::to_string(d) == "node 'select' (select) at ir_dsl_test.cpp:153: index 9 is out of range for dimension 0 of size 4 [rule static-index-in-range]");
  CHECK(d.node == 1);
  CHECK(g.size() == 5);  // building went on: the later nodes exist
  CHECK(ctfx::to_string(ctfx::verify(g)) == ctfx::to_string(d));
}

TEST_CASE("ir dsl: graph_def::get() and build_checked give the same graph") {
  constexpr auto f = [](builder& g) {
    auto cache = g.input("cache", ctfx::f16, {2, 4, 16, 8});
    auto k = g.input("k", ctfx::f16, {2, 4, 1, 8});
    auto pos = g.input("pos", ctfx::i64, {1});
    g.update(cache, ctfx::index_put(cache, {ctfx::none, ctfx::none, pos}, k));
  };
  CHECK(ctfx::to_text(kv_step.get()) == ctfx::to_text(built(f)));
  CHECK(ctfx::to_text(kv_step.get()) == R"(graph(%cache : f16[2, 4, 16, 8], %k : f16[2, 4, 1, 8], %pos : i64[1]):
  %index_put : f16[2, 4, 16, 8] = index_put(%cache, [None, None, %pos], %k)
  %copy_ : f16[2, 4, 16, 8] = copy_(%cache, %index_put)
  return ()
)");
}
