// The verifier (graph/verify.hpp) on hand-corrupted graphs: each corruption breaks one invariant of
// DESIGN.md and must be reported with the node and the rule. Checked at compile time (the rule and
// the node) and at run time (the sentence).
#include <doctest/doctest.h>
#include <ctfx.hpp>
#include <string>

namespace {

using ctfx::op_kind;
using ctfx::rule;

// x, y inputs; add; a view of the add; a clone; the epilogue x <- add; the output.
constexpr ctfx::ir base() {
  return ctfx::build_checked([](ctfx::builder& g) {
    auto x = g.input("x", ctfx::f32, {4, 8});
    auto y = g.input("y", ctfx::f32, {4, 8});
    auto a = x + y;
    auto v = a.slice(0, 1);
    auto c = v.clone();
    g.update(x, a);
    g.output(c, v);
  });
}
// Node ids in base().
constexpr std::int32_t X = 0, Y = 1, ADD = 2, SLICE = 3, CLONE = 4, COPY = 5, OUT = 6;

static_assert(base().size() == 7 && base()[Y].op == op_kind::placeholder && base()[COPY].op == op_kind::copy_ &&
              base()[OUT].op == op_kind::output);
static_assert(ctfx::verify(base()).ok());
static_assert(ctfx::verify(base(), ctfx::verify_level::structure).ok());

// ----- corruptions -----
constexpr ctfx::ir wrong_size() {
  ctfx::ir g = base();
  g[ADD].meta.size[0] = 5;
  return g;
}
constexpr ctfx::ir wrong_stride() {
  ctfx::ir g = base();
  g[SLICE].meta.stride[0] = 16;
  return g;
}
constexpr ctfx::ir wrong_offset() {
  ctfx::ir g = base();
  g[SLICE].meta.offset = 0;
  return g;
}
constexpr ctfx::ir wrong_dtype() {
  ctfx::ir g = base();
  g[CLONE].meta.dt = ctfx::f16;
  return g;
}
// A view that claims a storage of its own.
constexpr ctfx::ir view_fresh_storage() {
  ctfx::ir g = base();
  g[SLICE].meta.storage = g.fresh_storage();
  return g;
}
// A fresh result that claims its argument's storage (an alias the program does not have).
constexpr ctfx::ir clone_shares_storage() {
  ctfx::ir g = base();
  g[CLONE].meta.storage = g[SLICE].meta.storage;
  return g;
}
// The add reads the slice, which is defined after it.
constexpr ctfx::ir arg_after_use() {
  ctfx::ir g = base();
  g.args[static_cast<std::size_t>(g[ADD].arg0 + 1)] = SLICE;
  return g;
}
constexpr ctfx::ir arg_out_of_graph() {
  ctfx::ir g = base();
  g.args[static_cast<std::size_t>(g[CLONE].arg0)] = 99;
  return g;
}
// The clone becomes a second output node in the middle of the graph.
constexpr ctfx::ir second_output() {
  ctfx::ir g = base();
  g[CLONE].op = op_kind::output;
  return g;
}
constexpr ctfx::ir no_output() {
  ctfx::ir g = base();
  g.nodes.pop_back();
  return g;
}
// The epilogue writes the add instead of the input x.
constexpr ctfx::ir copy_into_non_input() {
  ctfx::ir g = base();
  g.args[static_cast<std::size_t>(g[COPY].arg0)] = ADD;
  g[COPY].meta.storage = g[ADD].meta.storage;
  return g;
}
// The add becomes add_ (x.add_(y)): a mutation in a functional graph.
constexpr ctfx::ir inplace_in_functional() {
  ctfx::ir g = base();
  g[ADD].op = op_kind::add_;
  g[ADD].meta.storage = g[SLICE].meta.storage = g[X].meta.storage;  // the add and its view are x now
  return g;
}
// ... which is legal once the graph is marked reinplaced.
constexpr ctfx::ir inplace_after_reinplacing() {
  ctfx::ir g = inplace_in_functional();
  g.phase = ctfx::graph_phase::reinplaced;
  return g;
}
// The epilogue copy_ moved before the add: the add then follows the epilogue.
constexpr ctfx::ir node_after_epilogue() {
  ctfx::ir g = base();
  g[ADD].op = op_kind::copy_;
  g[ADD].meta.storage = g[SLICE].meta.storage = g[X].meta.storage;
  return g;
}
constexpr ctfx::ir duplicate_name() {
  ctfx::ir g = base();
  g[CLONE].name = ctfx::name_t("y");
  return g;
}
// An error recorded by the builder is returned as it is.
constexpr ctfx::ir recorded_error() {
  ctfx::ir g = base();
  g.fail(rule::aliasing, SLICE, "recorded earlier");
  return g;
}

constexpr bool reports(const ctfx::ir& g, rule r, std::int32_t node) {
  ctfx::diagnostic d = ctfx::verify(g);
  return d.r == r && d.node == node;
}
static_assert(reports(wrong_size(), rule::metadata_inconsistent, ADD));
static_assert(reports(wrong_stride(), rule::metadata_inconsistent, SLICE));
static_assert(reports(wrong_offset(), rule::metadata_inconsistent, SLICE));
static_assert(reports(wrong_dtype(), rule::metadata_inconsistent, CLONE));
static_assert(reports(view_fresh_storage(), rule::metadata_inconsistent, SLICE));
static_assert(reports(clone_shares_storage(), rule::metadata_inconsistent, CLONE));
static_assert(reports(arg_after_use(), rule::use_before_definition, ADD));
static_assert(reports(arg_out_of_graph(), rule::undefined_node, CLONE));
static_assert(reports(second_output(), rule::bad_argument, CLONE));
static_assert(reports(no_output(), rule::bad_argument, COPY));
static_assert(reports(copy_into_non_input(), rule::epilogue_target, COPY));
static_assert(reports(inplace_in_functional(), rule::mutation_outside_epilogue, ADD));
static_assert(ctfx::verify(inplace_after_reinplacing()).ok());
// After the epilogue's copy_ a view (the slice) may follow, the clone may not.
static_assert(reports(node_after_epilogue(), rule::mutation_outside_epilogue, CLONE));
static_assert(reports(duplicate_name(), rule::duplicate_name, CLONE));
static_assert(reports(recorded_error(), rule::aliasing, SLICE));

// Names are compared and hashed a word at a time: the characters after a name's end are zero, so
// equal texts are equal names, and different texts (also those that differ only near the end, or
// only in length) are different names with different hashes.
static_assert(ctfx::name_t("ab") == ctfx::name_t(std::string_view("ab\0cd", 5)));
static_assert(ctfx::name_t(std::string_view("ab\0cd", 5)).view() == "ab");
static_assert(!(ctfx::name_t("slice_scatter_12") == ctfx::name_t("slice_scatter_13")));
static_assert(!(ctfx::name_t("x") == ctfx::name_t("x_")));
static_assert(ctfx::detail::hash_name("slice_scatter_12") == ctfx::detail::hash_name(ctfx::name_t("slice_scatter_12")));
static_assert(ctfx::detail::hash_name("slice_scatter_12") != ctfx::detail::hash_name("slice_scatter_13"));
static_assert(ctfx::detail::hash_name("abcdefghijklmnopqrstuvwxyz01234") != ctfx::detail::hash_name("abcdefghijklmnopqrstuvwxyz01235"));
// FX's suffixes, into the zeroed tail: base, base_1, ...
static_assert(ctfx::with_suffix("add", 3, 0) == ctfx::name_t("add"));
static_assert(ctfx::with_suffix("slice_scatter", 13, 123) == ctfx::name_t("slice_scatter_123"));
// A long base is cut to leave the suffix whole (different suffixes stay different names).
static_assert(ctfx::with_suffix("abcdefghijklmnopqrstuvwxyz0123", 30, 45).view() == "abcdefghijklmnopqrstuvwxyz01_45");
static_assert(ctfx::with_suffix("abcdefghijklmnopqrstuvwxyz01234", 31, 7).view() == "abcdefghijklmnopqrstuvwxyz012_7");
static_assert(ctfx::with_suffix("abcdefghijklmnopqrstuvwxyz0", 27, 123).view() == "abcdefghijklmnopqrstuvwxyz0_123");
static_assert(!(ctfx::with_suffix("abcdefghijklmnopqrstuvwxyz0123", 30, 1) == ctfx::with_suffix("abcdefghijklmnopqrstuvwxyz0123", 30, 10)));
// Cut at max_name - 1 characters (the last byte stays the terminator).
static_assert(ctfx::name_t("abcdefghijklmnopqrstuvwxyz0123456789").view() == "abcdefghijklmnopqrstuvwxyz01234");

// The structural level trusts the stored metadata (the builder just computed it) but checks the
// rest.
static_assert(ctfx::verify(wrong_size(), ctfx::verify_level::structure).ok());
static_assert(ctfx::verify(arg_after_use(), ctfx::verify_level::structure).r == rule::use_before_definition);
static_assert(ctfx::verify(duplicate_name(), ctfx::verify_level::structure).r == rule::duplicate_name);
static_assert(ctfx::verify(copy_into_non_input(), ctfx::verify_level::structure).r == rule::epilogue_target);
// The links level (between the pipeline's passes) also leaves the names to the full check after the
// last pass; everything else it checks as the structural level does.
static_assert(ctfx::verify(duplicate_name(), ctfx::verify_level::links).ok());
static_assert(ctfx::verify(wrong_size(), ctfx::verify_level::links).ok());
static_assert(ctfx::verify(arg_after_use(), ctfx::verify_level::links).r == rule::use_before_definition);
static_assert(ctfx::verify(copy_into_non_input(), ctfx::verify_level::links).r == rule::epilogue_target);

std::string said(const ctfx::ir& g, ctfx::verify_level level = ctfx::verify_level::full) {
  return ctfx::to_string(ctfx::verify(g, level));
}

}  // namespace

TEST_CASE("ir verify: metadata that differs from the op's rule") {
  CHECK(said(wrong_size()) ==
        "node 'add' (add): stored metadata f32[5, 8] (storage 2) differs from its op's rule f32[4, 8] [rule metadata-consistent]");
  CHECK(said(wrong_dtype()) ==
        "node 'clone' (clone): stored metadata f16[3, 8] (storage 3) differs from its op's rule f32[3, 8] [rule metadata-consistent]");
  CHECK(said(view_fresh_storage()) ==
        "node 'slice' (slice): stored metadata f32[3, 8] (storage 4) differs from its op's rule f32[3, 8] [rule metadata-consistent]");
  CHECK(said(clone_shares_storage()) ==
        "node 'clone' (clone): stored metadata f32[3, 8] (storage 2) differs from its op's rule f32[3, 8] [rule metadata-consistent]");
}

TEST_CASE("ir verify: arguments defined after their use, or not at all") {
  CHECK(said(arg_after_use()) == "node 'add' (add): argument 1 ('slice') is defined after its use [rule use-before-definition]");
  CHECK(said(arg_after_use(), ctfx::verify_level::structure) ==
        "node 'add' (add): argument 'slice' is not defined before its use [rule use-before-definition]");
  CHECK(said(arg_out_of_graph()) == "node 'clone' (clone): argument 0 names no node of this graph [rule undefined-node]");
}

TEST_CASE("ir verify: one output node, at the end") {
  CHECK(said(second_output()) == "node 'clone' (output): a second output node [rule valid-argument]");
  CHECK(said(no_output()) == "the graph does not end with its output node [rule valid-argument]");
}

TEST_CASE("ir verify: functional except the copy_ epilogue into inputs") {
  CHECK(said(copy_into_non_input()) == "node 'copy_' (copy_): copy_ into 'add', which is not a graph input [rule epilogue-writes-an-input]");
  CHECK(said(inplace_in_functional()) ==
        "node 'add' (add_): mutates 'x' in a functional graph; write the functional op and put the result back with an "
        "epilogue update (g.update(input, value)) [rule functional-except-epilogue]");
  CHECK(said(inplace_after_reinplacing()) == "ok");
  CHECK(said(node_after_epilogue()) ==
        "node 'clone' (clone): follows the copy_ epilogue; only copy_ into inputs, and views, may come after it [rule functional-except-epilogue]");
}

TEST_CASE("ir verify: unique names, and errors recorded before verification") {
  CHECK(said(duplicate_name()) == "node 'y' (clone): has the same name as node 1 [rule unique-names]");
  CHECK(said(recorded_error()) == "recorded earlier");
  CHECK(said(base()) == "ok");
}
