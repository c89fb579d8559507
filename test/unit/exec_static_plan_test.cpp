// compiled<G>'s static plan (exec/static_plan.hpp, exec/static_run.hpp): which graphs get one, what
// it holds, and that running it is running the program — the reference's bytes, the program's
// binding, and the program's refusals word for word, before any write (across ranks too).
#include <doctest/doctest.h>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace {

// A 5-point stencil of a ghosted grid: one group, its result computed in the caller's buffer.
constexpr auto stencil = ctfx::graph([](ctfx::builder& b) {
  auto u = b.input("u", ctfx::f32, {8, 8});
  auto c = u.slice(0, 1, 7).slice(1, 1, 7);
  auto n = u.slice(0, 0, 6).slice(1, 1, 7);
  auto s = u.slice(0, 2, 8).slice(1, 1, 7);
  auto w = u.slice(0, 1, 7).slice(1, 0, 6);
  auto e = u.slice(0, 1, 7).slice(1, 2, 8);
  b.output((n + s + w + e - c * 4.0f) * 0.25f);
});
using stencil_plan = ctfx::compiled<decltype(stencil)>;
// An input updated in place (its buffer is then refused as an alias), and a fresh output.
constexpr auto update = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 8});
  auto y = b.input("y", ctfx::f32, {4, 8});
  b.update(x, x * 2.0f + y);
  b.output(ctfx::exp(y));
});
using update_plan = ctfx::compiled<decltype(update)>;
// exp(x) read in two layouts: a buffer in the workspace (its last reader reads it transposed too,
// so no output takes its memory).
constexpr auto with_slot = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 4});
  auto e = ctfx::exp(x);
  b.output(e * 2.0f, e + e.transpose(0, 1));
});
using with_slot_plan = ctfx::compiled<decltype(with_slot)>;
// An output that is a view of a buffer: computed in the workspace, copied out at the end.
constexpr auto view_out = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 8});
  b.output(ctfx::exp(x).slice(1, 2, 6));
});
using view_out_plan = ctfx::compiled<decltype(view_out)>;

// Reductions (softmax's, and a mean over nothing: NaN), a cat and a fill: kernels compiled<G>
// calls itself.
constexpr auto reduce_cat_fill = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 8});
  auto none = b.input("none", ctfx::f32, {4, 0});
  auto e = ctfx::exp(x - x.amax({1}, true));
  b.output(e / e.sum({1}, true), ctfx::cat({x.mean({1}, true), none.mean({1}, true), b.full({4, 1}, 2.5)}, 1));
});
using reduce_cat_fill_plan = ctfx::compiled<decltype(reduce_cat_fill)>;

// Index ops, their indices the caller's: a ring buffer's row put and its window sum; a KV-cache
// row put (f16); RoPE computed straight into the cache's row (results laid out in the put's row,
// moved there on each run); a gather; a functional put with broadcast indices; a 1-D scatter-add
// (an in-place put that checks its indices as it writes); a put and a gather both checked.
constexpr auto ring = ctfx::graph([](ctfx::builder& b) {
  auto buf = b.input("buf", ctfx::f32, {6, 8});
  auto row = b.input("row", ctfx::f32, {1, 8});
  auto pos = b.input("pos", ctfx::i64, {1});
  auto nb = ctfx::index_put(buf, {pos}, row);
  b.update(buf, nb);
  b.output(nb.sum({0}));
});
constexpr auto kv = ctfx::graph([](ctfx::builder& b) {
  auto cache = b.input("cache", ctfx::f16, {2, 3, 5, 4});
  auto k = b.input("k", ctfx::f16, {2, 3, 1, 4});
  auto pos = b.input("pos", ctfx::i64, {1});
  b.update(cache, ctfx::index_put(cache, {ctfx::none, ctfx::none, pos}, k));
});
constexpr auto rope = ctfx::graph([](ctfx::builder& b) {
  auto cache = b.input("cache", ctfx::f32, {2, 2, 6, 8});
  auto k = b.input("k", ctfx::f32, {2, 2, 1, 8});
  auto cs = b.input("cos", ctfx::f32, {4});
  auto sn = b.input("sin", ctfx::f32, {4});
  auto pos = b.input("pos", ctfx::i64, {1});
  auto k1 = k.slice(3, 0, 4), k2 = k.slice(3, 4, 8);
  auto rot = ctfx::cat({k1 * cs - k2 * sn, k2 * cs + k1 * sn}, 3);
  b.update(cache, ctfx::index_put(cache, {ctfx::none, ctfx::none, pos}, rot));
});
constexpr auto gather = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {6, 4});
  auto idx = b.input("idx", ctfx::i64, {5});
  b.output(ctfx::index(x, {idx}) * 2.0f);
});
constexpr auto put_broadcast = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {6, 4});
  auto i = b.input("i", ctfx::i64, {3, 1});
  auto j = b.input("j", ctfx::i32, {1, 2});
  auto v = b.input("v", ctfx::f32, {3, 2});
  b.output(ctfx::index_put(x, {i, j}, v));
});
constexpr auto scatter_add = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {16});
  auto idx = b.input("idx", ctfx::i64, {10});
  auto v = b.input("v", ctfx::f32, {10});
  b.update(x, ctfx::index_put(x, {idx}, v, true));
});
constexpr auto put_and_gather = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {16});
  auto idx = b.input("idx", ctfx::i64, {10});
  auto v = b.input("v", ctfx::f32, {10});
  auto y = b.input("y", ctfx::f32, {8, 2});
  auto j = b.input("j", ctfx::i64, {3});
  b.update(x, ctfx::index_put(x, {idx}, v, true));
  b.output(ctfx::index(y, {j}));
});
// Scatters the pipeline keeps (their bases are read afterwards): each a typed copy of its base,
// then of its source into the view it writes; one nested in another's source.
constexpr auto scatters = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {6, 8});
  auto v = b.input("v", ctfx::f32, {2, 8});
  auto w = b.input("w", ctfx::f32, {6});
  auto u = b.input("u", ctfx::f32, {2});
  auto y = ctfx::slice_scatter(x, v, 0, 1, 3);
  auto z = ctfx::select_scatter(y, w, 1, 2);
  auto n = ctfx::slice_scatter(x, ctfx::select_scatter(x.slice(0, 3, 5), u, 1, 7), 0, 3, 5);
  b.output(z * 2.0f, x + y, n - x);
});
using scatters_plan = ctfx::compiled<decltype(scatters)>;
// Gathers straight into the caller's outputs: indices on dimensions 0 and 2 (apart: the broadcast
// block first) and on 1 and 2 (adjacent: the block in place).
constexpr auto gathers = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {5, 4, 3});
  auto i = b.input("i", ctfx::i64, {2});
  auto j = b.input("j", ctfx::i64, {2});
  b.output(ctfx::index(x, {i, ctfx::none, j}), ctfx::index(x, {ctfx::none, i, j}));
});
using gathers_plan = ctfx::compiled<decltype(gathers)>;
using ring_plan = ctfx::compiled<decltype(ring)>;
using kv_plan = ctfx::compiled<decltype(kv)>;
using rope_plan = ctfx::compiled<decltype(rope)>;
using gather_plan = ctfx::compiled<decltype(gather)>;
using put_broadcast_plan = ctfx::compiled<decltype(put_broadcast)>;
using scatter_add_plan = ctfx::compiled<decltype(scatter_add)>;
using put_and_gather_plan = ctfx::compiled<decltype(put_and_gather)>;

// Indices computed in the graph, checked during the run where the program checks them: a paged
// cache's row put at the slot a table gives (checked at the put, the first write into a caller's
// buffer); a put after an in-place write into input x, its indices i + 1 computed and checked
// ahead of that write; and indices computed from what that write wrote (refused by the program).
constexpr auto computed_index = ctfx::graph([](ctfx::builder& b) {
  auto cache = b.input("cache", ctfx::f32, {6, 8});
  auto row = b.input("row", ctfx::f32, {1, 8});
  auto slots = b.input("slots", ctfx::i64, {4});
  auto pos = b.input("pos", ctfx::i64, {1});
  b.update(cache, ctfx::index_put(cache, {ctfx::index(slots, {pos})}, row));
});
constexpr auto hoisted_index = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4});
  auto y = b.input("y", ctfx::f32, {4});
  auto i = b.input("i", ctfx::i64, {2});
  b.update(x, ctfx::slice_scatter(x, y.slice(0, 0, 1), 0, 0, 1));
  b.output(ctfx::index_put(y, {i + 1}, y.slice(0, 0, 2)));
});
constexpr auto late_index = ctfx::graph([](ctfx::builder& b) {
  auto y = b.input("y", ctfx::f32, {4});
  auto p = b.input("p", ctfx::i64, {2});
  auto np = ctfx::slice_scatter(p, p.slice(0, 1, 2) + 1, 0, 0, 1);
  b.update(p, np);
  b.output(ctfx::index(y, {np}));
});
using computed_index_plan = ctfx::compiled<decltype(computed_index)>;
using hoisted_index_plan = ctfx::compiled<decltype(hoisted_index)>;
using late_index_plan = ctfx::compiled<decltype(late_index)>;

// Bool-mask puts: the caller's mask into a fresh output (a masked fill: the pipeline makes it a
// where, passes/masked_puts_as_where.hpp); a mask computed in the graph over x's last two
// dimensions, added in place, its values broadcast over the first; a mask over whole rows.
constexpr auto masked = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {6});
  auto m = b.input("m", ctfx::b8, {6});
  auto v = b.input("v", ctfx::f32, {1});
  b.output(ctfx::index_put(x, {m}, v));
});
constexpr auto masked_add = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f16, {3, 4, 5});
  auto w = b.input("w", ctfx::f32, {4, 5});
  auto v = b.input("v", ctfx::f16, {3, 1});
  b.update(x, ctfx::index_put(x, {ctfx::none, ctfx::gt(w, 0.0)}, v, true));
});
constexpr auto masked_rows = ctfx::graph([](ctfx::builder& b) {  // whole rows: the mask's stride 0 along them
  auto x = b.input("x", ctfx::f32, {5, 4});
  auto m = b.input("m", ctfx::b8, {5});
  auto v = b.input("v", ctfx::f32, {4});
  b.output(ctfx::index_put(x, {m}, v));
});
using masked_plan = ctfx::compiled<decltype(masked)>;
using masked_rows_plan = ctfx::compiled<decltype(masked_rows)>;
using masked_add_plan = ctfx::compiled<decltype(masked_add)>;

// Left to the run-time program: a symbol that no input's extent is on its own (2n).
constexpr auto symbolic = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {b.sym("n") * 2, 8});
  b.output(x * 2.0f);
});

#if !defined(__CUDACC__)  // (nvcc plans the arena at run time: no static plan)
static_assert(stencil_plan::run_plan.usable && update_plan::run_plan.usable && with_slot_plan::run_plan.usable &&
              view_out_plan::run_plan.usable && reduce_cat_fill_plan::run_plan.usable);
static_assert(ring_plan::run_plan.usable && kv_plan::run_plan.usable && rope_plan::run_plan.usable && gather_plan::run_plan.usable &&
              put_broadcast_plan::run_plan.usable && scatter_add_plan::run_plan.usable && put_and_gather_plan::run_plan.usable &&
              scatters_plan::run_plan.usable && gathers_plan::run_plan.usable && computed_index_plan::run_plan.usable &&
              hoisted_index_plan::run_plan.usable && masked_plan::run_plan.usable && masked_add_plan::run_plan.usable &&
              masked_rows_plan::run_plan.usable);
#endif
static_assert(!ctfx::compiled<decltype(symbolic)>::run_plan.usable);
static_assert(!late_index_plan::run_plan.usable);

std::vector<float> ramp(std::size_t n, float scale) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int>(i * 7 % 23) - 11) * scale;
  return v;
}

bool same(const ctfx::run_status& a, const ctfx::run_status& b) { return a.ok == b.ok && a.node == b.node && a.message == b.message; }

}  // namespace

TEST_CASE("static plan: which graphs get one, and what it holds") {
  CHECK(std::string(ctfx::compiled<decltype(symbolic)>::run_plan.why).find("a symbol that no input's extent is") != std::string::npos);
  CHECK(std::string(late_index_plan::run_plan.why).find("indices are computed after a write into a caller's buffer") != std::string::npos);
#if !defined(__CUDACC__)
  // The stencil: its input, its output computed in the caller's buffer, one kernel, no buffers
  // (the workspace is the scratch every plan reserves).
  CHECK(ctfx::to_text(stencil_plan::run_plan.ref(), stencil_plan::graph()) ==
        "input 0: u\n"
        "output 0: mul_1 [6, 6]\n"
        "storage 0: input 0\n"
        "storage 6: output 0\n"
        "step: mul_1\n"
        "workspace: 256 bytes\n");
  // The update writes x (a copy_ with the arithmetic fused into it); exp(y) goes to the caller.
  const auto& u = update_plan::run_plan;
  REQUIRE(u.n_inputs == 2);
  CHECK(u.input_written[0]);
  CHECK_FALSE(u.input_written[1]);
  CHECK(u.n_steps == 2);
  // exp(x) lives in the workspace at offset 0; both results in the caller's buffers.
  const std::string slot_text = ctfx::to_text(with_slot_plan::run_plan.ref(), with_slot_plan::graph());
  CHECK(slot_text.find("workspace +0") != std::string::npos);
  CHECK(slot_text.find("storage 2: output 0\nstorage 3: output 1\n") != std::string::npos);
  CHECK(with_slot_plan::run_plan.workspace_bytes == 256 + 256);
#endif
}

template <class Plan>
void check_binding(const std::vector<ctfx::tensor_desc>& d) {
  const ctfx::binding a = Plan::bind(d), b = Plan::prog().bind(d);
  REQUIRE(a.status.ok);
  REQUIRE(b.status.ok);
  CHECK(a.workspace_bytes == b.workspace_bytes);
  REQUIRE(a.outputs.size() == b.outputs.size());
  for (std::size_t j = 0; j < a.outputs.size(); ++j) CHECK(a.outputs[j] == b.outputs[j]);
  std::vector<std::int32_t> written;
  for (std::size_t k = 0; k < Plan::run_plan.n_inputs; ++k)
    if (Plan::run_plan.input_written[k]) written.push_back(static_cast<std::int32_t>(k));
  CHECK(written == Plan::prog().mutated_inputs());
}

TEST_CASE("static plan: its binding is the program's") {
  const auto f = [](std::initializer_list<ctfx::index_t> s) { return ctfx::tensor_desc::contiguous(ctfx::f32, s); };
  const auto i64 = [](std::initializer_list<ctfx::index_t> s) { return ctfx::tensor_desc::contiguous(ctfx::i64, s); };
  const auto f16 = [](std::initializer_list<ctfx::index_t> s) { return ctfx::tensor_desc::contiguous(ctfx::f16, s); };
  check_binding<ring_plan>({f({6, 8}), f({1, 8}), i64({1})});
  check_binding<kv_plan>({f16({2, 3, 5, 4}), f16({2, 3, 1, 4}), i64({1})});
  check_binding<rope_plan>({f({2, 2, 6, 8}), f({2, 2, 1, 8}), f({4}), f({4}), i64({1})});
  check_binding<gather_plan>({f({6, 4}), i64({5})});
  check_binding<put_broadcast_plan>({f({6, 4}), i64({3, 1}), ctfx::tensor_desc::contiguous(ctfx::i32, {1, 2}), f({3, 2})});
  check_binding<scatter_add_plan>({f({16}), i64({10}), f({10})});
  check_binding<put_and_gather_plan>({f({16}), i64({10}), f({10}), f({8, 2}), i64({3})});
  check_binding<scatters_plan>({f({6, 8}), f({2, 8}), f({6}), f({2})});
  check_binding<gathers_plan>({f({5, 4, 3}), i64({2}), i64({2})});
  check_binding<stencil_plan>({f({8, 8})});
  check_binding<update_plan>({f({4, 8}), f({4, 8})});
  check_binding<with_slot_plan>({f({4, 4})});
  check_binding<view_out_plan>({f({4, 8})});
  check_binding<reduce_cat_fill_plan>({f({4, 8}), f({4, 0})});
}

TEST_CASE("static plan: the reference's bytes, in dense and strided output buffers") {
  // The stencil into a dense buffer and into every other column of a wider one.
  const auto u = ramp(64, 0.5f);
  std::vector<float> dense(36), wide(72, -7.0f), want(36);
  const auto in = ctfx::tensor_ref::contiguous(const_cast<float*>(u.data()), ctfx::f32, {8, 8});
  REQUIRE(ctfx::reference_run(stencil.get(), {in}, {ctfx::tensor_ref::contiguous(want.data(), ctfx::f32, {6, 6})}).ok);
  REQUIRE(stencil_plan::run({in}, {ctfx::tensor_ref::contiguous(dense.data(), ctfx::f32, {6, 6})}).ok);
  CHECK(std::memcmp(dense.data(), want.data(), 36 * 4) == 0);
  ctfx::tensor_ref strided(wide.data(), ctfx::tensor_desc::contiguous(ctfx::f32, {6, 6}));
  strided.stride[0] = 12;
  strided.stride[1] = 2;
  REQUIRE(stencil_plan::run({in}, {strided}).ok);
  for (std::size_t i = 0; i < 6; ++i)
    for (std::size_t j = 0; j < 6; ++j) {
      CHECK(wide[i * 12 + j * 2] == want[i * 6 + j]);
      CHECK(wide[i * 12 + j * 2 + 1] == -7.0f);  // untouched between
    }

  // The update: x written in place, exp(y) out; as the reference does to its copies.
  auto x = ramp(32, 0.25f), y = ramp(32, -0.125f), rx = x, ry = y;
  std::vector<float> e(32), re(32);
  auto run = [](auto&& runner, std::vector<float>& xs, std::vector<float>& ys, std::vector<float>& es) {
    return runner({ctfx::tensor_ref::contiguous(xs.data(), ctfx::f32, {4, 8}), ctfx::tensor_ref::contiguous(ys.data(), ctfx::f32, {4, 8})},
                  {ctfx::tensor_ref::contiguous(es.data(), ctfx::f32, {4, 8})});
  };
  REQUIRE(run([](ctfx::tensor_refs i, ctfx::tensor_refs o) { return update_plan::run(i, o); }, x, y, e).ok);
  REQUIRE(run([](ctfx::tensor_refs i, ctfx::tensor_refs o) { return ctfx::reference_run(update.get(), i, o); }, rx, ry, re).ok);
  CHECK(std::memcmp(x.data(), rx.data(), 128) == 0);
  CHECK(std::memcmp(y.data(), ry.data(), 128) == 0);
  CHECK(std::memcmp(e.data(), re.data(), 128) == 0);
  CHECK(x[1] != ramp(32, 0.25f)[1]);

  // A buffer in the workspace (the caller's, then the run's own); an output copied out of it.
  const auto xs = ramp(16, 0.75f);
  const auto x4 = ctfx::tensor_ref::contiguous(const_cast<float*>(xs.data()), ctfx::f32, {4, 4});
  std::vector<float> a(16), b(16), ra(16), rb(16);
  std::vector<std::byte> ws(with_slot_plan::bind({x4}).workspace_bytes);
  const std::vector<ctfx::tensor_ref> outs{ctfx::tensor_ref::contiguous(a.data(), ctfx::f32, {4, 4}),
                                           ctfx::tensor_ref::contiguous(b.data(), ctfx::f32, {4, 4})};
  REQUIRE(ctfx::reference_run(with_slot.get(), {x4}, {ctfx::tensor_ref::contiguous(ra.data(), ctfx::f32, {4, 4}),
                                                       ctfx::tensor_ref::contiguous(rb.data(), ctfx::f32, {4, 4})}).ok);
  for (int own = 0; own < 2; ++own) {
    std::fill(a.begin(), a.end(), 0.0f);
    std::fill(b.begin(), b.end(), 0.0f);
    REQUIRE(with_slot_plan::run({x4}, outs, {}, own ? std::span<std::byte>{} : std::span<std::byte>(ws)).ok);
    CHECK(std::memcmp(a.data(), ra.data(), 64) == 0);
    CHECK(std::memcmp(b.data(), rb.data(), 64) == 0);
  }
  std::vector<float> v(16), rv(16);
  const std::vector<float> x8v = ramp(32, 0.1f);
  const auto x8r = ctfx::tensor_ref::contiguous(const_cast<float*>(x8v.data()), ctfx::f32, {4, 8});
  REQUIRE(view_out_plan::run({x8r}, {ctfx::tensor_ref::contiguous(v.data(), ctfx::f32, {4, 4})}).ok);
  REQUIRE(ctfx::reference_run(view_out.get(), {x8r}, {ctfx::tensor_ref::contiguous(rv.data(), ctfx::f32, {4, 4})}).ok);
  CHECK(std::memcmp(v.data(), rv.data(), 64) == 0);

  // Softmax's reductions, a cat of a mean, a mean of nothing (NaN) and a fill.
  std::vector<float> sm(32), cm(12), rsm(32), rcm(12);
  const std::vector<ctfx::tensor_ref> rin{x8r, ctfx::tensor_ref(nullptr, ctfx::tensor_desc::contiguous(ctfx::f32, {4, 0}))};
  REQUIRE(reduce_cat_fill_plan::run(rin, {ctfx::tensor_ref::contiguous(sm.data(), ctfx::f32, {4, 8}),
                                          ctfx::tensor_ref::contiguous(cm.data(), ctfx::f32, {4, 3})}).ok);
  REQUIRE(ctfx::reference_run(reduce_cat_fill.get(), rin, {ctfx::tensor_ref::contiguous(rsm.data(), ctfx::f32, {4, 8}),
                                                            ctfx::tensor_ref::contiguous(rcm.data(), ctfx::f32, {4, 3})}).ok);
  CHECK(std::memcmp(sm.data(), rsm.data(), 128) == 0);
  CHECK(std::memcmp(cm.data(), rcm.data(), 48) == 0);
  CHECK(std::isnan(cm[1]));
  CHECK(cm[2] == 2.5f);
}

TEST_CASE("static plan: every refusal is the program's, word for word, and nothing is written") {
  auto x = ramp(32, 0.25f), y = ramp(32, -0.5f);
  std::vector<float> e(32, 3.0f);
  const auto x0 = x, y0 = y, e0 = e;
  const auto d48 = ctfx::tensor_desc::contiguous(ctfx::f32, {4, 8});
  const ctfx::tensor_ref X(x.data(), d48), Y(y.data(), d48), E(e.data(), d48);
  ctfx::tensor_ref transposed = X, short_y(y.data(), ctfx::tensor_desc::contiguous(ctfx::f32, {3, 8})),
                   f64_y(y.data(), ctfx::tensor_desc::contiguous(ctfx::f64, {4, 8})), rank1(y.data(), ctfx::tensor_desc::contiguous(ctfx::f32, {32})),
                   no_data(nullptr, d48), aliased_out(x.data() + 8, d48), small_e(e.data(), ctfx::tensor_desc::contiguous(ctfx::f32, {4, 4}));
  transposed.stride[0] = 1;
  transposed.stride[1] = 4;
  std::vector<std::byte> tiny(8);
  struct call {
    std::vector<ctfx::tensor_ref> in, out;
    std::span<std::byte> ws{};
    const char* rule = "";
  };
  const std::vector<call> calls{
      {{X}, {E}, {}, "rule input-count"},
      {{X, f64_y}, {E}, {}, "rule input-dtype"},
      {{X, rank1}, {E}, {}, "rule input-rank"},
      {{X, short_y}, {E}, {}, "rule input-shape"},
      {{transposed, Y}, {E}, {}, "rule input-strides"},
      {{X, Y}, {}, {}, "rule output-count"},
      {{X, Y}, {ctfx::tensor_ref(e.data(), ctfx::tensor_desc::contiguous(ctfx::i32, {4, 8}))}, {}, "rule output-dtype"},
      {{X, Y}, {small_e}, {}, "rule output-shape"},
      {{X, Y}, {no_data}, {}, "rule output-buffer"},
      {{no_data, Y}, {E}, {}, "rule input-buffer"},
      {{X, Y}, {aliased_out}, {}, "rule no-caller-aliasing: input 0 ('x') and output 0 overlap"},
      {{X, Y}, {E}, std::span<std::byte>(tiny), "rule workspace-size"},
      {{X, Y}, {E}, {}, "rule backend"},
  };
  for (std::size_t c = 0; c < calls.size(); ++c) {
    CAPTURE(c);
    ctfx::device_ctx ctx;
    if (c + 1 == calls.size()) ctx.where = ctfx::backend::cuda;
    const auto a = update_plan::run(calls[c].in, calls[c].out, ctx, calls[c].ws);
    const auto b = update_plan::prog().run(calls[c].in, calls[c].out, ctx, calls[c].ws);
    CHECK_FALSE(a.ok);
    CHECK(a.message.find(calls[c].rule) != std::string::npos);
    CHECK_MESSAGE(same(a, b), a.message, " | ", b.message);
    CHECK(x == x0);
    CHECK(y == y0);
    CHECK(e == e0);
  }
}

namespace {
// Rank 0 of two whose other rank failed its checks: what a run asked of it, in order ('a': an
// agreement).
struct failing_peer final : ctfx::communicator {
  std::string events;
  int rank() const override { return 0; }
  int size() const override { return 2; }
  const char* engine() const override { return "fake"; }
  bool supports(ctfx::dtype, ctfx::reduce_op) const override { return true; }
  std::string all_reduce(const void*, void*, std::size_t, ctfx::dtype, ctfx::reduce_op) override { return "unused"; }
  std::string broadcast(void*, std::size_t, ctfx::dtype, int) override { return "unused"; }
  std::string all_gather(const void*, void*, std::size_t, ctfx::dtype) override { return "unused"; }
  std::string reduce_scatter(const void*, void*, std::size_t, ctfx::dtype, ctfx::reduce_op) override { return "unused"; }
  std::string sendrecv(const void*, std::size_t, int, void*, std::size_t, int) override { return "unused"; }
  int agree(bool ok, std::span<std::uint64_t>) override {
    events += ok ? 'a' : 'f';
    return 1;
  }
  void share(std::string& text, std::int32_t& node, int) override {
    text = "rule input-shape: its input";
    node = 0;
  }
};
}  // namespace

TEST_CASE("static plan: across ranks, a peer's failure is every rank's, before any write") {
  auto x = ramp(32, 0.25f), y = ramp(32, -0.5f);
  std::vector<float> e(32, 3.0f);
  const auto x0 = x, e0 = e;
  const auto d48 = ctfx::tensor_desc::contiguous(ctfx::f32, {4, 8});
  failing_peer w;
  const ctfx::device_ctx ctx{ctfx::backend::host, nullptr, &w};
  const auto st = update_plan::run({ctfx::tensor_ref(x.data(), d48), ctfx::tensor_ref(y.data(), d48)}, {ctfx::tensor_ref(e.data(), d48)}, ctx);
  CHECK_FALSE(st.ok);
  CHECK(st.message == "rank 1 of 2: rule input-shape: its input");
  CHECK(w.events == "a");  // this rank passed, and agreed once
  CHECK(x == x0);
  CHECK(e == e0);
}

namespace {
// A caller's buffer: its bytes and shape.
struct buffer {
  std::vector<std::byte> bytes;
  ctfx::tensor_desc d;
};
template <class T>
buffer make_buffer(const std::vector<T>& v, ctfx::dtype dt, std::initializer_list<ctfx::index_t> shape) {
  buffer b{std::vector<std::byte>(v.size() * sizeof(T)), ctfx::tensor_desc::contiguous(dt, shape)};
  std::memcpy(b.bytes.data(), v.data(), b.bytes.size());
  return b;
}
std::vector<ctfx::tensor_ref> refs(std::vector<buffer>& v) {
  std::vector<ctfx::tensor_ref> r;
  for (auto& b : v) r.emplace_back(b.bytes.data(), b.d);
  return r;
}
bool same_bytes(const std::vector<buffer>& a, const std::vector<buffer>& b) {
  for (std::size_t k = 0; k < a.size(); ++k)
    if (a[k].bytes != b[k].bytes) return false;
  return true;
}

// Plan's static run, the run-time program's (the same grouping, every kernel family, lifetimes
// checked) and the reference, each on its own copy of the buffers:
// the same status (word for word); when it ran, the same bytes in every input and output; when it
// was refused, not a byte changed. Returns the static run's status.
template <class Plan>
ctfx::run_status three_ways(const ctfx::ir& source, const std::vector<buffer>& in, const std::vector<buffer>& out) {
  auto in_s = in, out_s = out, in_p = in, out_p = out, in_r = in, out_r = out;
  const ctfx::run_status a = Plan::run(refs(in_s), refs(out_s));
  const auto ri = refs(in_p), ro = refs(out_p);
  const ctfx::program full(Plan::graph(), {true, true, false, nullptr, true, true, Plan::fused_roots.data(), Plan::fused_into.data()});
  const ctfx::run_status b = full.run(ri, ro, ctfx::device_ctx{}, {});
  CHECK_MESSAGE(same(a, b), a.message, " | ", b.message);
  if (!a.ok) {
    CHECK(same_bytes(in_s, in));
    CHECK(same_bytes(out_s, out));
    return a;
  }
  REQUIRE(ctfx::reference_run(source, refs(in_r), refs(out_r)).ok);
  CHECK(same_bytes(in_s, in_r));
  CHECK(same_bytes(out_s, out_r));
  CHECK(same_bytes(in_p, in_r));
  CHECK(same_bytes(out_p, out_r));
  return a;
}
std::vector<std::int64_t> one(std::int64_t v) { return {v}; }
}  // namespace

TEST_CASE("static plan: index ops, their indices checked before the first step") {
#if !defined(__CUDACC__)
  // The ring's put and the KV cache's are typed steps; RoPE's halves are computed in the cache's
  // row (two results moved to the row on each run, the put itself writes nothing).
  CHECK(ring_plan::run_plan.n_index_steps == 1);
  CHECK(ring_plan::run_plan.n_rows == 0);
  CHECK(rope_plan::run_plan.n_rows == 3);
  CHECK(rope_plan::run_plan.index_steps[0].in_row);
  CHECK(scatter_add_plan::run_plan.index_steps[0].checked_in_put);
  CHECK_FALSE(ring_plan::run_plan.index_steps[0].checked_in_put);  // a 2-D put: checked in validation
  CHECK(ctfx::to_text(rope_plan::run_plan.ref(), rope_plan::graph()) ==
        "input 0: cache (written)\ninput 1: k\ninput 2: cos\ninput 3: sin\ninput 4: pos\n"
        "storage 0: input 0\nstorage 1: input 1\nstorage 2: input 2\nstorage 3: input 3\nstorage 4: input 4\n"
        "step: sub\nstep: add\nstep: cat\nstep: index_put\n"
        "index: index_put (indices: pos; its values computed in its row)\n"
        "row: sub in the row of index 'pos'\nrow: add in the row of index 'pos'\nrow: cat in the row of index 'pos'\n"
        "workspace: 256 bytes\n");
  CHECK(ctfx::to_text(scatter_add_plan::run_plan.ref(), scatter_add_plan::graph()).find("index: index_put (indices: idx; checked as it writes)") !=
        std::string::npos);
#endif
  const auto f32s = [](std::size_t n, float scale) { return ramp(n, scale); };
  for (const std::int64_t pos : {0, 3, 5, -1, -6, 6, -7, 1 << 20}) {
    CAPTURE(pos);
    const bool in_range = pos >= -6 && pos < 6;
    const auto st = three_ways<ring_plan>(ring.get(), {make_buffer(f32s(48, 0.5f), ctfx::f32, {6, 8}), make_buffer(f32s(8, -2.0f), ctfx::f32, {1, 8}),
                                                       make_buffer(one(pos), ctfx::i64, {1})},
                                          {make_buffer(std::vector<float>(8, 9.0f), ctfx::f32, {8})});
    CHECK(st.ok == in_range);
    if (!in_range) CHECK(st.message == "rule index-in-range: node 'index_put': index " + std::to_string(pos) + " (from 'pos') is out of range for dimension 0 of size 6");
    std::vector<std::uint16_t> cache(2 * 3 * 5 * 4), k(2 * 3 * 4);
    for (std::size_t i = 0; i < cache.size(); ++i) cache[i] = static_cast<std::uint16_t>(0x3c00 + i);
    for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<std::uint16_t>(0xbc00 + 3 * i);
    CHECK(three_ways<kv_plan>(kv.get(), {make_buffer(cache, ctfx::f16, {2, 3, 5, 4}), make_buffer(k, ctfx::f16, {2, 3, 1, 4}), make_buffer(one(pos), ctfx::i64, {1})},
                              {}).ok == (pos >= -5 && pos < 5));
    CHECK(three_ways<rope_plan>(rope.get(), {make_buffer(f32s(192, 0.25f), ctfx::f32, {2, 2, 6, 8}), make_buffer(f32s(32, 1.5f), ctfx::f32, {2, 2, 1, 8}),
                                             make_buffer(f32s(4, 0.125f), ctfx::f32, {4}), make_buffer(f32s(4, -0.375f), ctfx::f32, {4}),
                                             make_buffer(one(pos), ctfx::i64, {1})},
                                {}).ok == in_range);
  }
  // Gathers into the caller's outputs, their indices apart and adjacent (j = 3 is out of range for
  // dimension 2 only).
  for (const std::int64_t j1 : {2, -1, 3}) {
    CAPTURE(j1);
    const auto st = three_ways<gathers_plan>(gathers.get(), {make_buffer(ramp(60, 0.5f), ctfx::f32, {5, 4, 3}), make_buffer(std::vector<std::int64_t>{3, -2}, ctfx::i64, {2}),
                                                             make_buffer(std::vector<std::int64_t>{0, j1}, ctfx::i64, {2})},
                                             {make_buffer(std::vector<float>(8), ctfx::f32, {2, 4}), make_buffer(std::vector<float>(10), ctfx::f32, {5, 2})});
    CHECK(st.ok == (j1 != 3));
  }
  // A gather (and a negative index), a put with broadcast i64 and i32 indices into a fresh output.
  CHECK(three_ways<gather_plan>(gather.get(), {make_buffer(f32s(24, 0.5f), ctfx::f32, {6, 4}), make_buffer(std::vector<std::int64_t>{5, 0, -1, 2, 2}, ctfx::i64, {5})},
                                {make_buffer(std::vector<float>(20), ctfx::f32, {5, 4})}).ok);
  CHECK(three_ways<gather_plan>(gather.get(), {make_buffer(f32s(24, 0.5f), ctfx::f32, {6, 4}), make_buffer(std::vector<std::int64_t>{5, 0, -1, 6, 2}, ctfx::i64, {5})},
                                {make_buffer(std::vector<float>(20), ctfx::f32, {5, 4})}).message ==
        "rule index-in-range: node 'index': index 6 (from 'idx') is out of range for dimension 0 of size 6");
  for (const std::int32_t j1 : {3, -4, 4}) {
    CAPTURE(j1);
    CHECK(three_ways<put_broadcast_plan>(put_broadcast.get(), {make_buffer(f32s(24, 0.5f), ctfx::f32, {6, 4}), make_buffer(std::vector<std::int64_t>{4, 0, -2}, ctfx::i64, {3, 1}),
                                                               make_buffer(std::vector<std::int32_t>{1, j1}, ctfx::i32, {1, 2}), make_buffer(f32s(6, 3.0f), ctfx::f32, {3, 2})},
                                         {make_buffer(std::vector<float>(24), ctfx::f32, {6, 4})}).ok == (j1 != 4));
  }
  // A scatter-add with duplicates: its indices checked as it writes (a bad one leaves x as it was).
  for (const std::int64_t last : {15, -16, 16, -17}) {
    CAPTURE(last);
    const auto st = three_ways<scatter_add_plan>(scatter_add.get(), {make_buffer(f32s(16, 0.5f), ctfx::f32, {16}),
                                                                     make_buffer(std::vector<std::int64_t>{3, 3, 0, 7, 3, -1, 9, 9, 2, last}, ctfx::i64, {10}),
                                                                     make_buffer(f32s(10, 1.25f), ctfx::f32, {10})},
                                                 {});
    CHECK(st.ok == (last >= -16 && last < 16));
  }
  // Both ops given a bad index: the refusal names the node the program names.
  for (const std::int64_t j0 : {1, 8}) {
    CAPTURE(j0);
    const auto st = three_ways<put_and_gather_plan>(put_and_gather.get(), {make_buffer(f32s(16, 0.5f), ctfx::f32, {16}),
                                                                           make_buffer(std::vector<std::int64_t>{3, 3, 0, 7, 3, -1, 9, 9, 2, 40}, ctfx::i64, {10}),
                                                                           make_buffer(f32s(10, 1.25f), ctfx::f32, {10}), make_buffer(f32s(16, 2.0f), ctfx::f32, {8, 2}),
                                                                           make_buffer(std::vector<std::int64_t>{2, j0, 0}, ctfx::i64, {3})},
                                                    {make_buffer(std::vector<float>(6), ctfx::f32, {3, 2})});
    CHECK_FALSE(st.ok);
  }
}

TEST_CASE("static plan: scatters, each its base copied and its source copied into its view") {
#if !defined(__CUDACC__)
  REQUIRE(scatters_plan::run_plan.n_scatters == 4);
  const std::string text = ctfx::to_text(scatters_plan::run_plan.ref(), scatters_plan::graph());
  CHECK(text.find("scatter: slice_scatter (its base copied, then its source into [2, 8] at element 8 of storage ") != std::string::npos);
  CHECK(text.find("scatter: select_scatter (its base copied, then its source into [6] at element 2 of storage ") != std::string::npos);
#endif
  const auto out = [] { return make_buffer(std::vector<float>(48, -1.0f), ctfx::f32, {6, 8}); };
  CHECK(three_ways<scatters_plan>(scatters.get(), {make_buffer(ramp(48, 0.5f), ctfx::f32, {6, 8}), make_buffer(ramp(16, -1.5f), ctfx::f32, {2, 8}),
                                                   make_buffer(ramp(6, 0.75f), ctfx::f32, {6}), make_buffer(ramp(2, 4.0f), ctfx::f32, {2})},
                                  {out(), out(), out()}).ok);
}

namespace {
// List ops, as an optimizer step writes them: params += lr-scaled grads in place (a list of two),
// and a functional list whose second element nobody reads (not computed).
constexpr auto foreach_step = ctfx::graph([](ctfx::builder& b) {
  auto p0 = b.input("p0", ctfx::f32, {4, 8});
  auto p1 = b.input("p1", ctfx::f32, {16});
  auto g0 = b.input("g0", ctfx::f32, {4, 8});
  auto g1 = b.input("g1", ctfx::f32, {16});
  auto scaled = ctfx::foreach_mul({g0, g1}, -0.125);
  auto next = ctfx::foreach_add({p0, p1}, {scaled[0], scaled[1]});
  b.update(p0, next[0]);
  b.update(p1, next[1]);
  auto sq = ctfx::foreach_mul({g0, g1}, {g0, g1});
  b.output(sq[0]);
});
using foreach_plan = ctfx::compiled<decltype(foreach_step)>;
}  // namespace

TEST_CASE("static plan: list ops, a typed kernel per element") {
#if !defined(__CUDACC__)
  static_assert(foreach_plan::run_plan.usable);
  const std::string text = ctfx::to_text(foreach_plan::run_plan.ref(), foreach_plan::graph());
  CHECK(text.find("step: foreach_mul\nstep: foreach_add\nstep: foreach_mul_1\n") != std::string::npos);
  CHECK(text.find("input 0: p0 (written)\ninput 1: p1 (written)\n") != std::string::npos);
#endif
  check_binding<foreach_plan>({ctfx::tensor_desc::contiguous(ctfx::f32, {4, 8}), ctfx::tensor_desc::contiguous(ctfx::f32, {16}),
                               ctfx::tensor_desc::contiguous(ctfx::f32, {4, 8}), ctfx::tensor_desc::contiguous(ctfx::f32, {16})});
  CHECK(three_ways<foreach_plan>(foreach_step.get(), {make_buffer(ramp(32, 0.5f), ctfx::f32, {4, 8}), make_buffer(ramp(16, -0.25f), ctfx::f32, {16}),
                                                      make_buffer(ramp(32, 1.5f), ctfx::f32, {4, 8}), make_buffer(ramp(16, 3.0f), ctfx::f32, {16})},
                                 {make_buffer(std::vector<float>(32), ctfx::f32, {4, 8})}).ok);
}

TEST_CASE("static plan: indices computed in the graph, checked once computed and before the first write into a caller's buffer") {
#if !defined(__CUDACC__)
  // The table's slot is gathered into the workspace (pos checked before the first step), then
  // checked at the put, the first step that writes the caller's cache.
  CHECK(ctfx::to_text(computed_index_plan::run_plan.ref(), computed_index_plan::graph()).find(
            "index: index (indices: pos; checked before the first step)\n"
            "index: index_put (indices: index; computed in the graph, checked before step 1)\n") != std::string::npos);
  // i + 1 is computed at step 0, x written at step 1, the put at step 2: checked before step 1.
  CHECK(ctfx::to_text(hoisted_index_plan::run_plan.ref(), hoisted_index_plan::graph()).find(
            "index: index_put (indices: add; computed in the graph, checked before step 1, ahead of its own)\n") != std::string::npos);
  CHECK(hoisted_index_plan::run_plan.agree_at == 1);
  CHECK(computed_index_plan::run_plan.n_late_checks == 1);
#endif
  for (const std::int64_t pos : {0, 1, -3, 3, -4, 4, -5}) {
    for (const std::int64_t slot : {5, -6, 6, -7}) {
      CAPTURE(pos);
      CAPTURE(slot);
      const auto st = three_ways<computed_index_plan>(computed_index.get(), {make_buffer(ramp(48, 0.5f), ctfx::f32, {6, 8}), make_buffer(ramp(8, -2.0f), ctfx::f32, {1, 8}),
                                                                             make_buffer(std::vector<std::int64_t>{1, slot, 2, 3}, ctfx::i64, {4}), make_buffer(one(pos), ctfx::i64, {1})},
                                                      {});
      const bool slot_read = pos == 1 || pos == -3;  // the table's element 1, the slot under test
      CHECK(st.ok == (pos >= -4 && pos < 4 && (!slot_read || (slot >= -6 && slot < 6))));
      if (pos == 4) CHECK(st.message == "rule index-in-range: node 'index': index 4 (from 'pos') is out of range for dimension 0 of size 4");
    }
  }
  // A slot out of range: the put's check fails, naming the gathered index.
  const auto bad = three_ways<computed_index_plan>(computed_index.get(), {make_buffer(ramp(48, 0.5f), ctfx::f32, {6, 8}), make_buffer(ramp(8, -2.0f), ctfx::f32, {1, 8}),
                                                                          make_buffer(std::vector<std::int64_t>{1, 9, 2, 3}, ctfx::i64, {4}), make_buffer(one(1), ctfx::i64, {1})},
                                                   {});
  CHECK(bad.message == "rule index-in-range: node 'index_put': index 9 (from 'index') is out of range for dimension 0 of size 6");
  for (const std::int64_t i1 : {2, -5, 3, 9}) {
    CAPTURE(i1);
    const auto st = three_ways<hoisted_index_plan>(hoisted_index.get(), {make_buffer(ramp(4, 0.5f), ctfx::f32, {4}), make_buffer(ramp(4, -1.5f), ctfx::f32, {4}),
                                                                         make_buffer(std::vector<std::int64_t>{0, i1}, ctfx::i64, {2})},
                                                  {make_buffer(std::vector<float>(4, -1.0f), ctfx::f32, {4})});
    CHECK(st.ok == (i1 + 1 >= -4 && i1 + 1 < 4));
  }
  // Indices that exist only after the write into the caller's p: the program's refusal, p untouched.
  const auto late = three_ways<late_index_plan>(late_index.get(), {make_buffer(ramp(4, 0.5f), ctfx::f32, {4}), make_buffer(std::vector<std::int64_t>{0, 2}, ctfx::i64, {2})},
                                                {make_buffer(std::vector<float>(2), ctfx::f32, {2})});
  CHECK(late.message.find("rule validate-before-mutate") != std::string::npos);
}

TEST_CASE("static plan: across ranks, indices computed in the graph are checked before the ranks agree") {
  for (const std::int64_t i1 : {1, 3}) {
    CAPTURE(i1);
    std::vector<float> x = ramp(4, 0.5f), y = ramp(4, -1.5f), out(4, -1.0f);
    std::vector<std::int64_t> i = {0, i1};
    const auto x0 = x, out0 = out;
    failing_peer w;
    const ctfx::device_ctx ctx{ctfx::backend::host, nullptr, &w};
    const auto st = hoisted_index_plan::run({ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {4}), ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {4}),
                                             ctfx::tensor_ref::contiguous(i.data(), ctfx::i64, {2})},
                                            {ctfx::tensor_ref::contiguous(out.data(), ctfx::f32, {4})}, ctx);
    CHECK_FALSE(st.ok);
    CHECK(w.events == (i1 == 1 ? "a" : "f"));  // agreed once: passing its checks, or with its own failure (i + 1 = 4)
    CHECK(st.message == "rank 1 of 2: rule input-shape: its input");
    CHECK(x == x0);
    CHECK(out == out0);
  }
}

TEST_CASE("static plan: bool-mask puts, elementwise over x") {
#if !defined(__CUDACC__)
  CHECK(ctfx::to_text(masked_add_plan::run_plan.ref(), masked_add_plan::graph()).find(
            "index: index_put (indices: gt; a bool mask: elementwise over x, nothing to check)\n") != std::string::npos);
#endif
  CHECK(ctfx::to_text(masked_plan::graph()).find("where(%m, %v, %x)") != std::string::npos);
  std::vector<std::uint8_t> m = {1, 0, 0, 1, 1, 0};
  CHECK(three_ways<masked_plan>(masked.get(), {make_buffer(ramp(6, 0.5f), ctfx::f32, {6}), make_buffer(m, ctfx::b8, {6}), make_buffer(std::vector<float>{2.5f}, ctfx::f32, {1})},
                                {make_buffer(std::vector<float>(6), ctfx::f32, {6})}).ok);
  CHECK(three_ways<masked_rows_plan>(masked_rows.get(), {make_buffer(ramp(20, 0.5f), ctfx::f32, {5, 4}), make_buffer(std::vector<std::uint8_t>{0, 1, 1, 0, 1}, ctfx::b8, {5}),
                                                         make_buffer(std::vector<float>{1.5f, -2.0f, 0.25f, 8.0f}, ctfx::f32, {4})},
                                     {make_buffer(std::vector<float>(20), ctfx::f32, {5, 4})}).ok);
  {  // the values themselves (the three runs above share the host's masked put): rows 1, 2 and 4 are v
    const auto x0 = ramp(20, 0.5f);
    std::vector<std::uint8_t> rows = {0, 1, 1, 0, 1};
    const std::vector<float> v4 = {1.5f, -2.0f, 0.25f, 8.0f};
    std::vector<float> out(20, -7.0f), want = x0;
    for (std::size_t r = 0; r < 5; ++r)
      for (std::size_t c = 0; c < 4; ++c)
        if (rows[r]) want[r * 4 + c] = v4[c];
    auto xs = x0;
    auto vs = v4;
    REQUIRE(masked_rows_plan::run({ctfx::tensor_ref::contiguous(xs.data(), ctfx::f32, {5, 4}), ctfx::tensor_ref::contiguous(rows.data(), ctfx::b8, {5}),
                                   ctfx::tensor_ref::contiguous(vs.data(), ctfx::f32, {4})},
                                  {ctfx::tensor_ref::contiguous(out.data(), ctfx::f32, {5, 4})})
                .ok);
    CHECK(out == want);
    CHECK(xs == x0);
  }
  std::vector<std::uint16_t> x(60), v = {0x3c00, 0xc100, 0x7bff};  // 1, -2.5, 65504: sums that round and overflow to inf
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::uint16_t>(0x3800 + 37 * i);
  CHECK(three_ways<masked_add_plan>(masked_add.get(), {make_buffer(x, ctfx::f16, {3, 4, 5}), make_buffer(ramp(20, 0.5f), ctfx::f32, {4, 5}), make_buffer(v, ctfx::f16, {3, 1})},
                                    {}).ok);
}

namespace {
constexpr ctfx::index_t GH = 7, GW = 9;
// A periodic grid's ghost layer refreshed in place (a halo exchange, packing its columns into the
// scratch), then one Jacobi sweep of its interior written back; collectives in every form, each
// the identity on one rank; a gather whose group no one-rank world has, after a write into x.
constexpr auto jacobi = ctfx::graph([](ctfx::builder& b) {
  auto u = b.input("u", ctfx::f32, {GH, GW});
  auto g = ctfx::halo_exchange(u, 1, {1, 1, true, true});
  auto c = g.slice(0, 1, GH - 1).slice(1, 1, GW - 1);
  auto n = g.slice(0, 0, GH - 2).slice(1, 1, GW - 1), s = g.slice(0, 2, GH).slice(1, 1, GW - 1);
  auto w = g.slice(0, 1, GH - 1).slice(1, 0, GW - 2), e = g.slice(0, 1, GH - 1).slice(1, 2, GW);
  b.update(u, ctfx::slice_scatter(g, ctfx::slice_scatter(g.slice(0, 1, GH - 1), (n + s + w + e) * 0.25f - c, 1, 1, GW - 1), 0, 1, GH - 1));
});
constexpr auto collectives = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 3});
  auto y = b.input("y", ctfx::i64, {4});
  auto scattered = ctfx::reduce_scatter(x * 2.0f, 1);
  b.update(x, ctfx::all_reduce(x, ctfx::reduce_op::max));
  b.output(ctfx::broadcast(y, 0), ctfx::all_gather(y, 1), scattered, ctfx::all_reduce(y));
});
constexpr auto wide_gather = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 3});
  b.update(x, x + 1.0f);
  b.output(ctfx::all_gather(x, 4));
});
using jacobi_plan = ctfx::compiled<decltype(jacobi)>;
using collectives_plan = ctfx::compiled<decltype(collectives)>;
using wide_gather_plan = ctfx::compiled<decltype(wide_gather)>;
#if !defined(__CUDACC__)
static_assert(jacobi_plan::run_plan.usable && collectives_plan::run_plan.usable && wide_gather_plan::run_plan.usable);
#endif
}  // namespace

TEST_CASE("static plan: collectives, checked against the run's world before the first step") {
#if !defined(__CUDACC__)
  CHECK(jacobi_plan::run_plan.n_collectives == 1);
  CHECK(collectives_plan::run_plan.n_collectives == 5);
  CHECK(ctfx::to_text(jacobi_plan::run_plan.ref(), jacobi_plan::graph()).find("collective: halo_exchange (checked against the run's world before the first step)\n") !=
        std::string::npos);
  // The halo exchange packs its columns into the scratch after the buffers, as the program's binding says.
  const std::vector<ctfx::tensor_desc> grid_desc{ctfx::tensor_desc::contiguous(ctfx::f32, {GH, GW})};
  CHECK(jacobi_plan::run_plan.workspace_bytes == jacobi_plan::prog().bind(grid_desc).workspace_bytes);
  CHECK(jacobi_plan::run_plan.workspace_bytes > jacobi_plan::run_plan.scratch_offset + 64);
#endif
  std::vector<float> u(GH * GW);
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = static_cast<float>((i * 37) % 23) - 11.0f;
  CHECK(three_ways<jacobi_plan>(jacobi.get(), {make_buffer(u, ctfx::f32, {GH, GW})}, {}).ok);
  CHECK(three_ways<collectives_plan>(collectives.get(), {make_buffer(ramp(12, 0.5f), ctfx::f32, {4, 3}), make_buffer(std::vector<std::int64_t>{3, -1, 4, 1}, ctfx::i64, {4})},
                                     {make_buffer(std::vector<std::int64_t>(4), ctfx::i64, {4}), make_buffer(std::vector<std::int64_t>(4), ctfx::i64, {4}),
                                      make_buffer(std::vector<float>(12), ctfx::f32, {4, 3}), make_buffer(std::vector<std::int64_t>(4), ctfx::i64, {4})})
            .ok);
  // A group of 4 on a world of one rank: refused, x not written.
  const auto st = three_ways<wide_gather_plan>(wide_gather.get(), {make_buffer(ramp(12, 0.5f), ctfx::f32, {4, 3})}, {make_buffer(std::vector<float>(48), ctfx::f32, {16, 3})});
  CHECK(st.message.find("rule comm-world: node 'all_gather_into_tensor': ") == 0);
}
