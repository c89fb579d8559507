// Graphs the differential fuzzer found wrong, kept as regression tests: each runs through the
// optimized plan and the reference, which must agree bit for bit on outputs and inputs.
#include <doctest/doctest.h>
#include <cstring>
#include <ctfx.hpp>
#include <ctfx/exec/runtime.hpp>

namespace {

// Runs `g` on inputs filled with distinct values through the plan and the reference.
void same_as_reference(const ctfx::ir& g) {
  ctfx::runtime_plan plan(g);
  REQUIRE_MESSAGE(plan.error().ok(), std::string(plan.error().message()));
  std::vector<ctfx::tensor_desc> descs;
  for (auto i : plan.input_nodes()) {
    ctfx::tensor_desc d;
    const auto& m = g.meta(i);
    d.dt = m.dt;
    d.rank = m.rank;
    for (int k = 0; k < m.rank; ++k) d.size[k] = m.size[k].value();
    d.set_contiguous();
    descs.push_back(d);
  }
  auto b = plan.bind(descs);
  REQUIRE(b.status.ok);
  auto make = [&](std::vector<std::vector<std::byte>>& in, std::vector<std::vector<std::byte>>& out,
                  std::vector<ctfx::tensor_ref>& ir, std::vector<ctfx::tensor_ref>& orf) {
    for (std::size_t k = 0; k < descs.size(); ++k) {
      in.emplace_back(descs[k].span_bytes());
      for (std::size_t e = 0; e * 4 < in.back().size(); ++e) {
        const float v = static_cast<float>(e % 7) - 2.5f + static_cast<float>(k);
        std::memcpy(in.back().data() + e * 4, &v, 4);
      }
    }
    for (const auto& d : b.outputs) out.emplace_back(d.span_bytes());
    for (std::size_t k = 0; k < descs.size(); ++k) ir.emplace_back(in[k].data(), descs[k]);
    for (std::size_t k = 0; k < b.outputs.size(); ++k) orf.emplace_back(out[k].data(), b.outputs[k]);
  };
  std::vector<std::vector<std::byte>> i1, o1, i2, o2;
  std::vector<ctfx::tensor_ref> r1, p1, r2, p2;
  make(i1, o1, r1, p1);
  make(i2, o2, r2, p2);
  REQUIRE(plan.run(r1, p1).ok);
  REQUIRE(ctfx::reference_run(g, r2, p2).ok);
  CHECK(i1 == i2);
  CHECK(o1 == o2);
}

}  // namespace

TEST_CASE("fuzz regression: an in-place list op after a scatter reinplaced into the input") {
  // The scatter runs in x0; _foreach_mul in place on it would change what x0.copy_(scatter) writes.
  same_as_reference(ctfx::build_checked([](ctfx::builder& b) {
    auto x0 = b.input("x0", ctfx::f32, {4, 6});
    auto x1 = b.input("x1", ctfx::f32, {3, 4, 6});
    auto add = x1 + x0;
    auto s = ctfx::select_scatter(x0, x0.select(1, 5) * 2.0, 1, 5);
    auto n = -s;
    auto r = ctfx::foreach_mul({s, n}, 0.5);
    (void)r;
    b.update(x0, s);
    b.update(x1, add);
    b.output(add);
  }));
}

TEST_CASE("fuzz regression: an epilogue whose source is a view of the input it overwrites") {
  // x0.copy_(x0.t().t()) copies x0 onto itself; a dead scatter into x0 must not run in place.
  same_as_reference(ctfx::build_checked([](ctfx::builder& b) {
    auto x0 = b.input("x0", ctfx::f32, {4, 6});
    auto t = x0.transpose(0, 1);
    auto out = t.amax({1}, true) * 0.5;
    auto v = t.slice(0, 0, 6);
    auto dead = ctfx::slice_scatter(t, ctfx::select_scatter(v, v.select(1, 2) * 3.0, 1, 3), 0, 0, 6);
    (void)dead;
    b.update(x0, t.transpose(0, 1));
    b.output(out);
  }));
}

TEST_CASE("fuzz regression: a clone of an input read through a view after the input's epilogue") {
  // x2.copy_(x0.clone()[0]) must copy x0's old row, though x0.copy_(...) runs first.
  same_as_reference(ctfx::build_checked([](ctfx::builder& b) {
    auto x0 = b.input("x0", ctfx::f32, {4, 6});
    auto x2 = b.input("x2", ctfx::f32, {6});
    auto c = x0.clone();
    b.update(x0, x0 * 2.0);
    b.update(x2, c.select(0, 0));
    b.output(x0 + 1.0);
  }));
}

namespace {
// out <- 3 x + out, elementwise, through each argument's strides (the fuzzer's user op).
struct axpy3 : ctfx::custom_op<"regress::axpy3_", "axpy3_(Tensor x, Tensor(a!) out) -> ()"> {
  static void run(const ctfx::custom_call& c) {
    const ctfx::tensor_ref &x = c.args[0], &o = c.args[1];
    for (ctfx::index_t i = 0; i < o.size[0]; ++i) {
      auto* po = static_cast<float*>(o.data) + i * o.stride[0];
      *po = static_cast<const float*>(x.data)[i * x.stride[0]] * 3.0f + *po;
    }
  }
};
}  // namespace

TEST_CASE("fuzz regression: a user op's updated argument whose layout reinplacing changed") {
  // slice_scatter into a row of t runs in t's storage, so its result becomes a view at offset 6; the
  // user op's copy of it keeps that offset and stride (clone_preserve_strides), and the getitem
  // that reads the copy must be derived again (it kept the old, offset-0 layout: metadata-consistent).
  const auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4, 6});
    auto t = x * 2.0;
    auto s = t.select(0, 1);
    auto ss = ctfx::slice_scatter(s, s.slice(0, 2, 5) + 1.5, 0, 2, 5);
    auto c1 = ss.clone();
    auto r = b.call<axpy3>(c1, ss);
    b.output(r[0], ctfx::floor(c1), t);
  });
  ctfx::kernel_table k;
  k.add<axpy3>();
  ctfx::runtime_plan plan(g);
  REQUIRE_MESSAGE(plan.error().ok(), std::string(plan.error().message()));
  std::vector<float> x(24), a(6), b6(6), t(24), ra(6), rb(6), rt(24);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.5f - 3.0f;
  auto in = [&] { return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {4, 6})}; };
  REQUIRE(plan.run(in(), {ctfx::tensor_ref::contiguous(a.data(), ctfx::f32, {6}), ctfx::tensor_ref::contiguous(b6.data(), ctfx::f32, {6}),
                          ctfx::tensor_ref::contiguous(t.data(), ctfx::f32, {4, 6})}, ctfx::backend::host, {}, &k).ok);
  REQUIRE(ctfx::reference_run(g, in(), {ctfx::tensor_ref::contiguous(ra.data(), ctfx::f32, {6}), ctfx::tensor_ref::contiguous(rb.data(), ctfx::f32, {6}),
                                        ctfx::tensor_ref::contiguous(rt.data(), ctfx::f32, {4, 6})}, &k).ok);
  CHECK(a == ra);
  CHECK(b6 == rb);
  CHECK(t == rt);
  CHECK(a[3] == 3.0f * (2.0f * x[9] + 1.5f) + (2.0f * x[9] + 1.5f));  // out <- 3 x + out, x a copy of out
}
