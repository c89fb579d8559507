// The kernel families a compiled<G> leaves to the run-time dispatch (exec/program.hpp,
// kernel_family): which its graph reaches, and that a program whose dispatch has only those
// families runs the graph as the reference does. Built twice: in ctfx_unit (the executor compiled
// once, CTFX_SEPARATE_RUNTIME: compiled<G> dispatches to every family) and header-only in
// ctfx_unit_omp (compiled<G> dispatches to its graph's families only).
#include <doctest/doctest.h>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace {

namespace fam = ctfx::kernel_family;

// Arithmetic only: every step is a static kernel, so nothing is left to the dispatch.
constexpr auto pointwise = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 8});
  b.output(ctfx::relu(x * 2.0f - 1.0f));
});
using pointwise_plan = ctfx::compiled<decltype(pointwise)>;
static_assert(pointwise_plan::dispatched_families == 0);

// An update at a run-time position (the index_put family), a bare sum and a cat of inputs (their
// kernels called by compiled<G> itself: not dispatched).
constexpr auto mixed = ctfx::graph([](ctfx::builder& b) {
  auto cache = b.input("cache", ctfx::f32, {6, 8});
  auto row = b.input("row", ctfx::f32, {1, 8});
  auto pos = b.input("pos", ctfx::i64, {1});
  auto y = b.input("y", ctfx::f32, {2, 8});
  b.update(cache, ctfx::index_put(cache, {pos}, row));
  b.output(y.sum({1}), ctfx::cat({y, row}, 0));
});
using mixed_plan = ctfx::compiled<decltype(mixed)>;
static_assert(mixed_plan::dispatched_families == fam::index_put);

static_assert((fam::all & (fam::copy | fam::groups | fam::custom)) == (fam::copy | fam::groups | fam::custom));
static_assert(fam::of(ctfx::op_kind::index_put_) == fam::index_put && fam::of(ctfx::op_kind::amax) == fam::reduce &&
              fam::of(ctfx::op_kind::slice_scatter) == fam::copy && fam::of(ctfx::op_kind::full) == fam::fill &&
              fam::of(ctfx::op_kind::where) == fam::pointwise && fam::of(ctfx::op_kind::all_reduce) == fam::collective &&
              fam::of(ctfx::op_kind::custom) == fam::custom && fam::of(ctfx::op_kind::view) == 0);


struct mixed_data {
  std::vector<float> cache = std::vector<float>(48), row = std::vector<float>(8), y = std::vector<float>(16);
  std::vector<float> sums = std::vector<float>(2), joined = std::vector<float>(24);
  std::vector<std::int64_t> pos = {4};
  mixed_data() {
    for (std::size_t i = 0; i < cache.size(); ++i) cache[i] = static_cast<float>(i) * 0.25f - 3.0f;
    for (std::size_t i = 0; i < row.size(); ++i) row[i] = 100.0f + static_cast<float>(i);
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(i % 5) * 1.5f - 2.0f;
  }
  std::vector<ctfx::tensor_ref> in() {
    return {ctfx::tensor_ref::contiguous(cache.data(), ctfx::f32, {6, 8}), ctfx::tensor_ref::contiguous(row.data(), ctfx::f32, {1, 8}),
            ctfx::tensor_ref::contiguous(pos.data(), ctfx::i64, {1}), ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {2, 8})};
  }
  std::vector<ctfx::tensor_ref> out() {
    return {ctfx::tensor_ref::contiguous(sums.data(), ctfx::f32, {2}), ctfx::tensor_ref::contiguous(joined.data(), ctfx::f32, {3, 8})};
  }
};

}  // namespace

TEST_CASE("compiled dispatch: a plan with only its graph's kernel families computes the reference's bytes") {
  mixed_data a, r;
  const auto st = mixed_plan::run(a.in(), a.out());
  REQUIRE_MESSAGE(st.ok, st.message);
  REQUIRE(ctfx::reference_run(mixed.get(), r.in(), r.out()).ok);
  CHECK(std::memcmp(a.cache.data(), r.cache.data(), a.cache.size() * 4) == 0);
  CHECK(std::memcmp(a.sums.data(), r.sums.data(), a.sums.size() * 4) == 0);
  CHECK(std::memcmp(a.joined.data(), r.joined.data(), a.joined.size() * 4) == 0);
  CHECK(a.cache[4 * 8 + 3] == 103.0f);  // the row went in at pos 4
  CHECK(a.joined[2 * 8] == 100.0f);

  // A bad position is still refused before any write.
  mixed_data b;
  b.pos[0] = 6;
  const auto bad = mixed_plan::run(b.in(), b.out());
  CHECK_FALSE(bad.ok);
  CHECK(std::memcmp(b.cache.data(), mixed_data().cache.data(), b.cache.size() * 4) == 0);
}

TEST_CASE("compiled dispatch: the families print by name") {
  CHECK(fam::to_text(pointwise_plan::dispatched_families) == "none");
  CHECK(fam::to_text(mixed_plan::dispatched_families) == "index_put");
  CHECK(fam::to_text(fam::copy | fam::index_put | fam::reduce) == "copy, index_put, reduce");
  CHECK(fam::to_text(fam::all) == "copy, fill, collective, index_put, index, reduce, pointwise, custom, groups, product");
}

TEST_CASE("compiled dispatch: a program without a step's family says so instead of running it") {
  // No static kernels and no families: the first step has no kernel in this program.
  ctfx::program p(mixed_plan::graph(), {}, fam::only<0>{});
  REQUIRE(p.error().ok);
  mixed_data a;
  const auto st = p.run(a.in(), a.out(), ctfx::device_ctx{}, {});
  REQUIRE_FALSE(st.ok);
  CHECK(st.message.find("rule executable-op") != std::string::npos);
  CHECK(st.message.find("has no kernel in this compiled plan") != std::string::npos);
}

namespace {

// exp(x) is read three times (its sum, the division, the sum with its first row): it gets a
// buffer, so the program lays out a slot. (Its last reader reads it at another index too, so no
// output takes its memory: plan/outputs.hpp.)
constexpr auto with_slot = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 8});
  auto e = ctfx::exp(x);
  b.output(e / e.sum({0}), e + e.slice(0, 0, 1));
});
using with_slot_plan = ctfx::compiled<decltype(with_slot)>;

// The same with a symbolic row count: the slot's size is known at run time only (a lane of the
// arena's symbolic region).
constexpr auto symbolic_slot = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {b.sym("n"), 8});
  auto e = ctfx::exp(x);
  b.output(e / e.sum({0}), e + e.slice(0, 0, 1));
});
using symbolic_slot_plan = ctfx::compiled<decltype(symbolic_slot)>;

#if !defined(__CUDACC__)
static_assert(with_slot_plan::planned_arena.planned);
static_assert(pointwise_plan::planned_arena.planned && pointwise_plan::planned_arena.n_slots == 0);
static_assert(symbolic_slot_plan::planned_arena.planned && symbolic_slot_plan::planned_arena.n_lanes == 1);
#endif

template <class Plan>
void check_against_reference(const ctfx::ir& functional, long rows) {
  std::vector<float> x(static_cast<std::size_t>(rows * 8));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 13) * 0.25f - 1.0f;
  std::vector<float> a(x.size()), b(x.size()), ra(x.size()), rb(x.size());
  const auto d = ctfx::tensor_desc::contiguous(ctfx::f32, {rows, 8});
  std::vector<ctfx::tensor_ref> in{ctfx::tensor_ref(x.data(), d)};
  const ctfx::binding bd = Plan::bind(std::vector<ctfx::tensor_desc>{d});
  REQUIRE_MESSAGE(bd.status.ok, bd.status.message);
  std::vector<std::byte> ws(bd.workspace_bytes);
  auto st = Plan::run(in, {ctfx::tensor_ref(a.data(), d), ctfx::tensor_ref(b.data(), d)}, {}, ws);
  REQUIRE_MESSAGE(st.ok, st.message);
  REQUIRE(ctfx::reference_run(functional, in, {ctfx::tensor_ref(ra.data(), d), ctfx::tensor_ref(rb.data(), d)}).ok);
  CHECK(std::memcmp(a.data(), ra.data(), a.size() * 4) == 0);
  CHECK(std::memcmp(b.data(), rb.data(), b.size() * 4) == 0);
}

}  // namespace

TEST_CASE("compiled<G>: the arena is planned in the compiler for slots of static size, and the program runs with it") {
  // The plan the compiler made is the one the program runs: the same pools and offsets, no overlap
  // between live slots (checked where it was planned), and the slot's bytes in the workspace.
  const auto& P = with_slot_plan::planned_arena;
  const ctfx::arena_plan& A = with_slot_plan::prog().arena();
  REQUIRE(with_slot_plan::prog().error().ok);
  CHECK(P.n_slots == static_cast<std::size_t>(with_slot_plan::prog().slot_count()));
  CHECK(P.n_slots >= 1);
  REQUIRE(A.pools.size() == P.n_pools);
  REQUIRE(A.slots.size() == P.n_slots);
  for (std::size_t k = 0; k < P.n_slots; ++k) {
    CHECK(A.slots[k].pool == P.slots[k].pool);
    CHECK(A.slots[k].offset == P.slots[k].offset);
  }
  std::int64_t pools = 0;
  for (std::size_t k = 0; k < P.n_pools; ++k) pools += P.pools[k].static_bytes;
  CHECK(pools >= 4 * 8 * 4);  // exp(x): 128 bytes
  const auto d = ctfx::tensor_desc::contiguous(ctfx::f32, {4, 8});
  CHECK(with_slot_plan::bind({d}).workspace_bytes >= static_cast<std::size_t>(pools));
  check_against_reference<with_slot_plan>(with_slot.get(), 4);

  // A plan given for other slots is refused when the program is made, naming the rule.
  ctfx::arena_plan none;
  ctfx::program_options o;
  o.arena = true;
  o.fuse = true;
  o.planned_arena = &none;
  const ctfx::program wrong(with_slot.get(), o);
  CHECK(!wrong.error().ok);
  CHECK(wrong.error().message.find("rule arena-overlap: the given arena plan has 0 slots") != std::string::npos);

  // A slot of symbolic size: in a lane above the pool's static region, planned here too; the
  // program runs with that plan, its lanes' sizes evaluated per call.
  REQUIRE(symbolic_slot_plan::prog().error().ok);
  CHECK(symbolic_slot_plan::prog().arena().slots.size() == static_cast<std::size_t>(symbolic_slot_plan::prog().slot_count()));
  REQUIRE(symbolic_slot_plan::prog().arena().pools.size() == symbolic_slot_plan::planned_arena.n_pools);
  CHECK(symbolic_slot_plan::prog().arena().pools[0].lanes.size() == 1);
  CHECK(symbolic_slot_plan::prog().arena().pools[0].lanes[0] == symbolic_slot_plan::planned_arena.lanes[0]);
  check_against_reference<symbolic_slot_plan>(symbolic_slot.get(), 5);
}

TEST_CASE("plan_slots: reuse lines share a slot, outputs in the caller's buffers get none, slot_liveness spans them") {
  const ctfx::ir g = with_slot_plan::graph();
  const auto f = with_slot_plan::fused();
  const ctfx::liveness L = ctfx::compute_liveness(g, f.root.data(), f.into.data());
  const ctfx::reuse_plan R = ctfx::plan_reuse(L);
  const auto direct = ctfx::direct_outputs(g, L);
  const ctfx::slot_plan sp = ctfx::plan_slots(L, &R, std::span<const std::int32_t>(direct.data(), direct.size()));
  REQUIRE(sp.slot_of_buffer.size() == L.buffers.size());
  std::size_t in_caller = 0;
  for (std::size_t bi = 0; bi < L.buffers.size(); ++bi) {
    bool is_direct = false;
    for (auto st : direct) is_direct = is_direct || st == L.buffers[bi].storage;
    CHECK((sp.slot_of_buffer[bi] < 0) == is_direct);
    in_caller += is_direct;
  }
  CHECK(in_caller == 2);  // both outputs
  CHECK(sp.bytes.size() == L.buffers.size() - in_caller);
  const ctfx::liveness SL = ctfx::slot_liveness(L, sp);
  REQUIRE(SL.buffers.size() == sp.bytes.size());
  for (std::size_t bi = 0; bi < L.buffers.size(); ++bi) {
    const std::int32_t k = sp.slot_of_buffer[bi];
    if (k < 0) continue;
    CHECK(SL.buffers[static_cast<std::size_t>(k)].begin == 2 * L.buffers[bi].def_step);
    CHECK(SL.buffers[static_cast<std::size_t>(k)].end >= L.buffers[bi].end);
  }
  // Without reuse lines: one slot per buffer not in the caller's.
  CHECK(ctfx::plan_slots(L, nullptr, std::span<const std::int32_t>(direct.data(), direct.size())).bytes.size() == L.buffers.size() - in_caller);
}
