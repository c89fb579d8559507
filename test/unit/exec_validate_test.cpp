// Validate before mutate: every kind of run-time failure is reported before the first write, and
// leaves every caller buffer bit-identical.
#include <doctest/doctest.h>
#include <algorithm>
#include <cstring>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/plan/listing.hpp>

namespace {

using ctfx::tensor_ref;

// cache[pos] = row, with the copy_ epilogue: reinplaced into the caller's cache.
ctfx::ir kv_graph() {
  return ctfx::build_checked([](ctfx::builder& g) {
    auto cache = g.input("cache", ctfx::f32, {6, 4});
    auto row = g.input("row", ctfx::f32, {1, 4});
    auto pos = g.input("pos", ctfx::i64, {1});
    auto next = ctfx::index_put(cache, {pos}, row);
    g.update(cache, next);
    g.output(next.sum({1}));
  });
}

struct kv_buffers {
  std::vector<float> cache = std::vector<float>(24), row = std::vector<float>(4, 7.0f), out = std::vector<float>(6, -1.0f);
  std::vector<std::int64_t> pos = {2};
  kv_buffers() {
    for (int i = 0; i < 24; ++i) cache[static_cast<std::size_t>(i)] = static_cast<float>(i);
  }
  std::vector<tensor_ref> inputs() {
    return {tensor_ref::contiguous(cache.data(), ctfx::f32, {6, 4}), tensor_ref::contiguous(row.data(), ctfx::f32, {1, 4}),
            tensor_ref::contiguous(pos.data(), ctfx::i64, {1})};
  }
  std::vector<tensor_ref> outputs() { return {tensor_ref::contiguous(out.data(), ctfx::f32, {6})}; }
  std::vector<std::byte> snapshot() const {
    std::vector<std::byte> s;
    auto put = [&](const void* p, std::size_t n) {
      auto* b = static_cast<const std::byte*>(p);
      s.insert(s.end(), b, b + n);
    };
    put(cache.data(), cache.size() * 4);
    put(row.data(), row.size() * 4);
    put(pos.data(), pos.size() * 8);
    put(out.data(), out.size() * 4);
    return s;
  }
};

}  // namespace

TEST_CASE("exec: the KV-cache update runs in place and equals the reference") {
  const auto g = kv_graph();
  ctfx::runtime_plan plan(g);
  REQUIRE(plan.error().ok());
  // The plan writes the caller's cache directly: no clone of it is left.
  int inplace = 0;
  for (const auto& n : plan.graph().nodes) {
    CHECK(n.op != ctfx::op_kind::clone);
    CHECK(n.op != ctfx::op_kind::index_put);
    inplace += n.op == ctfx::op_kind::index_put_;
  }
  CHECK(inplace == 1);
  CHECK(plan.mutated_inputs() == std::vector<std::int32_t>{0});
  kv_buffers a, b;
  auto st = plan.run(a.inputs(), a.outputs());
  REQUIRE_MESSAGE(st.ok, st.message);
  REQUIRE(ctfx::reference_run(g, b.inputs(), b.outputs()).ok);
  CHECK(a.cache == b.cache);
  CHECK(a.out == b.out);
  CHECK(a.cache[8] == 7.0f);
  CHECK(a.cache[11] == 7.0f);
  CHECK(a.out[2] == 28.0f);
  CHECK(a.out[0] == 0.0f + 1 + 2 + 3);
}

TEST_CASE("exec: an index out of range fails before any write") {
  ctfx::runtime_plan plan(kv_graph());
  kv_buffers a;
  a.pos[0] = 6;
  const auto before = a.snapshot();
  auto st = plan.run(a.inputs(), a.outputs());
  CHECK_FALSE(st.ok);
  CHECK(st.message.find("rule index-in-range") != std::string::npos);
  CHECK(st.message.find("index 6") != std::string::npos);
  CHECK(st.message.find("'pos'") != std::string::npos);
  CHECK(a.snapshot() == before);
  a.pos[0] = -6;  // negative indices wrap, as in PyTorch
  CHECK(plan.run(a.inputs(), a.outputs()).ok);
  CHECK(a.cache[0] == 7.0f);
  a.pos[0] = -7;
  const auto before2 = a.snapshot();
  CHECK_FALSE(plan.run(a.inputs(), a.outputs()).ok);
  CHECK(a.snapshot() == before2);
}

TEST_CASE("exec: every binding failure names its rule and leaves buffers untouched") {
  ctfx::runtime_plan plan(kv_graph());
  struct bad { const char* rule; void (*edit)(std::vector<tensor_ref>&, std::vector<tensor_ref>&); };
  const bad cases[] = {
      {"rule input-count", [](std::vector<tensor_ref>& in, std::vector<tensor_ref>&) { in.pop_back(); }},
      {"rule input-dtype", [](std::vector<tensor_ref>& in, std::vector<tensor_ref>&) { in[1].dt = ctfx::f64; }},
      {"rule input-rank", [](std::vector<tensor_ref>& in, std::vector<tensor_ref>&) { in[0].rank = 1; }},
      {"rule input-shape", [](std::vector<tensor_ref>& in, std::vector<tensor_ref>&) { in[0].size[0] = 5; }},
      {"rule input-strides", [](std::vector<tensor_ref>& in, std::vector<tensor_ref>&) { in[0].stride[0] = 5; }},
      {"rule output-count", [](std::vector<tensor_ref>&, std::vector<tensor_ref>& out) { out.clear(); }},
      {"rule output-dtype", [](std::vector<tensor_ref>&, std::vector<tensor_ref>& out) { out[0].dt = ctfx::i32; }},
      {"rule output-shape", [](std::vector<tensor_ref>&, std::vector<tensor_ref>& out) { out[0].size[0] = 5; }},
      {"rule no-caller-aliasing", [](std::vector<tensor_ref>& in, std::vector<tensor_ref>& out) { out[0].data = in[0].data; }},
  };
  for (const auto& c : cases) {
    kv_buffers a;
    auto in = a.inputs();
    auto out = a.outputs();
    c.edit(in, out);
    const auto before = a.snapshot();
    auto st = plan.run(in, out);
    CAPTURE(c.rule);
    CHECK_FALSE(st.ok);
    CHECK(st.message.find(c.rule) != std::string::npos);
    CHECK(a.snapshot() == before);
  }
}

TEST_CASE("exec: a workspace that is too small, a missing backend, a missing user kernel") {
  ctfx::runtime_plan plan(kv_graph());
  kv_buffers a;
  const auto before = a.snapshot();
  std::vector<std::byte> ws(8);
  auto st = plan.run(a.inputs(), a.outputs(), ctfx::backend::host, ws);
  CHECK(st.message.find("rule workspace-size") != std::string::npos);
  CHECK(a.snapshot() == before);
#if !defined(__CUDACC__)
  st = plan.run(a.inputs(), a.outputs(), ctfx::backend::cuda);
  CHECK(st.message.find("rule backend") != std::string::npos);
  CHECK(a.snapshot() == before);
#endif
  // The workspace the plan asks for is enough, and a caller-supplied one is used.
  auto b = plan.bind(std::vector<ctfx::tensor_desc>{a.inputs()[0], a.inputs()[1], a.inputs()[2]});
  REQUIRE(b.status.ok);
  std::vector<std::byte> ws2(b.workspace_bytes);
  CHECK(plan.run(a.inputs(), a.outputs(), ctfx::backend::host, ws2).ok);

  struct twice : ctfx::custom_op<"twice_", "twice_(Tensor(a!) x) -> ()"> {};
  auto g = ctfx::build_checked([](ctfx::builder& gb) {
    auto x = gb.input("x", ctfx::f32, {4});
    auto r = gb.call<twice>(x);
    gb.update(x, r[0]);
  });
  ctfx::runtime_plan p2(g);
  REQUIRE(p2.error().ok());
  std::vector<float> x = {1, 2, 3, 4};
  std::vector<tensor_ref> in = {tensor_ref::contiguous(x.data(), ctfx::f32, {4})};
  st = p2.run(in, {});
  CHECK(st.message.find("rule custom-kernel") != std::string::npos);
  CHECK(x == std::vector<float>{1, 2, 3, 4});
  ctfx::kernel_table k;
  k.add("twice_", [](const ctfx::custom_call& c) {
    auto* p = static_cast<float*>(c.args[0].data);
    for (int i = 0; i < 4; ++i) p[i] *= 2;
  });
  CHECK(p2.run(in, {}, ctfx::backend::host, {}, &k).ok);
  CHECK(x == std::vector<float>{2, 4, 6, 8});
  // Reinplacing turned the functionalized call into a direct one on the caller's buffer.
  bool direct = false;
  for (const auto& n : p2.graph().nodes) direct = direct || n.op == ctfx::op_kind::custom;
  CHECK(direct);
}

TEST_CASE("exec: symbolic extents bind from the inputs and must agree") {
  auto g = ctfx::build_checked([](ctfx::builder& gb) {
    auto s = gb.sym("s0");
    auto x = gb.input("x", ctfx::f32, {s, 3});
    auto y = gb.input("y", ctfx::f32, {s, 3});
    gb.update(x, ctfx::slice_scatter(x, y.slice(1, 0, 1) * 2.0, 1, 2, 3));
    gb.output(x + y);
  });
  ctfx::runtime_plan plan(g);
  REQUIRE(plan.error().ok());
  std::vector<float> x(15, 1.0f), y(15, 2.0f), out(15), x2 = x, out2(15);
  std::vector<tensor_ref> in = {tensor_ref::contiguous(x.data(), ctfx::f32, {5, 3}), tensor_ref::contiguous(y.data(), ctfx::f32, {5, 3})};
  std::vector<tensor_ref> in2 = {tensor_ref::contiguous(x2.data(), ctfx::f32, {5, 3}), in[1]};
  auto b = plan.bind(std::vector<ctfx::tensor_desc>{in[0], in[1]});
  REQUIRE(b.status.ok);
  CHECK(b.outputs[0].size[0] == 5);
  CHECK(b.symbols[0] == 5);
  std::vector<tensor_ref> o = {tensor_ref::contiguous(out.data(), ctfx::f32, {5, 3})};
  std::vector<tensor_ref> o2 = {tensor_ref::contiguous(out2.data(), ctfx::f32, {5, 3})};
  REQUIRE(plan.run(in, o).ok);
  REQUIRE(ctfx::reference_run(g, in2, o2).ok);
  CHECK(x == x2);
  CHECK(out == out2);
  CHECK(x[2] == 4.0f);
  CHECK(out[2] == 3.0f);  // x + y reads x as it was before the epilogue
  // s0 = 5 from x, 4 from y: refused before anything is written.
  std::vector<float> y4(12, 2.0f);
  const auto xb = x;
  std::vector<tensor_ref> bad = {in[0], tensor_ref::contiguous(y4.data(), ctfx::f32, {4, 3})};
  auto st = plan.run(bad, o);
  CHECK(st.message.find("rule input-shape") != std::string::npos);
  CHECK(st.message.find("'y'") != std::string::npos);
  CHECK(x == xb);
}

TEST_CASE("exec: an in-place put whose indices the graph computes checks them, then writes (x[i - 3] = v)") {
  constexpr auto g = ctfx::graph([](ctfx::builder& gb) {
    auto x = gb.input("x", ctfx::f32, {10});
    auto i = gb.input("i", ctfx::i64, {2});
    auto v = gb.input("v", ctfx::f32, {2});
    gb.update(x, ctfx::index_put(x, {i - 3}, v));  // reinplaced: the put is the first write into x
  });
  for (int how = 0; how < 3; ++how) {
    std::vector<float> x(10, 0.0f), v{1.0f, 2.0f};
    std::vector<std::int64_t> i{5, 7};
    auto run = [&] {
      const std::vector<tensor_ref> in{tensor_ref::contiguous(x.data(), ctfx::f32, {10}), tensor_ref::contiguous(i.data(), ctfx::i64, {2}),
                                       tensor_ref::contiguous(v.data(), ctfx::f32, {2})};
      return how == 0 ? ctfx::compiled<decltype(g)>::run(in, {}) : how == 1 ? ctfx::runtime_plan(g.get()).run(in, {})
                                                                             : ctfx::reference_run(g.get(), in, {});
    };
    auto st = run();
    REQUIRE_MESSAGE(st.ok, st.message);
    CHECK(x == std::vector<float>{0, 0, 1, 0, 2, 0, 0, 0, 0, 0});
    // 14 - 3 = 11 is past the end: refused before x is written, naming the put and the rule.
    i = {4, 14};
    const auto before = x;
    st = run();
    REQUIRE_FALSE(st.ok);
    CHECK(st.message.find("rule index-in-range") != std::string::npos);
    CHECK(x == before);
  }
}

namespace {
// The bytes of caller buffers, to show that a failed run left them untouched.
template <class... V>
std::vector<unsigned char> bytes_of(const V&... v) {
  std::vector<unsigned char> b;
  auto add = [&](const auto& x) {
    const auto* p = reinterpret_cast<const unsigned char*>(x.data());
    b.insert(b.end(), p, p + x.size() * sizeof(x[0]));
  };
  (add(v), ...);
  return b;
}

// x[0] = y[0] (reinplaced: an early write into input x), then a put whose indices the graph computes.
constexpr auto computed_after_write = ctfx::graph([](ctfx::builder& gb) {
  auto x = gb.input("x", ctfx::f32, {4});
  auto y = gb.input("y", ctfx::f32, {4});
  auto i = gb.input("i", ctfx::i64, {2});
  gb.update(x, ctfx::slice_scatter(x, y.slice(0, 0, 1), 0, 0, 1));
  auto j = i + 1;  // computed indices
  gb.output(ctfx::index_put(y, {j}, y.slice(0, 0, 2)));
});
}  // namespace

TEST_CASE("exec: indices computed after an in-place write into an input are computed and checked before it") {
  // The pipeline's last pass computes j before x is written, and the executor checks j there.
  ctfx::runtime_plan plan(computed_after_write.get());
  REQUIRE_MESSAGE(plan.error().ok(), plan.error().message());
  using C = ctfx::compiled<decltype(computed_after_write)>;
  for (const ctfx::ir& g : {plan.graph(), C::graph()}) {
    std::int32_t add = -1, write = -1;
    for (std::int32_t n = 0; n < g.size(); ++n) {
      if (g[n].op == ctfx::op_kind::add) add = n;
      if (g[n].op == ctfx::op_kind::copy_) write = n;
    }
    REQUIRE(add >= 0);
    REQUIRE(write >= 0);
    CHECK(add < write);
  }
  // The listing shows that order: the add is step 0, the write into x step 1.
  const std::string text = ctfx::listing(plan.graph(), plan.life(), plan.memory_plan(), {.fused = &plan.fused()});
  CHECK(text.find("add(%i, 1)  # step 0") != std::string::npos);
  CHECK(text.find("copy_(") != std::string::npos);
  CHECK(text.find("add(%i, 1)") < text.find("copy_("));
  for (int how = 0; how < 2; ++how) {
    std::vector<float> x = {1, 2, 3, 4}, y = {5, 6, 7, 8}, out(4, -1.0f), xr = x, outr(4, -1.0f);
    std::vector<std::int64_t> i = {0, 2};
    auto refs = [](std::vector<float>& xv, std::vector<float>& yv, std::vector<std::int64_t>& iv) {
      return std::vector<tensor_ref>{tensor_ref::contiguous(xv.data(), ctfx::f32, {4}), tensor_ref::contiguous(yv.data(), ctfx::f32, {4}),
                                     tensor_ref::contiguous(iv.data(), ctfx::i64, {2})};
    };
    auto run = [&] {
      const std::vector<tensor_ref> o = {tensor_ref::contiguous(out.data(), ctfx::f32, {4})};
      return how == 0 ? C::run(refs(x, y, i), o) : plan.run(refs(x, y, i), o);
    };
    auto st = run();
    REQUIRE_MESSAGE(st.ok, st.message);
    std::vector<float> yr = y;
    REQUIRE(ctfx::reference_run(computed_after_write.get(), refs(xr, yr, i),
                                std::vector<tensor_ref>{tensor_ref::contiguous(outr.data(), ctfx::f32, {4})}).ok);
    CHECK(out == outr);
    CHECK(x == xr);
    CHECK(out == std::vector<float>{5, 5, 7, 6});
    CHECK(x == std::vector<float>{5, 2, 3, 4});
    // j = {1, 4}: 4 is past the end of y. The run fails naming the put, before x is written.
    i = {0, 3};
    x = {1, 2, 3, 4};
    std::fill(out.begin(), out.end(), -1.0f);
    const auto before = bytes_of(x, y, i, out);
    st = run();
    REQUIRE_FALSE(st.ok);
    CHECK(st.message.find("rule index-in-range") != std::string::npos);
    CHECK(st.message.find("'index_put'") != std::string::npos);
    CHECK(bytes_of(x, y, i, out) == before);
  }
}

TEST_CASE("exec: hoisting computed indices keeps a read of their storage before its in-place write") {
  // t = zeros; r = t * 2 (reads t); t[0] = i[0] (in place, after reinplacing); y[t]. Computing the
  // indices ahead of the write into x moves the write into t, and with it the read r must stay
  // before that write.
  constexpr auto g = ctfx::graph([](ctfx::builder& gb) {
    auto x = gb.input("x", ctfx::f32, {4});
    auto y = gb.input("y", ctfx::f32, {4});
    auto i = gb.input("i", ctfx::i64, {2});
    gb.update(x, ctfx::slice_scatter(x, y.slice(0, 0, 1), 0, 0, 1));
    auto t = gb.zeros({2}, ctfx::i64);
    auto r = t * 2;
    gb.output(r, ctfx::index(y, {ctfx::slice_scatter(t, i.slice(0, 0, 1), 0, 0, 1)}));
  });
  using C = ctfx::compiled<decltype(g)>;
  ctfx::runtime_plan plan(g.get());
  REQUIRE_MESSAGE(plan.error().ok(), plan.error().message());
  for (const ctfx::ir& pg : {plan.graph(), C::graph()}) {
    std::int32_t mul = -1, write_t = -1, write_x = -1;
    for (std::int32_t n = 0; n < pg.size(); ++n) {
      if (pg[n].op == ctfx::op_kind::mul) mul = n;
      if (pg[n].op == ctfx::op_kind::copy_) (pg.meta(n).dt == ctfx::i64 ? write_t : write_x) = n;
    }
    REQUIRE(mul >= 0);
    REQUIRE(write_t >= 0);  // reinplaced: t is written in place
    REQUIRE(write_x >= 0);
    CHECK(mul < write_t);
    CHECK(write_t < write_x);
  }
  for (int how = 0; how < 3; ++how) {
    std::vector<float> x = {1, 2, 3, 4}, y = {5, 6, 7, 8}, out(2, -1.0f);
    std::vector<std::int64_t> i = {3, 9}, r(2, -1);
    const std::vector<tensor_ref> in{tensor_ref::contiguous(x.data(), ctfx::f32, {4}), tensor_ref::contiguous(y.data(), ctfx::f32, {4}),
                                     tensor_ref::contiguous(i.data(), ctfx::i64, {2})};
    const std::vector<tensor_ref> o{tensor_ref::contiguous(r.data(), ctfx::i64, {2}), tensor_ref::contiguous(out.data(), ctfx::f32, {2})};
    auto st = how == 0 ? C::run(in, o) : how == 1 ? plan.run(in, o) : ctfx::reference_run(g.get(), in, o);
    REQUIRE_MESSAGE(st.ok, st.message);
    CHECK(r == std::vector<std::int64_t>{0, 0});
    CHECK(out == std::vector<float>{8, 5});  // t = {3, 0}
    CHECK(x == std::vector<float>{5, 2, 3, 4});
  }
}

TEST_CASE("exec: an index op that reads an input after its update still has its computed indices checked before it") {
  // x[0] = 2 * x[1] (in place), then out = x_new[i - 1]: the gather must come after the write, the
  // check of i - 1 before it.
  constexpr auto g = ctfx::graph([](ctfx::builder& gb) {
    auto x = gb.input("x", ctfx::f32, {4});
    auto i = gb.input("i", ctfx::i64, {2});
    auto nx = ctfx::slice_scatter(x, x.slice(0, 1, 2) * 2.0, 0, 0, 1);
    gb.update(x, nx);
    gb.output(ctfx::index(nx, {i - 1}));
  });
  for (int how = 0; how < 3; ++how) {
    std::vector<float> x = {1, 2, 3, 4}, out(2, -1.0f);
    std::vector<std::int64_t> i = {1, 4};
    auto run = [&] {
      const std::vector<tensor_ref> in{tensor_ref::contiguous(x.data(), ctfx::f32, {4}), tensor_ref::contiguous(i.data(), ctfx::i64, {2})};
      const std::vector<tensor_ref> o{tensor_ref::contiguous(out.data(), ctfx::f32, {2})};
      return how == 0 ? ctfx::compiled<decltype(g)>::run(in, o) : how == 1 ? ctfx::runtime_plan(g.get()).run(in, o)
                                                                           : ctfx::reference_run(g.get(), in, o);
    };
    auto st = run();
    REQUIRE_MESSAGE(st.ok, st.message);
    CHECK(x == std::vector<float>{4, 2, 3, 4});
    CHECK(out == std::vector<float>{4, 4});  // x_new[0], x_new[3]
    i = {1, 5};  // 5 - 1 = 4 is past the end
    x = {1, 2, 3, 4};
    const auto before = bytes_of(x, i, out);
    st = run();
    REQUIRE_FALSE(st.ok);
    CHECK(st.message.find("rule index-in-range") != std::string::npos);
    CHECK(bytes_of(x, i, out) == before);
  }
}

TEST_CASE("exec: indices computed from what an in-place write into an input wrote are refused at plan time") {
  // p[0] = p[1] + 1 (reinplaced: written into input p), then y[p_new]: the indices exist only after
  // the write into the caller's p, so they cannot be checked before it.
  auto g = ctfx::build_checked([](ctfx::builder& gb) {
    auto y = gb.input("y", ctfx::f32, {4});
    auto p = gb.input("p", ctfx::i64, {2});
    auto np = ctfx::slice_scatter(p, p.slice(0, 1, 2) + 1, 0, 0, 1);
    gb.update(p, np);
    gb.output(ctfx::index(y, {np}));
  });
  ctfx::runtime_plan plan(g);
  REQUIRE_FALSE(plan.error().ok());
  const std::string m(plan.error().message());
  CHECK(m.find("rule validate-before-mutate") != std::string::npos);
  CHECK(m.find("'index'") != std::string::npos);             // the node
  CHECK(m.find("'copy_'") != std::string::npos);             // the write it depends on
  CHECK(m.find("input 1 ('p')") != std::string::npos);       // into which caller buffer
  CHECK(m.find("pass the indices as an input") != std::string::npos);  // the fix
  // The reference, which writes inputs only in its epilogue, runs it and checks the indices.
  std::vector<float> y = {5, 6, 7, 8}, out(2);
  std::vector<std::int64_t> p = {0, 3};
  std::vector<tensor_ref> in = {tensor_ref::contiguous(y.data(), ctfx::f32, {4}), tensor_ref::contiguous(p.data(), ctfx::i64, {2})};
  std::vector<tensor_ref> o = {tensor_ref::contiguous(out.data(), ctfx::f32, {2})};
  auto st = ctfx::reference_run(g, in, o);
  CHECK(st.message.find("rule index-in-range") != std::string::npos);
  CHECK(p == std::vector<std::int64_t>{0, 3});
  p = {0, 2};
  REQUIRE(ctfx::reference_run(g, in, o).ok);
  CHECK(p == std::vector<std::int64_t>{3, 2});
  CHECK(out == std::vector<float>{8, 7});
}

TEST_CASE("exec: the lifecycle checker catches a planted plan violation") {
  // a = x + 1; b = a * 2; c = b - 3; out = a + c. A plan that gives c the memory of a while a is
  // still to be read is wrong; with check_lifetimes the run refuses it at the first bad access.
  auto g = ctfx::build_checked([](ctfx::builder& gb) {
    auto x = gb.input("x", ctfx::f32, {8});
    auto a = x + 1.0;
    auto b2 = a * 2.0;
    auto c = b2 - 3.0;
    gb.output(a + c);
  });
  ctfx::program honest(g, ctfx::program_options{true, true, false, nullptr});
  const auto& L = honest.life();
  REQUIRE(L.buffers.size() == 4);
  ctfx::reuse_plan bad;
  for (std::int32_t b = 0; b < 4; ++b) bad.lines.push_back({ctfx::line_kind::allocate, b, -1, L.buffers[static_cast<std::size_t>(b)].begin});
  bad.lines[2] = {ctfx::line_kind::reuse, 2, 0, L.buffers[2].begin};  // c takes a's memory: a is live
  ctfx::program planted(g, ctfx::program_options{true, true, false, &bad});
  std::vector<float> x(8, 1.0f), out(8);
  std::vector<tensor_ref> in = {tensor_ref::contiguous(x.data(), ctfx::f32, {8})};
  std::vector<tensor_ref> o = {tensor_ref::contiguous(out.data(), ctfx::f32, {8})};
  CHECK(honest.run(in, o, {}, {}).ok);
  CHECK(out[0] == 2.0f + 1.0f);
  auto st = planted.run(in, o, {}, {});
  CHECK_FALSE(st.ok);
  CHECK(st.message.find("rule lifetime") != std::string::npos);
  CHECK(st.message.find("'add'") != std::string::npos);
}
