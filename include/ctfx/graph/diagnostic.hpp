// ctfx/graph/diagnostic.hpp — the rules a graph can break and the error value that names the node
// and the rule. Builders and passes record the first error instead of throwing, so that a compile
// error can carry the full text in a template argument (see graph/graph.hpp).
#pragma once
#include <cstdint>
#include <string_view>

namespace ctfx {

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
  list_arguments,         // list arguments of unequal length or a bad element
  custom_schema,          // a custom op called against its declared schema
  duplicate_name,         // two nodes (or inputs) with one name
  bad_argument,           // any other invalid argument (named in the text)
  require_inplace,        // a node marked require_inplace that could not be reinplaced
  aliasing,               // a rewrite would create aliasing the program did not have
  fx_text,                // FX graph text (graph/fx_parse.hpp): a malformed line or an unsupported op
};

constexpr std::string_view name_of(rule r) {
  switch (r) {
    case rule::ok: return "ok";
    case rule::broadcast_shapes: return "broadcast-shapes";
    case rule::dtype_mismatch: return "dtype-mismatch";
    case rule::scatter_source_shape: return "scatter-source-fits-view";
    case rule::index_out_of_range: return "static-index-in-range";
    case rule::index_dtype: return "index-dtype";
    case rule::undefined_node: return "undefined-node";
    case rule::use_before_definition: return "use-before-definition";
    case rule::mutation_outside_epilogue: return "functional-except-epilogue";
    case rule::epilogue_target: return "epilogue-writes-an-input";
    case rule::bad_dimension: return "dimension-in-range";
    case rule::view_shape: return "view-shape";
    case rule::rank_limit: return "rank-limit";
    case rule::symbolic_limit: return "symbolic-expression-limit";
    case rule::metadata_inconsistent: return "metadata-consistent";
    case rule::list_arguments: return "list-arguments";
    case rule::custom_schema: return "custom-op-schema";
    case rule::duplicate_name: return "unique-names";
    case rule::bad_argument: return "valid-argument";
    case rule::require_inplace: return "require-inplace";
    case rule::aliasing: return "no-new-aliasing";
    case rule::fx_text: return "fx-text";
  }
  return "?";
}

/// The first error found: the rule, the node (index, -1 when none) and a sentence that names both.
struct diagnostic {
  rule r = rule::ok;  ///< the broken rule, or rule::ok
  std::int32_t node = -1;  ///< the node, or -1
  char text[200]{};  ///< the sentence, zero-terminated
  /// Whether no rule is broken.
  constexpr bool ok() const { return r == rule::ok; }
  /// The sentence.
  constexpr std::string_view message() const {
    std::size_t n = 0;
    while (n < sizeof(text) && text[n]) ++n;
    return {text, n};
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
