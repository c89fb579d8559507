// remove_noop_ops: Inductor's registry (A.3), same_meta with the storage offset, both aliasing
// guards, and the PyTorch bugs ctfx gets right (#197489, #198131, #197893), on printed graphs.
#include <doctest/doctest.h>
#include <ctfx.hpp>
#include <ctfx/passes/remove_noop_ops.hpp>
#include <string>

namespace {

std::string text(const ctfx::ir& g) { return ctfx::to_text(g); }

// Runs the pass, checks the verifier on its output, returns the printed result.
template <class Rules = ctfx::builtin_noop_rules>
std::string after(const ctfx::ir& g) {
  ctfx::ir h = ctfx::remove_noop_ops_with<Rules>(g);
  CHECK(ctfx::to_string(ctfx::verify(h)) == "ok");
  return text(h);
}

// ----- the registry -----
constexpr auto registry = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {4, 8});
  auto n = g.input("n", ctfx::i64, {4, 8});
  auto a = x.clone().alias().slice(0, 0, ctfx::end_of_dim).slice(1, 0, 8).view({4, 8});
  auto b = ctfx::pow(a.to(ctfx::f32), 1.0);
  auto c = ctfx::cat({b}) + 2;
  auto d = ctfx::ceil(ctfx::floor(ctfx::round(ctfx::trunc(n)))) * 3;
  auto e = ctfx::copy(c, ctfx::sin(x));
  g.output(e, d);
});

TEST_CASE("remove_noop_ops: every registered op under its condition") {
  CHECK(text(registry.get()) == R"(graph(%x : f32[4, 8], %n : i64[4, 8]):
  %clone : f32[4, 8] = clone(%x)
  %alias : f32[4, 8] = alias(%clone)
  %slice : f32[4, 8] = slice(%alias, dim=0, start=0, end=None)
  %slice_1 : f32[4, 8] = slice(%slice, dim=1, start=0, end=8)
  %view : f32[4, 8] = view(%slice_1, size=[4, 8])
  %convert_element_type : f32[4, 8] = convert_element_type(%view, f32)
  %pow : f32[4, 8] = pow(%convert_element_type, 1)
  %cat : f32[4, 8] = cat([%pow], dim=0)
  %add : f32[4, 8] = add(%cat, 2)
  %trunc : i64[4, 8] = trunc(%n)
  %round : i64[4, 8] = round(%trunc)
  %floor : i64[4, 8] = floor(%round)
  %ceil : i64[4, 8] = ceil(%floor)
  %mul : i64[4, 8] = mul(%ceil, 3)
  %sin : f32[4, 8] = sin(%x)
  %copy : f32[4, 8] = copy(%add, %sin)
  return (%copy, %mul)
)");
  // Each no-op reads the replacement of the one before it; copy(dst, src) is src. (The dead add
  // stays: dce removes it.)
  CHECK(after(registry.get()) == R"(graph(%x : f32[4, 8], %n : i64[4, 8]):
  %add : f32[4, 8] = add(%x, 2)
  %mul : i64[4, 8] = mul(%n, 3)
  %sin : f32[4, 8] = sin(%x)
  return (%sin, %mul)
)");
}

TEST_CASE("remove_noop_ops: conditions that do not hold keep the node") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4, 8});
    auto s = x.slice(0, 1, ctfx::end_of_dim);                   // start 1
    auto t = x.slice(1, 0, 8, 2);                               // step 2
    auto v = x.view({8, 4});                                    // another shape
    auto c = x.to(ctfx::f16);                                   // another dtype
    auto p = ctfx::pow(x, 2.0);
    auto f = ctfx::floor(x);                                    // floats round
    b.output(s.sum(), t.sum(), v.sum(), c.sum(), p.sum(), f.sum());
  });
  CHECK(after(g) == text(g));
}

// ----- aliasing guards (DESIGN.md invariants; fx_passes/README.md) -----
TEST_CASE("remove_noop_ops: f(x) = x.clone() keeps its clone") {
  auto g = ctfx::build_checked([](ctfx::builder& b) { b.output(b.input("x", ctfx::f32, {4}).clone()); });
  CHECK(after(g) == text(g));
}

TEST_CASE("remove_noop_ops: y = x.clone(), x.copy_(y), return y keeps its clone") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4});
    auto y = x.clone();
    b.update(x, y);
    b.output(y);
  });
  CHECK(after(g) == text(g));
}

TEST_CASE("remove_noop_ops: guard 2, an output view of an input stays a distinct node") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4});
    b.output(x.alias(), x.slice(0, 0, 4));
  });
  CHECK(after(g) == text(g));
}

TEST_CASE("remove_noop_ops: two clones of one value returned keep one clone (output/output aliasing)") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4});
    auto t = x + 1;
    auto c1 = t.clone();
    auto c2 = t.clone();
    b.output(c1, c2);
  });
  // The first clone goes; the second would then return %add twice. (Inductor computes the output
  // storages once and removes both.)
  CHECK(after(g) == R"(graph(%x : f32[4]):
  %add : f32[4] = add(%x, 1)
  %clone_1 : f32[4] = clone(%add)
  return (%add, %clone_1)
)");
}

// ----- PyTorch's bugs -----
TEST_CASE("remove_noop_ops: pytorch#197489, a clone of an offset view is not a no-op") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4, 8});
    auto v = x.slice(0, 1, 3);
    b.output(v.clone() + 1);
  });
  CHECK(after(g) == text(g));
}

TEST_CASE("remove_noop_ops: pytorch#198131, a copy of an input the program writes later is kept") {
  // dst[0:, :] = src[0:, :]; src.add_(1) — functionalized.
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto dst = b.input("dst", ctfx::f32, {4, 8});
    auto src = b.input("src", ctfx::f32, {4, 8});
    auto c = ctfx::copy(dst, src.slice(0, 0, ctfx::end_of_dim));
    b.update(dst, c);
    b.update(src, src + 1);
  });
  // The full slice goes; copy(dst, src) stays, or reinplacing `add` into src would change it.
  CHECK(after(g) == R"(graph(%dst : f32[4, 8], %src : f32[4, 8]):
  %copy : f32[4, 8] = copy(%dst, %src)
  %add : f32[4, 8] = add(%src, 1)
  %copy_ : f32[4, 8] = copy_(%dst, %copy)
  %copy__1 : f32[4, 8] = copy_(%src, %add)
  return ()
)");
}

TEST_CASE("remove_noop_ops: pytorch#197893, x+0, x*1, x/1 never return an input as an output") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4});
    auto n = b.input("n", ctfx::i64, {4});
    b.output(n + 0, x * 1, x / 1.0, x - 0.0);
  });
  CHECK(after(g) == text(g));
}

TEST_CASE("remove_noop_ops: algebraic identities inside the graph, bit-exact only") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4});
    auto n = b.input("n", ctfx::i64, {4});
    auto y = ctfx::sin(x);
    auto a = ((y * 1) / 1.0 - 0.0) + (-0.0);  // all exact: removed
    auto k = (n + 0) * 1;                     // integers: removed
    auto z = y + 0.0;                         // -0.0 + 0.0 is +0.0: kept
    auto w = n / 1;                           // int / int is f32: kept (dtype changes)
    auto r0 = ctfx::exp(a);
    auto r1 = k.sum();
    auto r2 = z * 2;
    auto r3 = w * 2;
    b.output(r0, r1, r2, r3);
  });
  CHECK(after(g) == R"(graph(%x : f32[4], %n : i64[4]):
  %sin : f32[4] = sin(%x)
  %add_2 : f32[4] = add(%sin, 0.0)
  %div_1 : f32[4] = div(%n, 1)
  %exp : f32[4] = exp(%sin)
  %sum : i64[] = sum(%n, [])
  %mul_2 : f32[4] = mul(%add_2, 2)
  %mul_3 : f32[4] = mul(%div_1, 2)
  return (%exp, %sum, %mul_2, %mul_3)
)");
}

TEST_CASE("remove_noop_ops: the traced clone-then-scatter of a written input still loses its clone") {
  // y = x.clone(); y[0:2] = s; x.copy_(y): the clone only feeds the scatter, which reinplacing can
  // then run in place on x (the write-back makes it legal).
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4, 8});
    auto s = b.input("s", ctfx::f32, {2, 8});
    b.update(x, ctfx::slice_scatter(x.clone(), s, 0, 0, 2));
  });
  CHECK(after(g) == R"(graph(%x : f32[4, 8], %s : f32[2, 8]):
  %slice_scatter : f32[4, 8] = slice_scatter(%x, %s, dim=0, start=0, end=2)
  %copy_ : f32[4, 8] = copy_(%x, %slice_scatter)
  return ()
)");
}

// ----- stage (compile time) and a user rule -----
using noop_stage = ctfx::stage<decltype(registry), &ctfx::remove_noop_ops>;
static_assert(ctfx::verify(noop_stage::get()).ok());
static_assert(noop_stage::get().size() < registry.get().size());

// maximum(x, x) is x: a user's rule for an op the registry does not cover.
struct max_self : ctfx::noop_rule<ctfx::ops::maximum_t> {
  static constexpr bool cond(const ctfx::ir& g, std::int32_t n) { return g.arg(n, 0) == g.arg(n, 1); }
};
using my_rules = ctfx::builtin_noop_rules::with<max_self>;

constexpr auto with_max = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {4});
  auto y = ctfx::exp(x);
  g.output(ctfx::maximum(y, y.clone()) + 1);  // the clone goes first, then maximum(y, y)
});
using user_stage = ctfx::stage<decltype(with_max), &ctfx::remove_noop_ops_with<my_rules>>;
static_assert(ctfx::verify(user_stage::get()).ok());
static_assert(user_stage::get().size() == 4);                      // x, exp, add, output
static_assert(ctfx::stage<decltype(with_max), &ctfx::remove_noop_ops>::get().size() == 5);  // maximum stays

TEST_CASE("remove_noop_ops: a user rule added from user code") {
  CHECK(after<my_rules>(with_max.get()) == R"(graph(%x : f32[4]):
  %exp : f32[4] = exp(%x)
  %add : f32[4] = add(%exp, 1)
  return (%add,)
)");
  CHECK(after(with_max.get()) == R"(graph(%x : f32[4]):
  %exp : f32[4] = exp(%x)
  %maximum : f32[4] = maximum(%exp, %exp)
  %add : f32[4] = add(%maximum, 1)
  return (%add,)
)");
}

}  // namespace
