// make_plan (plan/make_plan.hpp): one value with every decision, the same in the compiler and at
// run time, equal to what the planners it calls give one by one, and frozen unchanged by
// compiled<G>; what it says when an arena is given for other slots or cannot be searched.
#include <doctest/doctest.h>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/plan/make_plan.hpp>
#include <span>

namespace {

// exp(x) is read three times: it gets a buffer (a slot of the arena).
constexpr auto slotted = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 8});
  auto e = ctfx::exp(x);
  b.output(e / e.sum({0}), e + e.slice(0, 0, 1));
});
using slotted_plan = ctfx::compiled<decltype(slotted)>;

constexpr ctfx::planner_options searched() {
  ctfx::planner_options o;
  o.arena_planner = &ctfx::search_arena;
  return o;
}

// The plan's fields against the planners called one by one, as the executors called them before.
constexpr bool same_as_the_planners(const ctfx::ir& g) {
  const ctfx::graph_plan P = ctfx::make_plan(g, searched());
  const ctfx::fusion f = ctfx::plan_fusion(g);
  const ctfx::liveness L = ctfx::compute_liveness(g, f.root.data(), f.into.empty() ? nullptr : f.into.data());
  const ctfx::reuse_plan R = ctfx::plan_reuse(L);
  const auto direct = ctfx::direct_outputs(g, L);
  const ctfx::slot_plan sp = ctfx::plan_slots(L, &R, std::span<const std::int32_t>(direct.data(), direct.size()));
  ctfx::arena_options ao;
  ao.work = ctfx::arena_work_per_second / 50;
  const ctfx::arena_plan A = ctfx::plan_arena(g, ctfx::slot_liveness(L, sp), ao);
  bool same = P.life.steps.size() == L.steps.size() && P.slots.bytes.size() == sp.bytes.size() && P.arena.slots.size() == A.slots.size() &&
              P.arena.pools.size() == A.pools.size() && P.reuse.reuses == R.reuses && P.direct.size() == direct.size() &&
              P.arena_is == ctfx::arena_state::planned && P.arena_overlap_pool == -1;
  for (std::size_t s = 0; same && s < L.steps.size(); ++s) same = P.life.steps[s] == L.steps[s];
  for (std::size_t k = 0; same && k < sp.bytes.size(); ++k) same = P.slots.bytes[k] == sp.bytes[k] && P.arena.slots[k].offset == A.slots[k].offset;
  for (std::size_t i = 0; same && i < f.root.size(); ++i) same = P.fused.root[i] == f.root[i];
  return same;
}

}  // namespace

static_assert(same_as_the_planners(slotted_plan::graph()));

TEST_CASE("make_plan: the same value at run time as in the compiler, frozen unchanged by compiled<G>") {
  const ctfx::ir g = slotted_plan::graph();
  CHECK(same_as_the_planners(g));
  const ctfx::graph_plan P = ctfx::make_plan(g, searched());
  const auto& F = slotted_plan::planned_arena;
  REQUIRE(F.planned);
  REQUIRE(P.arena.slots.size() == F.n_slots);
  CHECK(F.n_slots >= 1);
  for (std::size_t k = 0; k < F.n_slots; ++k) {
    CHECK(P.arena.slots[k].pool == F.slots[k].pool);
    CHECK(P.arena.slots[k].offset == F.slots[k].offset);
  }
  REQUIRE(P.arena.pools.size() == F.n_pools);
  for (std::size_t k = 0; k < F.n_pools; ++k) CHECK(P.arena.pools[k].static_bytes == F.pools[k].static_bytes);
  for (std::size_t i = 0; i < slotted_plan::node_count; ++i) {
    CHECK(P.fused.root[i] == slotted_plan::fused_roots[i]);
    CHECK(P.members[i] == slotted_plan::fused_members[i]);
  }
  std::size_t bytes = 0;
  for (const auto& e : P.slots.bytes) bytes += ctfx::detail::align_ws(static_cast<ctfx::index_t>(e.value()));
  CHECK(bytes == slotted_plan::static_buffer_bytes());
  CHECK(bytes >= 4 * 8 * 4);  // exp(x): 128 bytes
}

TEST_CASE("make_plan: an arena off, given for other slots, or without a search is said so in the plan") {
  const ctfx::ir g = slotted_plan::graph();
  ctfx::planner_options o;
  o.arena = false;
  CHECK(ctfx::make_plan(g, o).arena_is == ctfx::arena_state::off);
  o.arena = true;
  CHECK(ctfx::make_plan(g, o).arena_is == ctfx::arena_state::no_planner);
  const ctfx::arena_plan none;
  o.given_arena = &none;
  const ctfx::graph_plan wrong = ctfx::make_plan(g, o);
  CHECK(wrong.arena_is == ctfx::arena_state::slots_differ);
  CHECK(wrong.arena_given_slots == 0);
  CHECK(!wrong.arena_usable());
  const ctfx::graph_plan searched_plan = ctfx::make_plan(g, searched());
  o.given_arena = &searched_plan.arena;
  const ctfx::graph_plan given = ctfx::make_plan(g, o);
  CHECK(given.arena_is == ctfx::arena_state::given);
  REQUIRE(given.arena.slots.size() == searched_plan.arena.slots.size());
  for (std::size_t k = 0; k < given.arena.slots.size(); ++k) CHECK(given.arena.slots[k].offset == searched_plan.arena.slots[k].offset);
  // Without fusion every node is a kernel of its own: no grouping, no members.
  ctfx::planner_options plain = searched();
  plain.fuse = false;
  const ctfx::graph_plan P = ctfx::make_plan(g, plain);
  CHECK(P.roots() == nullptr);
  CHECK(P.members.empty());
  CHECK(P.arena_is == ctfx::arena_state::planned);
}
