// ctfx/graph/diagnostic.hpp — the rules a graph can break and the error value that names the node
// and the rule. Builders and passes record the first error instead of throwing, so that a compile
// error can carry the full text in a template argument (see graph/graph.hpp).
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include <string_view>

namespace ctfx {

/// The rules a graph, a pass or a run can break; a ctfx::diagnostic names one (name_of(rule) gives its
/// name in messages, "[rule no-new-aliasing]"), with the node and the fix.
enum class rule : std::uint8_t {
  ok,
  broadcast_shapes,       // elementwise operands whose shapes do not broadcast
  dtype_mismatch,         // operands whose dtypes must agree and do not
  scatter_source_shape,   // a scatter source that does not fit the view it is scattered into
  index_out_of_range,     // a static slice/select/diagonal/as_strided outside its dimension
  index_dtype,            // an index tensor that is not integer or bool
  undefined_node,         // a handle that names no node of this graph
  use_before_definition,  // an argument defined after its user
  mutation_outside_epilogue,  // an in-place op in a functional graph, other than the copy_ epilogue
  epilogue_target,        // a copy_ / update into something that is not a graph input
  bad_dimension,          // a dim argument outside [-rank, rank)
  view_shape,             // view/reshape/expand sizes incompatible with the input
  rank_limit,             // more than ctfx::max_rank dimensions
  symbolic_limit,         // a symbolic extent too complex for sym_expr
  metadata_inconsistent,  // a node whose stored metadata differs from its op's rule
  stride_order,           // a result whose stride order symbolic extents leave undecided
  list_arguments,         // list arguments of unequal length or a bad element
  custom_schema,          // a custom op called against its declared schema
  duplicate_name,         // two nodes (or inputs) with one name
  bad_argument,           // any other invalid argument (named in the text)
  require_inplace,        // a node marked require_inplace that could not be reinplaced
  aliasing,               // a rewrite would create aliasing the program did not have
  fx_text,                // FX graph text (graph/fx_parse.hpp): a malformed line or an unsupported op
  result_layout,          // a user op's declared result layout that is not one (ops/custom.hpp)
  planned_buffers,        // compiled<G>::require_no_buffers(), and the plan holds buffers
};

// Each rule: its enumerator, its name in messages, and the usual fix (the compile error prints the
// fix in plain text under every compiler: graph/graph.hpp).
#define CTFX_RULE_LIST(X)                                                                                     \
  X(broadcast_shapes, "broadcast-shapes",                                                                     \
    "make the shapes equal, or 1 where they differ (unsqueeze, expand or reshape an operand)")                \
  X(dtype_mismatch, "dtype-mismatch", "convert one operand with .to(dtype)")                                  \
  X(scatter_source_shape, "scatter-source-fits-view", "give the source the shape of the view it is written into") \
  X(index_out_of_range, "static-index-in-range", "keep static indices inside the dimension's extent")         \
  X(index_dtype, "index-dtype", "index with i32, i64 or b8 tensors (.to(ctfx::i64))")                          \
  X(undefined_node, "undefined-node", "use only handles returned by this graph's builder")                    \
  X(use_before_definition, "use-before-definition", "define each argument before its user")                   \
  X(mutation_outside_epilogue, "functional-except-epilogue",                                                  \
    "write the functional op and b.update(x, value); reinplacing makes it in-place")                          \
  X(epilogue_target, "epilogue-writes-an-input", "update only graph inputs (b.input)")                        \
  X(bad_dimension, "dimension-in-range", "name a dimension in [-rank, rank)")                                 \
  X(view_shape, "view-shape",                                                                                 \
    "keep the element count (view), grow only size-1 dimensions (expand), or reshape a non-contiguous input") \
  X(rank_limit, "rank-limit", "keep at most ctfx::max_rank dimensions")                                       \
  X(symbolic_limit, "symbolic-expression-limit", "use fewer symbols in one extent, or static extents")        \
  X(metadata_inconsistent, "metadata-consistent", "the node's metadata must be what its op's rule derives")   \
  X(stride_order, "result-stride-order",                                                                      \
    "make the extents that order the operands' strides static, or make the operands contiguous() first")      \
  X(list_arguments, "list-arguments", "pass lists of equal length and valid elements")                        \
  X(custom_schema, "custom-op-schema", "call the op with the arguments its schema declares")                  \
  X(duplicate_name, "unique-names", "give each node and input its own name (.named)")                         \
  X(bad_argument, "valid-argument", "pass the argument the message names a valid value")                      \
  X(require_inplace, "require-inplace",                                                                       \
    "remove the later use that blocks it (named in the text), or drop require_inplace()")                     \
  X(aliasing, "no-new-aliasing", "a pass created aliasing: report the graph to ctfx")                         \
  X(fx_text, "fx-text", "correct the FX line named, or register the op")                                     \
  X(planned_buffers, "no-planned-buffers",                                                                   \
    "print ctfx::listing<plan>() and plan::report: an update whose value has another reader, a view or a reduction keeps a buffer") \
  X(result_layout, "user-result-layout", "declare fresh_layout::permuted (a permutation of the result's dimensions), ::like(k) (an argument of its extents) or ::strides (no two elements at one address, static extents)")

/// The rule's name as messages print it ("undefined-node").
constexpr std::string_view name_of(rule r) {
  switch (r) {
    case rule::ok: return "ok";
#define CTFX_RULE_NAME(R, NAME, FIX) case rule::R: return NAME;
    CTFX_RULE_LIST(CTFX_RULE_NAME)
#undef CTFX_RULE_NAME
  }
  return "?";
}

/// The usual fix of a broken rule, in a sentence.
constexpr std::string_view fix_of(rule r) {
  switch (r) {
    case rule::ok: return "";
#define CTFX_RULE_FIX(R, NAME, FIX) case rule::R: return FIX;
    CTFX_RULE_LIST(CTFX_RULE_FIX)
#undef CTFX_RULE_FIX
  }
  return "";
}

#if defined(__has_builtin)
#if __has_builtin(__builtin_COLUMN)
#define CTFX_CALLER_COLUMN __builtin_COLUMN()
#endif
#endif
#ifndef CTFX_CALLER_COLUMN
#define CTFX_CALLER_COLUMN 0  // g++ 12 has __builtin_LINE and __builtin_FILE, not __builtin_COLUMN
#endif

/// Where a builder call was written (its default argument source_loc::current() takes the
/// caller's): the compile error names the user's line of the call that broke a rule.
struct source_loc {
  const char* file = "";  ///< the file, as the compiler was given it
  std::int32_t line = 0;  ///< 1-based; 0 when not known
  std::int32_t column = 0;  ///< 1-based; 0 when not known
  /// The caller's position (std::source_location needs __builtin_source_location, which clang 14 lacks).
  static constexpr source_loc current(const char* f = __builtin_FILE(), int l = __builtin_LINE(),
                                      int c = CTFX_CALLER_COLUMN) {
    return {f, l, c};
  }
};

/// The first error found: the rule, the node (index, -1 when none) and a sentence that names both.
struct diagnostic {
  rule r = rule::ok;  ///< the broken rule, or rule::ok
  std::int32_t node = -1;  ///< the node, or -1
  std::int32_t line = 0;  ///< the user's line of the builder call that broke the rule, 0 when not known
  std::int32_t column = 0;  ///< its column, 0 when not known
  char text[256]{};  ///< the sentence, zero-terminated
  /// Whether no rule is broken.
  constexpr bool ok() const { return r == rule::ok; }
  /// The sentence.
  constexpr std::string_view message() const {
    std::size_t n = 0;
    while (n < sizeof(text) && text[n]) ++n;
    return {text, n};
  }
  /// Replaces the sentence. (A fresh value written up to the text's end: g++ prints a template
  /// argument's characters up to the last one written, so the zeros after it stay unwritten.)
  constexpr void set_message(std::string_view m) {
    diagnostic d{r, node, line, column};
    for (std::size_t k = 0; k < m.size() && k + 1 < sizeof(text); ++k) d.text[k] = m[k];
    *this = d;
  }
  /// Records where the rule was broken: "node 'x' (op): ..." becomes "node 'x' (op) at file:line: ..."
  /// ("at line N" when the file is not known).
  /// The file is named without its directories; the text keeps its end ("[rule ...]") when it must
  /// be cut.
  constexpr void locate(source_loc at) {
    if (ok() || line != 0 || at.line <= 0) return;
    line = at.line;
    column = at.column;
    const std::string_view f = at.file;
    std::size_t base = f.size();
    while (base > 0 && f[base - 1] != '/' && f[base - 1] != '\\') --base;
    char where[96]{};
    std::size_t w = 0;
    auto put = [&](std::string_view v) { for (char c : v) if (w + 1 < sizeof(where)) where[w++] = c; };
    auto put_int = [&](std::int32_t v) {
      char d[12]{};
      int k = 0;
      do { d[k++] = static_cast<char>('0' + v % 10); v /= 10; } while (v > 0);
      while (k) if (w + 1 < sizeof(where)) where[w++] = d[--k]; else --k;
    };
    if (f.empty()) {  // a line kept without its file (require_inplace(): ir nodes hold no file name)
      put(" at line ");
    } else {
      put(" at "); put(f.substr(base)); put(":");
    }
    put_int(line);
    const std::string_view old = message();
    // After "node 'name' (op)" when the text starts so, else before the text.
    std::size_t cut = 0;
    const bool about_node = old.substr(0, 6) == "node '";
    if (about_node) {
      const std::size_t colon = old.find("): ");
      cut = colon == std::string_view::npos ? 0 : colon + 1;
    }
    char out[sizeof(text)]{};
    std::size_t n = 0;
    auto emit = [&](std::string_view v) { for (char c : v) if (n + 1 < sizeof(out)) out[n++] = c; };
    if (cut > 0) {
      emit(old.substr(0, cut)); emit({where, w}); emit(old.substr(cut));
    } else {
      emit(std::string_view(where, w).substr(1)); emit(": "); emit(old);
    }
    if (n + 1 == sizeof(out) && !old.empty() && old.back() == ']') {  // cut: keep "... [rule name]"
      const std::size_t tail = old.size() - old.rfind(" [rule ");
      n = sizeof(out) - 1 - tail - 3;
      emit("...");
      emit(old.substr(old.size() - tail));
    }
    set_message({out, n});
  }
};

/// A constexpr text appender (std::string is not usable in every constant evaluator we target).
template <std::size_t N>
struct text_buf {
  char s[N]{};  ///< the text
  std::size_t n = 0;  ///< its length
  /// Appends text (truncated at the capacity).
  constexpr text_buf& operator<<(std::string_view v) {
    for (char c : v) if (n + 1 < N) s[n++] = c;
    return *this;
  }
  /// Appends a decimal integer.
  constexpr text_buf& operator<<(long long v) {
    char tmp[24]{};
    int k = 0;
    bool neg = v < 0;
    unsigned long long u = neg ? 0ull - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
    do { tmp[k++] = static_cast<char>('0' + u % 10); u /= 10; } while (u);
    if (neg && n + 1 < N) s[n++] = '-';
    while (k) if (n + 1 < N) s[n++] = tmp[--k]; else --k;
    return *this;
  }
  /// Appends a decimal integer.
  constexpr text_buf& operator<<(int v) { return *this << static_cast<long long>(v); }
  /// Appends a decimal integer.
  constexpr text_buf& operator<<(long v) { return *this << static_cast<long long>(v); }
  /// Appends a character.
  constexpr text_buf& operator<<(char c) { if (n + 1 < N) s[n++] = c; return *this; }
  /// The text so far.
  constexpr std::string_view view() const { return {s, n}; }
};

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
