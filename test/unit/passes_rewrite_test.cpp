// The rebuilder's fresh names (passes/rewrite.hpp): FX's `base`, `base_1`, ... past every name the
// old graph already has, unique in the new graph — by the per-base suffix bitmaps, and by the set of
// names when two bases could make the same name.
#include <doctest/doctest.h>
#include <ctfx.hpp>
#include <ctfx/passes/rewrite.hpp>
#include <array>
#include <string>

namespace {

// Old names in the ops' own pattern: slice, slice_1 (the builder's), slice_3 and clone_1 (a user's).
constexpr auto named = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {4, 4});
  auto a = x.slice(0, 0, 2);
  auto b = x.slice(0, 2, 4);
  auto c = ctfx::relu(a + b).named("slice_3");
  auto d = ctfx::clone(c).named("clone_1");
  g.output(d);
});

struct emitted {
  std::array<ctfx::name_t, 12> names{};
  int n = 0;
  bool valid = false;  // the rebuilt graph passes the full verifier (unique names among its rules)
};

// Copies every node but the output, emits slices of x with the given bases ("" = the op's own
// name) and ops, then the output; returns the emitted names.
template <std::size_t K>
constexpr emitted emit_slices(const std::array<std::pair<ctfx::op_kind, std::string_view>, K>& what) {
  const ctfx::ir g = named.get();
  ctfx::rebuilder rb(g);
  ctfx::detail::cvec<std::int32_t> map;
  for (std::int32_t i = 0; i + 1 < g.size(); ++i) map.push_back(rb.copy(i, [&](std::int32_t a) { return map[static_cast<std::size_t>(a)]; }));
  emitted r;
  const ctfx::sym_expr slice_params[4] = {0, 0, 1, 1};
  for (const auto& [k, base] : what) {
    const std::int32_t x = map[0];
    std::span<const ctfx::sym_expr> p;
    if (k == ctfx::op_kind::slice) p = std::span<const ctfx::sym_expr>(slice_params, 4);
    const std::int32_t id = rb.emit(ctfx::node_like(g, 0, k), {x}, p, base);
    r.names[static_cast<std::size_t>(r.n++)] = rb.out[id].name;
  }
  const std::int32_t out = g.size() - 1;
  rb.copy(out, [&](std::int32_t a) { return map[static_cast<std::size_t>(a)]; });
  r.valid = ctfx::verify(static_cast<ctfx::rebuilder&&>(rb).finish()).ok();
  return r;
}

using op = ctfx::op_kind;

// The op's own base: slice and slice_1 are the builder's, slice_3 the user's.
constexpr auto own = emit_slices<3>({{{op::slice, ""}, {op::slice, ""}, {op::slice, ""}}});
static_assert(own.valid);
static_assert(own.names[0] == ctfx::name_t("slice_2") && own.names[1] == ctfx::name_t("slice_4") &&
              own.names[2] == ctfx::name_t("slice_5"));

// Two bases whose names meet ("clone" makes clone_2, which is also the base "clone_2"): the set of
// names decides from then on, and every name stays unique.
constexpr auto meeting = emit_slices<4>({{{op::clone, ""}, {op::clone, "clone_2"}, {op::clone, ""}, {op::clone, "clone_2"}}});
static_assert(meeting.valid);
static_assert(meeting.names[0] == ctfx::name_t("clone") && meeting.names[1] == ctfx::name_t("clone_2_1") &&
              meeting.names[2] == ctfx::name_t("clone_2") && meeting.names[3] == ctfx::name_t("clone_2_3"));

// An explicit base of another op shares the bitmap of that name: slice nodes named "clone" continue
// after the clones (one counter per op kind, one bitmap per base).
constexpr auto shared = emit_slices<3>({{{op::clone, ""}, {op::slice, "clone"}, {op::clone, ""}}});
static_assert(shared.valid);
static_assert(shared.names[0] == ctfx::name_t("clone") && shared.names[1] == ctfx::name_t("clone_2") &&
              shared.names[2] == ctfx::name_t("clone_3"));

// A base longer than 20 characters (its suffix could be cut at max_name) takes the set of names.
constexpr auto long_base = emit_slices<2>({{{op::slice, "a_very_long_base_name_x"}, {op::slice, "a_very_long_base_name_x"}}});
static_assert(long_base.valid);
static_assert(long_base.names[0] == ctfx::name_t("a_very_long_base_name_x") &&
              long_base.names[1] == ctfx::name_t("a_very_long_base_name_x_1"));

// A 29-character base, twelve times: from the tenth suffix on the base is cut to fit it, and every
// name stays unique (a cut suffix made base_1 and base_10 the same name, and the search for a free
// one never ended).
constexpr std::array<std::pair<ctfx::op_kind, std::string_view>, 12> twelve_long = [] {
  std::array<std::pair<ctfx::op_kind, std::string_view>, 12> a{};
  for (auto& x : a) x = {ctfx::op_kind::slice, "abcdefghijklmnopqrstuvwxyz012"};
  return a;
}();
constexpr auto longest = emit_slices<12>(twelve_long);
static_assert(longest.valid);
static_assert(longest.names[0] == ctfx::name_t("abcdefghijklmnopqrstuvwxyz012") &&
              longest.names[9] == ctfx::name_t("abcdefghijklmnopqrstuvwxyz012_9") &&
              longest.names[10] == ctfx::name_t("abcdefghijklmnopqrstuvwxyz01_10") &&
              longest.names[11] == ctfx::name_t("abcdefghijklmnopqrstuvwxyz01_11"));

}  // namespace

TEST_CASE("rebuilder names: FX suffixes past the old graph's names, unique, at run time as at compile time") {
  const auto r = emit_slices<3>({{{op::slice, ""}, {op::slice, ""}, {op::slice, ""}}});
  CHECK(r.valid);
  CHECK(std::string(r.names[0].view()) == "slice_2");
  CHECK(std::string(r.names[1].view()) == "slice_4");
  CHECK(std::string(r.names[2].view()) == "slice_5");
  const auto m = emit_slices<4>({{{op::clone, ""}, {op::clone, "clone_2"}, {op::clone, ""}, {op::clone, "clone_2"}}});
  CHECK(m.valid);
  CHECK(std::string(m.names[1].view()) == "clone_2_1");
  CHECK(std::string(m.names[2].view()) == "clone_2");
  CHECK(std::string(m.names[3].view()) == "clone_2_3");  // one counter per op kind
}
