// ctfx/passes/report.hpp — what reinplacing decided, candidate by candidate, as constexpr data.
//
// Every node the pass could run in place is a candidate (one per mutated argument for user ops,
// whose arguments are refined one by one; one per node otherwise). A candidate records whether it was
// reinplaced, why not (the rule, and the node that blocks it), the bytes at stake, and whether it
// counts as a missed opportunity in Inductor's sense (ReinplaceCounters: missed tensors and missed
// static bytes per trigger; an argument cloned because its storage was already reinplaced, or a
// scatter left functional for fusion, is not a miss).
//
// It also records two things a program may not mean, which are not errors (the program is run as
// written) but are printed as warnings and can be static_assert-ed away:
//   - unused_values(): a value nothing uses — not an output, not written back by `update`, read by
//     no node — which dead-code elimination drops without running it (e.g. an index_put whose
//     `update` was forgotten: the write vanishes);
//   - old_input_reads(): a node that reads a graph input after its new value was computed, for an
//     input the program updates: it reads the old value (as the functional graph says), and keeping
//     the old value alive costs a full clone of the input.
//
//   constexpr auto r = ctfx::reinplace_report_of<G>();   // or pipeline<G>::report
//   static_assert(r.all_inplace() && r.clones() == 0 && r.missed_bytes() == 0);
//   static_assert(r.unused_values() == 0 && r.old_input_reads() == 0);
//   std::puts(ctfx::to_text(r).c_str());
#pragma once
#include "../core/diagnostics_push.hpp"
#include <array>
#include <string>
#include <vector>
#include "../graph/ir.hpp"

namespace ctfx {

/// Why a reinplacing candidate was, or was not, run in place (one per candidate in the report; explain() gives a sentence).
enum class reinplace_reason : std::uint8_t {
  reinplaced,
  blocking_use,             // a later node reads the storage that would be overwritten (blocker)
  missing_epilogue,         // a graph input (or a view of one) that the program never copy_-es back
  observed_after_epilogue,  // the result is read after the copy_ that overwrites the input (#198094)
  result_escapes,           // the result would reach the output as an alias of an input (#195451)
  view_copy_back_layout,    // the copy_ back into the input reads the result with another layout
  aliasing_list_elements,   // two elements of a mutated list share a storage
  same_storage_reinplaced,  // another argument of this node on this storage was reinplaced: cloned
  read_by_other_argument,   // another argument of this node reads what would be written (#198031, #197829)
  internal_overlap,         // the mutated tensor reaches an element twice (expanded)
  layout_change,            // the in-place result would have another layout and feeds views
  profitability,            // should_reinplace_scatter: the functional form fuses better
  no_storage,               // the mutated argument is not a tensor with a storage
  not_inplaceable,          // marked require_inplace, but no in-place form exists
  // A write-back (update's copy_) whose value is computed into a buffer and copied (plan/write_backs.hpp):
  update_shared_value,      // the value has another reader that cannot read the input instead
  update_not_fusible,       // the value's op is not computed into a copy_ (reduction, index op, cat, ...)
  update_fusion_rule,       // fusion's writer-index-map or no-write-between rule keeps the value apart
};

/// The reason's name as the report prints it.
constexpr std::string_view name_of(reinplace_reason r) {
  switch (r) {
    case reinplace_reason::reinplaced: return "reinplaced";
    case reinplace_reason::blocking_use: return "blocking-use";
    case reinplace_reason::missing_epilogue: return "missing-epilogue";
    case reinplace_reason::observed_after_epilogue: return "observed-after-epilogue";
    case reinplace_reason::result_escapes: return "result-escapes";
    case reinplace_reason::view_copy_back_layout: return "view-copy-back-layout";
    case reinplace_reason::aliasing_list_elements: return "aliasing-list-elements";
    case reinplace_reason::same_storage_reinplaced: return "same-storage-reinplaced";
    case reinplace_reason::read_by_other_argument: return "read-by-other-argument";
    case reinplace_reason::internal_overlap: return "internal-overlap";
    case reinplace_reason::layout_change: return "layout-change";
    case reinplace_reason::profitability: return "profitability";
    case reinplace_reason::no_storage: return "no-storage";
    case reinplace_reason::not_inplaceable: return "not-inplaceable";
    case reinplace_reason::update_shared_value: return "update-shared-value";
    case reinplace_reason::update_not_fusible: return "update-not-fusible";
    case reinplace_reason::update_fusion_rule: return "update-fusion-rule";
  }
  return "?";
}

/// A sentence for messages: what blocks the candidate.
constexpr std::string_view explain(reinplace_reason r) {
  switch (r) {
    case reinplace_reason::reinplaced: return "reinplaced";
    case reinplace_reason::blocking_use: return "a later use reads the storage it would overwrite";
    case reinplace_reason::missing_epilogue: return "it mutates a graph input that the program never writes back (no copy_ epilogue)";
    case reinplace_reason::observed_after_epilogue: return "its result is read after the copy_ that overwrites the input (pytorch#198094)";
    case reinplace_reason::result_escapes: return "its result would be returned as an alias of a graph input (pytorch#195451)";
    case reinplace_reason::view_copy_back_layout: return "the copy_ back into the input does not preserve the result's layout";
    case reinplace_reason::aliasing_list_elements: return "two elements of the mutated list alias each other";
    case reinplace_reason::same_storage_reinplaced: return "another argument on the same storage was already reinplaced";
    case reinplace_reason::read_by_other_argument: return "another argument of the same node reads the storage it would write (pytorch#198031)";
    case reinplace_reason::internal_overlap: return "the mutated tensor has internal overlap";
    case reinplace_reason::layout_change: return "the in-place result would change layout under a view";
    case reinplace_reason::profitability: return "the functional scatter fuses better (should_reinplace_scatter)";
    case reinplace_reason::no_storage: return "the mutated argument has no storage";
    case reinplace_reason::not_inplaceable: return "the op has no in-place form";
    case reinplace_reason::update_shared_value:
      return "its value has another reader that cannot read the input instead (a view, an output, a read of the old value), so it is computed into a buffer and copied";
    case reinplace_reason::update_not_fusible:
      return "its value comes from an op that does not compute into a copy_ (a reduction, an index op, a cat, a user op), so it is computed into a buffer and copied";
    case reinplace_reason::update_fusion_rule:
      return "fusion keeps its value apart (it reads the input through another index map, or past another write), so it is computed into a buffer and copied";
  }
  return "?";
}

/// The counters' triggers. Inductor counts only auto_functionalized and user kernels; ctfx also
/// counts its built-in inplaceable ops, foreach ops and user op pairs (trigger `aten`, `foreach`, `user_pair`).
enum class reinplace_trigger : std::uint8_t { auto_func, user_kernel, aten, foreach, user_pair, count_ };

/// The trigger's name as Inductor's counters print it ("AUTO_FUNC_V1").
constexpr std::string_view name_of(reinplace_trigger t) {
  switch (t) {
    case reinplace_trigger::auto_func: return "AUTO_FUNC_V1";
    case reinplace_trigger::user_kernel: return "TRITON_OPS";
    case reinplace_trigger::aten: return "ATEN";
    case reinplace_trigger::foreach: return "FOREACH";
    case reinplace_trigger::user_pair: return "USER_PAIR";
    case reinplace_trigger::count_: break;
  }
  return "?";
}
/// Whether Inductor counts this trigger too (auto_functionalized and user kernels).
constexpr bool is_inductor_trigger(reinplace_trigger t) {
  return t == reinplace_trigger::auto_func || t == reinplace_trigger::user_kernel;
}

/// One reinplacing candidate: the node, the mutated tensor, the verdict with its reason and blocker, the bytes at stake.
struct reinplace_candidate {
  std::int32_t node = -1;         ///< id in the graph the pass was given
  name_t name{};                  ///< that node's name
  op_kind op = op_kind::count_;  ///< the node's op
  std::int32_t arg = -1;          ///< argument position (first element of a list), -1: all mutated args
  name_t arg_name{};              ///< the mutated tensor
  std::int32_t tensors = 1;       ///< tensors covered (list elements, or every mutated argument)
  bool reinplaced = false;  ///< whether it runs in place
  reinplace_reason why = reinplace_reason::reinplaced;  ///< why not (reinplaced when it does)
  std::int32_t blocker = -1;      ///< the node that blocks it, when one does
  name_t blocker_name{};  ///< the blocking node's name
  sym_expr bytes{};               ///< bytes of the mutated tensors: what a clone costs
  index_t static_bytes = 0;       ///< the same where static (Inductor counts static shapes only)
  reinplace_trigger trigger = reinplace_trigger::aten;  ///< the counter it belongs to (Inductor's ReinplaceCounters)
  bool missed = false;            ///< a missed opportunity (Inductor's accounting)
  std::int32_t clones = 0;        ///< tensors this candidate still clones (full copies)
  bool required = false;          ///< the user marked it require_inplace
  bool reads_old_input = false;   ///< blocking_use by a read of the old value of a graph input the program updates
  name_t input_name{};            ///< that input
};

/// A value of the program's graph (before any pass) that nothing uses: the result of an op computed
/// from tensor arguments (not a view, not a factory), not an output, not written back by `update`,
/// not read by another node, and without an effect of its own. Dead-code elimination drops it, and
/// every value only it reads.
struct unused_value {
  std::int32_t node = -1;         ///< its id in the program's graph
  name_t name{};                  ///< its name
  op_kind op = op_kind::count_;   ///< its op
};

/// How many unused values a frozen report lists by name (unused_values() counts them all).
inline constexpr std::size_t max_listed_unused = 8;

/// The pass's log while it runs (inside one constant evaluation).
struct reinplace_log {
  std::vector<reinplace_candidate> items;  ///< the candidates, in program order
  std::vector<unused_value> unused;  ///< the program's values nothing uses (see unused_value)
};

/// The frozen report: usable in static_assert.
template <std::size_t N>
struct reinplace_report {
  std::array<reinplace_candidate, N> items{};  ///< the candidates, in program order
  std::int32_t unused_count = 0;                                  ///< see unused_values()
  std::array<unused_value, max_listed_unused> unused_listed{};     ///< the first max_listed_unused of them

  /// Values of the program that nothing uses, dropped by dead-code elimination (a forgotten
  /// `update` or output): `static_assert(report.unused_values() == 0)` makes them compile errors.
  constexpr std::int32_t unused_values() const { return unused_count; }
  /// Candidates left functional because a later node reads the graph input they would update: that
  /// node reads the input's old value, and the update clones the whole input.
  /// `static_assert(report.old_input_reads() == 0)` makes them compile errors.
  constexpr std::int32_t old_input_reads() const {
    std::int32_t n = 0;
    for (const auto& c : items) n += (!c.reinplaced && c.reads_old_input) ? 1 : 0;
    return n;
  }
  /// Warnings: unused values plus reads of an input's old value.
  constexpr std::int32_t warnings() const { return unused_values() + old_input_reads(); }

  /// The number of candidates.
  static constexpr std::size_t size() { return N; }
  /// Whether every candidate runs in place.
  constexpr bool all_inplace() const {
    for (const auto& c : items) if (!c.reinplaced && c.why != reinplace_reason::same_storage_reinplaced) return false;
    return true;
  }
  /// The number of candidates reinplaced.
  constexpr std::int32_t reinplaced() const {
    std::int32_t n = 0;
    for (const auto& c : items) n += c.reinplaced;
    return n;
  }
  /// Full-buffer clones left in the program by candidates that stay functional.
  constexpr std::int32_t clones() const {
    std::int32_t n = 0;
    for (const auto& c : items) n += c.clones;
    return n;
  }
  /// ctfx's counters: every trigger.
  constexpr std::int32_t missed() const {
    std::int32_t n = 0;
    for (const auto& c : items) if (c.missed) n += 1;
    return n;
  }
  /// Bytes of the missed candidates (static shapes).
  constexpr index_t missed_bytes() const {
    index_t n = 0;
    for (const auto& c : items) if (c.missed) n += c.static_bytes;
    return n;
  }
  /// Missed candidates of one trigger.
  constexpr std::int32_t missed(reinplace_trigger t) const {
    std::int32_t n = 0;
    for (const auto& c : items) if (c.missed && c.trigger == t) n += 1;
    return n;
  }
  /// Bytes of the missed candidates of one trigger.
  constexpr index_t missed_bytes(reinplace_trigger t) const {
    index_t n = 0;
    for (const auto& c : items) if (c.missed && c.trigger == t) n += c.static_bytes;
    return n;
  }
  /// Inductor's ReinplaceCounters.get_total_missed() / get_total_missed_bytes().
  constexpr std::int32_t inductor_missed() const {
    return missed(reinplace_trigger::auto_func) + missed(reinplace_trigger::user_kernel);
  }
  /// Inductor's get_total_missed_bytes().
  constexpr index_t inductor_missed_bytes() const {
    return missed_bytes(reinplace_trigger::auto_func) + missed_bytes(reinplace_trigger::user_kernel);
  }
  /// The index of node `name`'s candidate (argument `arg` for user ops; -1: the first one), or -1.
  constexpr std::int32_t index_of(std::string_view name, std::int32_t arg = -1) const {
    for (std::size_t i = 0; i < N; ++i)
      if (items[i].name.view() == name && (arg < 0 || items[i].arg == arg)) return static_cast<std::int32_t>(i);
    return -1;
  }
  /// Node `name`'s candidate, or nullptr.
  constexpr const reinplace_candidate* find(std::string_view name, std::int32_t arg = -1) const {
    std::int32_t i = index_of(name, arg);
    return i < 0 ? nullptr : &items[static_cast<std::size_t>(i)];
  }
  /// Whether node `name`'s candidate was reinplaced.
  constexpr bool is_reinplaced(std::string_view name, std::int32_t arg = -1) const {
    std::int32_t i = index_of(name, arg);
    return i >= 0 && items[static_cast<std::size_t>(i)].reinplaced;
  }
  /// Why node `name`'s candidate was not reinplaced.
  constexpr reinplace_reason reason(std::string_view name, std::int32_t arg = -1) const {
    std::int32_t i = index_of(name, arg);
    return i < 0 ? reinplace_reason::not_inplaceable : items[static_cast<std::size_t>(i)].why;
  }
  /// The name of the node that blocks `name`'s candidate.
  constexpr std::string_view blocker(std::string_view name, std::int32_t arg = -1) const {
    std::int32_t i = index_of(name, arg);
    return i < 0 ? std::string_view{} : items[static_cast<std::size_t>(i)].blocker_name.view();
  }
};

/// Records the program's unused values in report `r` (their count, and the first max_listed_unused).
template <std::size_t N>
constexpr void set_unused(reinplace_report<N>& r, const std::vector<unused_value>& unused) {
  r.unused_count = static_cast<std::int32_t>(unused.size());
  for (std::size_t k = 0; k < unused.size() && k < max_listed_unused; ++k) r.unused_listed[k] = unused[k];
}

/// The run-time log as a compile-time report of its N candidates.
template <std::size_t N>
constexpr reinplace_report<N> freeze_report(const reinplace_log& log) {
  reinplace_report<N> r{};
  std::size_t i = 0;
  for (auto& x : r.items) x = log.items[i++];
  set_unused(r, log.unused);
  return r;
}

// ----- run-time printer -----

/// One candidate as a report line: the node, the argument, the decision and its reason.
inline std::string to_text(const reinplace_candidate& c) {
  // Appended piece by piece: g++ 12 at -O2+ reports a false -Wrestrict overlap for a literal
  // prepended to a temporary string (`"%" + std::string(...)`).
  std::string s(1, '%');
  s += c.name.view();
  s += " (";
  s += name_of(c.op);
  s += ")";
  if (c.arg >= 0) s += " arg " + std::to_string(c.arg) + " %" + std::string(c.arg_name.view());
  else if (!c.arg_name.empty()) s += " on %" + std::string(c.arg_name.view());
  if (c.tensors > 1) s += " [" + std::to_string(c.tensors) + " tensors]";
  s += ": ";
  if (c.reinplaced) s += "reinplaced";
  else {
    s += "not reinplaced, " + std::string(name_of(c.why));
    if (c.blocker >= 0) s += " (by %" + std::string(c.blocker_name.view()) + ")";
  }
  s += ", " + std::to_string(static_cast<long long>(c.static_bytes)) + " bytes";
  if (c.clones) s += ", " + std::to_string(c.clones) + " clone" + (c.clones > 1 ? "s" : "");
  if (c.missed) s += ", missed (" + std::string(name_of(c.trigger)) + ")";
  if (c.required) s += ", required";
  return s;
}

/// The warning line of a candidate that reads an input's old value (empty if it does not).
inline std::string old_input_warning(const reinplace_candidate& c) {
  if (c.reinplaced || !c.reads_old_input) return {};
  const std::string in(c.input_name.view()), arg(c.arg_name.view());
  std::string s = "warning: old-input-read: %";
  s += c.blocker_name.view();
  s += std::string(" reads input %") + in + " after its new value %" + std::string(c.name.view()) +
       " was computed: it reads the old value, and keeping it clones all " +
       std::to_string(static_cast<long long>(c.static_bytes)) + " bytes of %" + arg + " (read the new value %" +
       std::string(c.name.view()) + " instead, or read before the update)";
  return s;
}
/// The warning line of an unused value.
inline std::string unused_warning(const unused_value& u) {
  std::string s = "warning: unused-value: %";
  s += u.name.view();
  s += " (";
  s += name_of(u.op);
  s += ") is used by nothing (not an output, not written back by update): it is dropped, and never runs "
       "(pass it to g.output() or g.update(), or remove it)";
  return s;
}
/// Every warning of a log, one line each ("  warning: ...\n").
inline std::string warnings_text(const reinplace_log& log) {
  std::string s;
  for (const auto& u : log.unused) s += "  " + unused_warning(u) + "\n";
  for (const auto& c : log.items)
    if (std::string w = old_input_warning(c); !w.empty()) s += "  " + w + "\n";
  return s;
}
/// Every warning of a frozen report, one line each.
template <std::size_t N>
inline std::string warnings_text(const reinplace_report<N>& r) {
  std::string s;
  for (std::size_t k = 0; k < r.unused_listed.size() && k < static_cast<std::size_t>(r.unused_count); ++k)
    s += "  " + unused_warning(r.unused_listed[k]) + "\n";
  if (r.unused_count > static_cast<std::int32_t>(max_listed_unused))
    s += "  warning: unused-value: " + std::to_string(r.unused_count - static_cast<std::int32_t>(max_listed_unused)) +
         " more unused values\n";
  for (const auto& c : r.items)
    if (std::string w = old_input_warning(c); !w.empty()) s += "  " + w + "\n";
  return s;
}

/// The whole report: the counts, one line per candidate, the warnings and Inductor's counters.
template <std::size_t N>
inline std::string to_text(const reinplace_report<N>& r) {
  std::string s = "reinplace report: " + std::to_string(r.reinplaced()) + " of " + std::to_string(N) +
                  " candidates reinplaced, " + std::to_string(r.clones()) + " clones, missed " +
                  std::to_string(r.missed()) + " tensors / " + std::to_string(static_cast<long long>(r.missed_bytes())) +
                  " bytes\n";
  for (const auto& c : r.items) s += "  " + to_text(c) + "\n";
  s += warnings_text(r);
  for (int t = 0; t < static_cast<int>(reinplace_trigger::count_); ++t) {
    auto tr = static_cast<reinplace_trigger>(t);
    if (r.missed(tr))
      s += "  missed_tensors_" + std::string(name_of(tr)) + " = " + std::to_string(r.missed(tr)) + ", missed_bytes_" +
           std::string(name_of(tr)) + " = " + std::to_string(static_cast<long long>(r.missed_bytes(tr))) + "\n";
  }
  return s;
}
/// The run-time log, as the report prints.
inline std::string to_text(const reinplace_log& log) {
  std::string s;
  for (const auto& c : log.items) s += to_text(c) + "\n";
  return s + warnings_text(log);
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
