// Buffers held in a caller's output buffer before the output is computed (plan/outputs.hpp):
// softmax's exp(x - max) lives where the hand-written loop keeps it, in the output, which the
// division then overwrites in place. The plan, the listing, the bytes computed (dense and strided
// output buffers, compiled<G> and runtime_plan, lifetimes checked), and validate-before-mutate
// with a put that checks its indices as it writes.
#include <doctest/doctest.h>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/plan/listing.hpp>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr auto softmax = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 8});
  auto e = ctfx::exp(x - x.amax({1}, true));
  b.output(e / e.sum({1}, true));
});
using softmax_plan = ctfx::compiled<decltype(softmax)>;

// Two outputs, each holding the buffer its division overwrites; one of them f64.
constexpr auto two = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 8});
  auto y = b.input("y", ctfx::f64, {3, 5});
  auto e = ctfx::exp(x);
  auto f = ctfx::exp(y);
  b.output(e / e.sum({0}, true), f * f.amax({1}, true));
});
using two_plan = ctfx::compiled<decltype(two)>;

// exp(x) computed (into the output's buffer) before an in-place scatter-add into the input h:
// the put cannot check its indices as it writes, since a failed check would leave the output
// written. With the put first, it can.
template <bool PutFirst>
constexpr auto put_and_held = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 8});
  auto h = b.input("h", ctfx::f32, {16});
  auto idx = b.input("idx", ctfx::i64, {10});
  auto v = b.input("v", ctfx::f32, {10});
  if constexpr (PutFirst) b.update(h, ctfx::index_put(h, {idx}, v, true));
  auto e = ctfx::exp(x);
  auto s = e.sum({1}, true);
  if constexpr (!PutFirst) b.update(h, ctfx::index_put(h, {idx}, v, true));
  b.output(e / s);
});
constexpr auto held_then_put = put_and_held<false>;
constexpr auto put_then_held = put_and_held<true>;
using held_then_put_plan = ctfx::compiled<decltype(held_then_put)>;
using put_then_held_plan = ctfx::compiled<decltype(put_then_held)>;

// The output takes exp's memory, so only amax's 16 bytes are planned (the sum then takes them).
#if !defined(__CUDACC__)
static_assert(softmax_plan::static_buffer_bytes() == ctfx::detail::align_ws(4 * 4));
static_assert(two_plan::static_buffer_bytes() == ctfx::detail::align_ws(8 * 4) + ctfx::detail::align_ws(3 * 8));
#endif

std::vector<float> ramp(std::size_t n, float scale) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 37) % 101) * scale - 9.0f;
  return v;
}

ctfx::program checked_program(const ctfx::ir& g, const std::int32_t* roots, const std::int32_t* into) {
  ctfx::program_options o;
  o.check_lifetimes = true;
  o.fuse = true;
  o.fused_roots = roots;
  o.fused_into = into;
  return ctfx::program(g, o);
}

}  // namespace

TEST_CASE("held buffers: softmax's exp lives in the caller's output, and the division overwrites it in place") {
  const ctfx::ir g = softmax_plan::graph();
  const auto f = softmax_plan::fused();
  const ctfx::liveness L = softmax_plan::life();
  const ctfx::reuse_plan R = ctfx::plan_reuse(L);
  const auto direct = ctfx::direct_outputs(g, L);
  const std::span<const std::int32_t> ds(direct.data(), direct.size());
  const auto held = ctfx::caller_held_buffers(L, &R, ds);
  const std::int32_t exp_node = g.find("exp");
  REQUIRE(exp_node >= 0);
  const std::int32_t exp_buffer = L.buffer_of[static_cast<std::size_t>(g.meta(exp_node).storage)];
  CHECK(held[static_cast<std::size_t>(exp_buffer)] == 0);
  CHECK(ctfx::first_caller_output_step(L, std::span<const std::int32_t>(held.data(), held.size())) == L.buffers[static_cast<std::size_t>(exp_buffer)].def_step);
  const ctfx::slot_plan sp = ctfx::plan_slots(L, &R, ds);
  CHECK(sp.slot_of_buffer[static_cast<std::size_t>(exp_buffer)] < 0);
  CHECK(sp.bytes.size() == 1);  // amax's, which the sum reuses
  // Without reuse lines nothing is held: exp gets a slot of its own.
  CHECK(ctfx::plan_slots(L, nullptr, ds).slot_of_buffer[static_cast<std::size_t>(exp_buffer)] >= 0);

  const std::string text = ctfx::listing(g, L, R, {.fused = &f});
  CHECK(text.find("buf1 = output0  # %exp, in the caller's buffer of output 0 until it is computed") != std::string::npos);
  CHECK(text.find("buf3 = buf1; del buf1  # reuse, %div") != std::string::npos);
#if !defined(__CUDACC__)
  CHECK(ctfx::to_text(softmax_plan::run_plan.ref(), g).find(": output 0, before it\n") != std::string::npos);
#endif

  // The bytes: compiled<G>, the program with every access checked against the planned lives, and
  // runtime_plan, into a dense output and into every other column of a wider one (a temporary
  // then holds exp and the result, copied out at the end).
  const auto xs = ramp(32, 0.37f);
  const auto d = ctfx::tensor_desc::contiguous(ctfx::f32, {4, 8});
  const std::vector<ctfx::tensor_ref> in{ctfx::tensor_ref(const_cast<float*>(xs.data()), d)};
  std::vector<float> want(32);
  REQUIRE(ctfx::reference_run(softmax.get(), in, {ctfx::tensor_ref(want.data(), d)}).ok);
  const ctfx::program checked = checked_program(g, softmax_plan::fused_roots.data(), softmax_plan::fused_into.data());
  REQUIRE(checked.error().ok);
  const ctfx::runtime_plan rp(softmax.get());
  REQUIRE(rp.error().ok());
  for (int how = 0; how < 3; ++how)
    for (int strided = 0; strided < 2; ++strided) {
      CAPTURE(how);
      CAPTURE(strided);
      std::vector<float> out(strided ? 64 : 32, -7.0f);
      ctfx::tensor_ref o(out.data(), d);
      if (strided) {
        o.stride[0] = 16;
        o.stride[1] = 2;
      }
      const std::vector<ctfx::tensor_ref> os{o};
      const ctfx::run_status st = how == 0 ? softmax_plan::run(in, os) : how == 1 ? checked.run(in, os, ctfx::device_ctx{}, {}) : rp.run(in, os);
      REQUIRE_MESSAGE(st.ok, st.message);
      for (std::size_t i = 0; i < 32; ++i) {
        const std::size_t at = strided ? (i / 8) * 16 + (i % 8) * 2 : i;
        CHECK(std::memcmp(&out[at], &want[i], 4) == 0);
        if (strided) CHECK(out[at + 1] == -7.0f);  // untouched between
      }
    }
  // runtime_plan's workspace: amax's bytes and the run's scratch, as compiled<G>'s.
  CHECK(rp.bind({d}).workspace_bytes == softmax_plan::bind({d}).workspace_bytes);
}

TEST_CASE("held buffers: one chain per output, of the output's dtype") {
  const ctfx::liveness L = two_plan::life();
  const ctfx::reuse_plan R = ctfx::plan_reuse(L);
  const auto direct = ctfx::direct_outputs(two_plan::graph(), L);
  const auto held = ctfx::caller_held_buffers(L, &R, std::span<const std::int32_t>(direct.data(), direct.size()));
  int per_output[2] = {0, 0};
  for (std::size_t b = 0; b < held.size(); ++b)
    if (held[b] >= 0) {
      ++per_output[held[b]];
      CHECK(L.buffers[b].dt == (held[b] == 0 ? ctfx::f32 : ctfx::f64));
    }
  CHECK(per_output[0] == 2);  // exp(x) and the division
  CHECK(per_output[1] == 2);  // exp(y) and the product

  const auto xs = ramp(32, 0.21f);
  std::vector<double> ys(15);
  for (std::size_t i = 0; i < ys.size(); ++i) ys[i] = 0.3 * static_cast<double>(i) - 2.0;
  const auto dx = ctfx::tensor_desc::contiguous(ctfx::f32, {4, 8}), dy = ctfx::tensor_desc::contiguous(ctfx::f64, {3, 5});
  const std::vector<ctfx::tensor_ref> in{ctfx::tensor_ref(const_cast<float*>(xs.data()), dx), ctfx::tensor_ref(ys.data(), dy)};
  std::vector<float> a(32), ra(32);
  std::vector<double> c(15), rc(15);
  REQUIRE(ctfx::reference_run(two.get(), in, {ctfx::tensor_ref(ra.data(), dx), ctfx::tensor_ref(rc.data(), dy)}).ok);
  const ctfx::program checked = checked_program(two_plan::graph(), two_plan::fused_roots.data(), two_plan::fused_into.data());
  for (int how = 0; how < 3; ++how) {
    CAPTURE(how);
    std::fill(a.begin(), a.end(), 0.0f);
    std::fill(c.begin(), c.end(), 0.0);
    const std::vector<ctfx::tensor_ref> out{ctfx::tensor_ref(a.data(), dx), ctfx::tensor_ref(c.data(), dy)};
    const ctfx::run_status st = how == 0 ? two_plan::run(in, out) : how == 1 ? checked.run(in, out, ctfx::device_ctx{}, {}) : ctfx::runtime_plan(two.get()).run(in, out);
    REQUIRE_MESSAGE(st.ok, st.message);
    CHECK(std::memcmp(a.data(), ra.data(), 32 * 4) == 0);
    CHECK(std::memcmp(c.data(), rc.data(), 15 * 8) == 0);
  }
}

TEST_CASE("held buffers: a put that checks its indices as it writes comes before any write into an output's buffer") {
#if !defined(__CUDACC__)
  REQUIRE(held_then_put_plan::run_plan.n_index_steps == 1);
  REQUIRE(put_then_held_plan::run_plan.n_index_steps == 1);
  CHECK_FALSE(held_then_put_plan::run_plan.index_steps[0].checked_in_put);  // exp is in the output's buffer by then
  CHECK(put_then_held_plan::run_plan.index_steps[0].checked_in_put);
#endif
  const auto xs = ramp(32, 0.11f);
  const auto d = ctfx::tensor_desc::contiguous(ctfx::f32, {4, 8});
  for (const std::int64_t bad : {std::int64_t{3}, std::int64_t{16}, std::int64_t{-17}}) {
    CAPTURE(bad);
    const bool ok = bad == 3;
    std::vector<std::int64_t> idx{0, 1, 2, 3, 4, 5, 6, 7, 8, bad};
    std::vector<float> v(10, 0.5f);
    for (int graph = 0; graph < 2; ++graph)
      for (int how = 0; how < 2; ++how) {
        CAPTURE(graph);
        CAPTURE(how);
        std::vector<float> h(16, 1.0f), out(32, -3.0f), rh = h, rout = out;
        auto args = [&](std::vector<float>& hv) {
          return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(const_cast<float*>(xs.data()), d), ctfx::tensor_ref::contiguous(hv.data(), ctfx::f32, {16}),
                                               ctfx::tensor_ref::contiguous(idx.data(), ctfx::i64, {10}), ctfx::tensor_ref::contiguous(v.data(), ctfx::f32, {10})};
        };
        const ctfx::ir& src = graph ? put_then_held.get() : held_then_put.get();
        const std::vector<ctfx::tensor_ref> o{ctfx::tensor_ref(out.data(), d)};
        const ctfx::run_status st = how == 0 ? (graph ? put_then_held_plan::run(args(h), o) : held_then_put_plan::run(args(h), o))
                                             : ctfx::runtime_plan(src).run(args(h), o);
        CHECK(st.ok == ok);
        if (!ok) {
          CHECK(st.message.find("rule index-in-range") != std::string::npos);
          CHECK(h == std::vector<float>(16, 1.0f));
          CHECK(out == std::vector<float>(32, -3.0f));  // not a byte of exp written
          continue;
        }
        REQUIRE(ctfx::reference_run(src, args(rh), {ctfx::tensor_ref(rout.data(), d)}).ok);
        CHECK(h == rh);
        CHECK(std::memcmp(out.data(), rout.data(), 32 * 4) == 0);
      }
  }
}
