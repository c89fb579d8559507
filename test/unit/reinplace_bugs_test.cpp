// Reinplacing where PyTorch's pass is unsound or misses: one test per anchor bug, plus #197829
// (`x[1:] = x[:-1]`) and the overlap test on provably disjoint slices.
#include <doctest/doctest.h>
#include <ctfx.hpp>
#include <ctfx/passes/pipeline.hpp>
#include <string>

namespace {

using ctfx::op_kind;
using ctfx::reinplace_reason;

constexpr ctfx::tensor gscatter(ctfx::tensor inp, ctfx::tensor src, std::initializer_list<ctfx::sym_expr> chain) {
  std::int32_t a[2] = {inp.id, src.id};
  return {inp.b, inp.b->add(op_kind::generalized_scatter, std::span<const std::int32_t>(a, 2),
                            std::span<const ctfx::sym_expr>(chain.begin(), chain.size()))};
}
constexpr ctfx::sym_expr K(op_kind k) { return ctfx::sym_expr(static_cast<ctfx::index_t>(k)); }
constexpr ctfx::sym_expr END = ctfx::end_of_dim;

template <class G> constexpr auto report() { return ctfx::reinplace_report_of<G>(); }
std::string after(const ctfx::ir& g) {
  auto r = ctfx::reinplace_inplaceable_ops_core(g);
  auto d = ctfx::verify(r);
  REQUIRE_MESSAGE(d.ok(), std::string(d.message()));
  return ctfx::to_text(r);
}

// #198094: y = slice_scatter(x, src); x.zero_(); return y. The first copy_ into x does not write y.
constexpr auto bug198094 = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {4});
  auto src = g.input("src", ctfx::f32, {2});
  auto y = gscatter(x, src, {K(op_kind::slice), 4, 0, 0, 2, 1}).named("y");
  g.update(x, g.zeros({4}).named("zero"));
  g.output(y);
});
static_assert(!report<decltype(bug198094)>().is_reinplaced("y"));
// The same, observed by a later epilogue instead of the output.
constexpr auto bug198094_epilogue = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {4});
  auto x2 = g.input("x2", ctfx::f32, {4});
  auto y = ctfx::index_put(x, {g.input("i", ctfx::i64, {1})}, g.full({}, 1.0)).named("y");
  g.update(x, g.zeros({4}).named("zero"));
  g.update(x2, y);
});
static_assert(report<decltype(bug198094_epilogue)>().reason("y") == reinplace_reason::observed_after_epilogue);
// Read only before the overwriting copy_: in place is fine (x holds y until the copy_).
constexpr auto bug198094_ok = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {4});
  auto y = ctfx::index_put(x, {g.input("i", ctfx::i64, {1})}, g.full({}, 1.0)).named("y");
  auto s = y.sum().named("s");
  g.update(x, g.zeros({4}).named("zero"));
  g.output(s);
});
static_assert(report<decltype(bug198094_ok)>().is_reinplaced("y"));

// #195451: updated = slice_scatter(x, src, 0, 0, 1); x.copy_(updated); return updated.
constexpr auto bug195451 = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {4});
  auto src = g.input("src", ctfx::f32, {1});
  auto u = gscatter(x, src, {K(op_kind::slice), 4, 0, 0, 1, 1}).named("updated");
  g.update(x, u);
  g.output(u);
});
static_assert(report<decltype(bug195451)>().reason("updated") == reinplace_reason::result_escapes);

// #198031: y = x.clone(); op(y, x) after no-op removal is op(x, x): never op(x, x) in place.
struct op_198031 : ctfx::custom_op<"op", "op(Tensor(a!) out, Tensor src) -> ()"> {};
constexpr auto bug198031_after_noop = ctfx::graph([](ctfx::builder& g) {
  auto in = g.input("in", ctfx::f32, {4});
  auto x = ctfx::cos(in).named("x");
  g.output(g.call<op_198031>(x, x)[0]);
});
static_assert(report<decltype(bug198031_after_noop)>().reason("auto_functionalized") == reinplace_reason::read_by_other_argument);
constexpr auto bug198031 = ctfx::graph([](ctfx::builder& g) {
  auto in = g.input("in", ctfx::f32, {4});
  auto x = ctfx::cos(in).named("x");
  auto y = x.clone().named("y");
  g.output(g.call<op_198031>(y, x)[0]);
});

// #197829: x[1:] = x[:-1] reads what it writes; x[0:2] = x[2:4] does not.
constexpr auto bug197829 = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {8});
  auto y = gscatter(x, x.slice(0, 0, 7), {K(op_kind::slice), 4, 0, 1, END, 1}).named("y");
  g.update(x, y);
});
static_assert(report<decltype(bug197829)>().reason("y") == reinplace_reason::read_by_other_argument);
constexpr auto disjoint_halves = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {8});
  auto y = gscatter(x, x.slice(0, 4, 8), {K(op_kind::slice), 4, 0, 0, 4, 1}).named("y");
  g.update(x, y);
});
static_assert(report<decltype(disjoint_halves)>().is_reinplaced("y"));

// Halo exchange: write the ghost columns of a buffer while the interior is read afterwards.
constexpr auto halo = ctfx::graph([](ctfx::builder& g) {
  auto u = g.input("u", ctfx::f32, {4, 6});
  auto left = g.input("left", ctfx::f32, {4, 1});
  auto v = gscatter(u, left, {K(op_kind::slice), 4, 1, 0, 1, 1}).named("ghost");
  auto interior = u.slice(1, 1, 5).sum().named("interior");
  g.update(u, v);
  g.output(interior);
});
static_assert(report<decltype(halo)>().is_reinplaced("ghost"));
constexpr auto halo_overlap = ctfx::graph([](ctfx::builder& g) {
  auto u = g.input("u", ctfx::f32, {4, 6});
  auto left = g.input("left", ctfx::f32, {4, 1});
  auto v = gscatter(u, left, {K(op_kind::slice), 4, 1, 0, 1, 1}).named("ghost");
  auto edge = u.slice(1, 0, 2).sum().named("edge");  // reads the old ghost column
  g.update(u, v);
  g.output(edge);
});
static_assert(report<decltype(halo_overlap)>().reason("ghost") == reinplace_reason::blocking_use);

// #195285: scatter -> index_put -> copy-back, without a full-buffer clone.
constexpr auto bug195285 = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {8, 4});
  auto row = g.input("row", ctfx::f32, {4});
  auto idx = g.input("idx", ctfx::i64, {2});
  auto s = gscatter(x, row, {K(op_kind::select), 2, 0, 0}).named("s");
  auto p = ctfx::index_put(s, {idx}, g.full({}, 0.0).named("zero")).named("p");
  g.update(x, p);
});
constexpr auto r195285 = report<decltype(bug195285)>();
static_assert(r195285.is_reinplaced("s") && r195285.is_reinplaced("p"));
static_assert(r195285.clones() == 0 && r195285.all_inplace());

// #137416: cache.view(8, -1)[pos] = val.view(-1), written back through the inverse view.
constexpr auto bug137416 = ctfx::graph([](ctfx::builder& g) {
  auto cache = g.input("cache", ctfx::f32, {4, 2, 8});
  auto val = g.input("val", ctfx::f32, {1, 8});
  auto pos = g.input("pos", ctfx::i64, {1});
  auto v = cache.view({8, -1}).named("v");
  auto p = ctfx::index_put(v, {pos}, val.view({-1}).named("flat")).named("p");
  g.update(cache, p.view({4, 2, 8}).named("back"));
});
constexpr auto r137416 = report<decltype(bug137416)>();
static_assert(r137416.is_reinplaced("p") && r137416.clones() == 0);
// A copy-back with another layout (a transpose) must not become a self-overlapping copy.
constexpr auto view_copy_back_transposed = ctfx::graph([](ctfx::builder& g) {
  auto cache = g.input("cache", ctfx::f32, {8, 8});
  auto pos = g.input("pos", ctfx::i64, {1});
  auto p = ctfx::index_put(cache, {pos}, g.full({}, 0.0)).named("p");
  g.update(cache, p.transpose(0, 1).named("pt"));
});
static_assert(report<decltype(view_copy_back_transposed)>().reason("p") == reinplace_reason::view_copy_back_layout);

// #198131: dst[:] = src[:]; src.add_(1): the copy of src must stay a copy.
constexpr auto bug198131 = ctfx::graph([](ctfx::builder& g) {
  auto dst = g.input("dst", ctfx::f32, {4});
  auto src = g.input("src", ctfx::f32, {4});
  auto c = ctfx::copy(dst, src.alias()).named("c");
  g.update(dst, c);
  g.update(src, (src + 1.0).named("src1"));
});

// #197489: a clone whose storage offset differs from its source is not a no-op.
constexpr auto bug197489 = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {8});
  g.output(x.slice(0, 1, 5).clone().named("c"));
});

// #197893: x + 0 returned must not be the input itself.
constexpr auto bug197893 = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {4});
  g.output((x + 0.0).named("y"));
});

// Seed 000/001 invariants: f(x) = x.clone() is not a no-op; y = x.clone(); x.copy_(y); return y
// keeps its clone.
constexpr auto seed_clone = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {4});
  g.output(x.clone().named("y"));
});
constexpr auto seed_clone_copy_back = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {4});
  auto y = x.clone().named("y");
  g.update(x, y);
  g.output(y);
});

constexpr bool output_is_input(const ctfx::ir& g) {
  auto o = g.output_node();
  for (auto a : g.args_of(o))
    for (std::int32_t i = 0; i < g.size(); ++i)
      if (g[i].op == op_kind::placeholder && g[i].meta.storage == g.meta(a).storage) return true;
  return false;
}

}  // namespace

TEST_CASE("pytorch#198094: an input overwritten by a later copy_ is not reinplaced") {
  constexpr auto r = report<decltype(bug198094)>();
  CHECK(r.reason("y") == reinplace_reason::result_escapes);
  CHECK(after(bug198094.get()).find("= _generalized_scatter(%x, %src") != std::string::npos);
  CHECK(report<decltype(bug198094_epilogue)>().blocker("y") == "copy__1");
  CHECK(after(bug198094_ok.get()).find("index_put_(%x") != std::string::npos);
}

TEST_CASE("pytorch#195451: a scatter result is not returned as an alias of the input") {
  CHECK(report<decltype(bug195451)>().blocker("updated") == "output");
  CHECK(!output_is_input(ctfx::reinplace_inplaceable_ops_core(bug195451.get())));
}

TEST_CASE("pytorch#198031: op(y, x) with y = x.clone() never becomes op(x, x)") {
  CHECK(after(bug198031_after_noop.get()).find("custom(op, %x, %x, _clone=[%x])") != std::string::npos);
  // Through the whole pipeline: either the clone stays (and is written in place), or the op clones.
  auto g = ctfx::run_pipeline(bug198031.get());
  REQUIRE(g.error.ok());
  auto t = ctfx::to_text(g);
  CAPTURE(t);
  CHECK((t.find("custom(op, %y, %x)") != std::string::npos || t.find("_clone=[%x]") != std::string::npos));
}

TEST_CASE("pytorch#197829: x[1:] = x[:-1] stays functional, disjoint halves go in place") {
  CHECK(report<decltype(bug197829)>().blocker("y") == "slice");
  CHECK(after(bug197829.get()).find("= _generalized_scatter(%x, %slice") != std::string::npos);
  CHECK(after(disjoint_halves.get()) ==
        "graph(%x : f32[8]):\n"
        "  %slice : f32[4] = slice(%x, dim=0, start=4, end=8)\n"
        "  %y : f32[8] = _inplace_generalized_scatter(%x, %slice, [slice(dim=0, start=0, end=4)])\n"
        "  return ()\n");
}

TEST_CASE("overlap test: a ghost-cell write is not blocked by a later read of the interior") {
  CHECK(report<decltype(halo)>().is_reinplaced("ghost"));
  CHECK(report<decltype(halo_overlap)>().blocker("ghost") == "edge");
  ctfx::tensor_meta a{}, b{};
  a.rank = b.rank = 2;
  a.size[0] = b.size[0] = 4; a.size[1] = b.size[1] = 2;
  a.stride[0] = b.stride[0] = 4; a.stride[1] = b.stride[1] = 1;
  a.offset = 0; b.offset = 2;
  CHECK(!ctfx::may_overlap(a, b));  // x[:, 0:2] and x[:, 2:4]
  b.offset = 1;
  CHECK(ctfx::may_overlap(a, b));   // x[:, 0:2] and x[:, 1:3]
}

TEST_CASE("pytorch#195285: scatter -> index_put -> copy-back runs in place without a clone") {
  CHECK(after(bug195285.get()) ==
        "graph(%x : f32[8, 4], %row : f32[4], %idx : i64[2]):\n"
        "  %s : f32[8, 4] = _inplace_generalized_scatter(%x, %row, [select(dim=0, index=0)])\n"
        "  %zero : f32[] = full([], 0, dtype=f32)\n"
        "  %p : f32[8, 4] = index_put_(%s, [%idx], %zero)\n"
        "  return ()\n");
}

TEST_CASE("pytorch#137416: KV-cache write through a view, copied back through the inverse view") {
  auto t = after(bug137416.get());
  CHECK(t.find("index_put_(%v, [%pos], %flat)") != std::string::npos);
  CHECK(t.find("copy_") == std::string::npos);
  CHECK(report<decltype(view_copy_back_transposed)>().blocker("p") == "copy_");
}

TEST_CASE("pytorch#198131: a copy of an input mutated later is kept") {
  auto g = ctfx::run_pipeline(bug198131.get());
  REQUIRE(g.error.ok());
  auto t = ctfx::to_text(g);
  CAPTURE(t);
  // dst must receive the old src: a copy (or clone) of src stays before src is written.
  CHECK((t.find("copy(%dst") != std::string::npos || t.find("clone(%src") != std::string::npos ||
         t.find("copy_(%dst, %src)") == std::string::npos));
}

TEST_CASE("pytorch#197489: a clone with another storage offset stays") {
  auto t = ctfx::to_text(ctfx::run_pipeline(bug197489.get()));
  CHECK(t.find("clone(%slice)") != std::string::npos);
}

TEST_CASE("pytorch#197893: x + 0 is never returned as the input") {
  auto g = ctfx::run_pipeline(bug197893.get());
  REQUIRE(g.error.ok());
  CHECK(!output_is_input(g));
}

TEST_CASE("seed invariants: f(x) = x.clone() and y = x.clone(), x.copy_(y), return y keep their clone") {
  auto g1 = ctfx::run_pipeline(seed_clone.get());
  REQUIRE(g1.error.ok());
  CHECK(!output_is_input(g1));
  auto g2 = ctfx::run_pipeline(seed_clone_copy_back.get());
  REQUIRE(g2.error.ok());
  CHECK(!output_is_input(g2));
  CHECK(ctfx::to_text(g2).find("clone(%x)") != std::string::npos);
}
