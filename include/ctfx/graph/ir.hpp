// ctfx/graph/ir.hpp — the graph as a constexpr value: nodes in program order, their arguments and
// parameters in shared pools, the symbols, and the user ops the graph calls.
//
// Passes take an `ir` and return a new one; they are constexpr, so the same code runs in the compiler
// (on graphs written with the DSL) and at run time (on graphs built at run time). Vectors are fine
// in constant evaluation as long as they do not escape it; graph/graph.hpp freezes a result into
// fixed-size arrays when it must outlive the evaluation.
//
// Argument conventions (arguments are node ids, -1 is None; parameters are sym_exprs):
//   placeholder              params: -                   aux: input position
//   output(a...)             args: the outputs
//   getitem(t)               aux: the element index
//   copy_(dst, src)          the epilogue write-back "dst ends up holding src"
//   copy(dst, src), clone(x), alias(x), empty_like(x)
//   empty/zeros/ones/full    params: sizes               scalar: fill value
//   fill_(x)                 scalar: value
//   unary(x), convert(x)     (convert: target dtype in meta)
//   binary(a, b)             or binary(a) with `scalar` when aux == 1 (float) or 2 (integral scalar)
//   slice(x)                 params: dim, start, end, step
//   select(x)                params: dim, index
//   diagonal(x)              params: offset, dim1, dim2
//   as_strided(x)            params: rank, sizes..., strides..., storage offset
//   view/reshape/expand(x)   params: sizes
//   permute(x)               params: dims
//   transpose(x)             params: dim0, dim1
//   unsqueeze/squeeze(x)     params: dim
//   X_scatter(inp, src)      params: those of the view X
//   generalized_scatter(inp, src)  params: the view chain, each view as (kind, count, params...)
//   index_put(x, values, idx...)   aux: accumulate (0/1); a None index is -1
//   index(x, idx...)         x[idx...]; a None index is -1
//   gather(x, idx)           params: dim
//   scatter(x, src, idx)     params: dim   aux: combine (0 assign, 1 sum, 2 prod, 3 amax, 4 amin) | 8 without self
//   where(cond, a, b)
//   sum/amax/amin/mean(x)    params: dims              aux: keepdim | 2 (sum_in_input_dtype)
//   argmax/argmin(x)         params: dim (none: all)   aux: keepdim
//   cumsum(x)                params: dim
//   var/var_mean(x)          params: dims              aux: keepdim   scalar: correction
//   cat(t...)                params: dim
//   foreach_*(a..., b...)    aux: list length; scalar operand when only one list is given
//   all_reduce(x)            aux: reduce op (0 = sum)
//   custom / auto_functionalized (args...)   aux: index into ir::customs
//   cond(pred, operands...)  aux: its then-graph in ir::subgraphs (the else-graph is aux + 1)
//   while_loop(carried..., additional...)   aux: its condition graph in ir::subgraphs (the body
//                            is aux + 1); params: the number of carried values (ops/control.hpp)
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>
#include "../core/config.hpp"
#include "../core/layout.hpp"
#include "../core/name.hpp"
#include "../core/scalar.hpp"
#include "../detail/cvec.hpp"
#include "../ops/op_kind.hpp"
#include "diagnostic.hpp"

namespace ctfx {

/// A sum node's aux: set when the sum keeps its input's dtype (PyTorch's dtype= argument, the input
/// converted to it first), where a plain sum of an integer or bool input is int64.
inline constexpr std::int32_t sum_in_input_dtype = 2;
/// A scatter node's aux: its combine (kernels::put_reduce: assign, sum, prod, amax, amin) in these bits.
inline constexpr std::int32_t scatter_reduce_mask = 7;
/// A scatter node's aux: set when the reduction leaves self out (scatter_reduce's include_self=False).
inline constexpr std::int32_t scatter_without_self = 8;

/// A node of the graph: its op, name, arguments and parameters (ranges in the ir's arrays) and its metadata.
struct node {
  op_kind op = op_kind::placeholder;  ///< the op
  name_t name{};  ///< the name (unique in the graph)
  std::int32_t arg0 = 0;  ///< first argument, in ir::args
  std::int32_t nargs = 0;  ///< number of arguments
  std::int32_t par0 = 0;  ///< first parameter, in ir::params
  std::int32_t npar = 0;  ///< number of parameters
  std::int32_t aux = 0;  ///< op-specific integer (a dtype, a list length, a user op's schema index, ...)
  scalar_value scalar{};  ///< a scalar operand or fill value (exact: an int stays an int64)
  tensor_meta meta{};  ///< dtype, extents, strides, offset, storage
  /// Reinplacing: the user asks for this node to run in place (a miss becomes a compile error).
  bool require_inplace = false;
  /// The user's line of the require_inplace() call (0: not known), named when reinplacing misses it.
  std::uint16_t required_line = 0;
  /// For custom / auto_functionalized: bit i set = tensor argument i must still be cloned.
  std::uint32_t clone_mask = 0;
  /// Provenance: the id of the node of the user's graph this node came from.
  std::int32_t origin = -1;
  /// Graph partition (0, 1, ...): a new one starts at a host-synchronizing op or where the user says
  /// (builder::partition_boundary). Passes give a node they create the partition of the node it
  /// replaces.
  std::int32_t partition = 0;
};

/// backed: bound by an input's shape; unbacked: by data; derived: an operation on other symbols.
enum class symbol_kind : std::uint8_t { backed, unbacked, derived };

/// The operations of a derived symbol (PyTorch's FloorDiv, PythonMod, Max, Min), and `guard`: a
/// fact PyTorch's guards established that ctfx cannot prove (its value is 1 when a == b; a run
/// with sizes where it is false is refused before anything is written), and `order`: a
/// comparison of two sizes or strides (relation `rel`) that a result's layout was taken under
/// (PyTorch ordered the strides it printed by the sizes it traced with: ops/result_layout.hpp); a
/// run with sizes where it is false is refused before anything is written, naming the node.
enum class sym_op : std::uint8_t { none, floordiv, mod, max, min, guard, order };

/// The relation of an `order` symbol: a == b, a != b, a >= b, a < b, a % b == 0, a % b != 0.
enum class sym_rel : std::uint8_t { eq, ne, ge, lt, divides, not_divides };

/// A symbolic extent of the graph (ctfx::builder::sym / unbacked), or a derived one
/// (graph/sym_ops.hpp): op over the operands a and b, which use only earlier symbols.
struct symbol {
  name_t name{};  ///< its name (empty for a derived symbol: it prints as its definition)
  symbol_kind kind = symbol_kind::backed;  ///< backed, unbacked or derived
  sym_op op = sym_op::none;  ///< for derived symbols: the operation
  /// For backed symbols: the placeholder and dimension that bind it; for a value read from an input
  /// with item() (graph/data_dependent.hpp): the input position and the element's offset in it.
  std::int32_t input = -1;
  std::int32_t dim = -1;  ///< the dimension of that placeholder (or the element's offset)
  sym_expr a{};  ///< for derived symbols: the first operand
  sym_expr b{};  ///< for derived symbols: the second operand
  sym_rel rel = sym_rel::eq;  ///< for an `order` symbol: the relation of a and b it needs
  /// For an `order` symbol: its guard (one per result laid out as printed; the symbols of a guard
  /// are consecutive) and the set of comparisons it belongs to within the guard (`alternative`):
  /// a guard holds when every comparison of one of its sets does.
  std::int32_t guard = -1;
  std::int32_t alternative = 0;  ///< see guard
};

/// The strides PyTorch printed for the node being added while a graph is read from FX text: where
/// ctfx's layout rules leave the order of a result's strides to sizes the graph leaves open, the
/// result takes these under a run-time guard (ops/result_layout.hpp).
struct printed_layout {
  bool present = false;  ///< whether strides were printed for the node being added
  std::int32_t rank = 0;  ///< their number
  sym_expr stride[max_rank]{};  ///< the strides
  name_t node{};  ///< the node's name in the text (what a failed guard names)
};

namespace detail {
// A braced list into v[0, max_rank), its length in rank (beyond max_rank: counted, not stored, so
// the user-result-layout check sees the rank given).
template <class T>
constexpr void list_into(index_t (&v)[max_rank], std::int32_t& rank, std::initializer_list<T> xs) {
  for (T x : xs) {
    if (rank < max_rank) v[rank] = static_cast<index_t>(x);
    ++rank;
  }
}
}  // namespace detail

/// How a user op lays out its fresh results (its fake implementation's choice, which a graph built
/// in C++ cannot see): declared in the op type as `static constexpr ctfx::fresh_layout layout =
/// ctfx::fresh_layout::permuted({1, 0});` (ops/custom.hpp). Without one a result is row-major.
/// Every fresh result of the op takes it (they all have the shape of argument `returns_like`).
struct fresh_layout {
  /// row_major; like: torch.empty_like(args[arg]) (preserve_format); permuted: dense with the
  /// dimensions in memory in the order `v` (outermost first, as torch.empty_permuted's
  /// physical_layout); strides: the strides `v`, for static extents.
  enum class kind : std::uint8_t { row_major, like, permuted, strides };
  kind how = kind::row_major;  ///< which of the four
  std::int32_t arg = 0;  ///< like: the tensor argument (schema order) whose layout the results take
  std::int32_t rank = 0;  ///< permuted, strides: how many entries were given
  index_t v[max_rank]{};  ///< permuted: the dimensions, outermost first; strides: the strides
  /// Row-major (the default).
  static constexpr fresh_layout row_major() { return {}; }
  /// As torch.empty_like(args[k]) with preserve_format: a non-overlapping dense argument's strides,
  /// else dense in its stride order. Argument k must have the results' extents.
  static constexpr fresh_layout like(int k) {
    fresh_layout f;
    f.how = kind::like;
    f.arg = k;
    return f;
  }
  /// Dense, the dimensions laid out outermost first in `outer_first` (torch.empty_permuted):
  /// permuted({1, 0}) is column-major, permuted({0, 2, 3, 1}) channels-last.
  static constexpr fresh_layout permuted(std::initializer_list<int> outer_first) {
    fresh_layout f;
    f.how = kind::permuted;
    detail::list_into(f.v, f.rank, outer_first);
    return f;
  }
  /// The strides themselves (for static extents): non-negative, and no two elements at one
  /// address; gaps are allowed (the buffer spans the last element).
  static constexpr fresh_layout strides(std::initializer_list<index_t> s) {
    fresh_layout f;
    f.how = kind::strides;
    detail::list_into(f.v, f.rank, s);
    return f;
  }
};

/// What a user op declares (see ops/custom.hpp): its name, its tensor arguments and which it
/// mutates, and how many fresh tensors it returns.
struct custom_schema {
  name_t name{};  ///< the op's name
  std::int32_t n_args = 0;  ///< its tensor arguments
  std::uint32_t mutates = 0;       ///< bit i: argument i is written (Tensor(a!))
  std::int32_t n_returns = 0;      ///< fresh results, shaped like argument `returns_like`
  std::int32_t returns_like = 0;  ///< the argument the results take their shape from
  bool user_kernel = false;        ///< a user kernel (tensors_to_clone), not a functionalized op
  bool host_sync = false;          ///< the op synchronizes with the host: a partition ends after it
  std::int32_t inplace_twin = -1;  ///< index of a registered in-place variant (with_effects pairs)
  fresh_layout layout{};  ///< how its fresh results are laid out (the op type's `layout`)
};

/// Whether a graph is functional (as written: in-place ops only in the epilogue) or reinplaced (after the pipeline).
enum class graph_phase : std::uint8_t { functional, reinplaced };

/// The graph: nodes in program order, their arguments and parameters, symbols, user op schemas, and the first error found (error).
struct ir {
  detail::cvec<node> nodes;  ///< the nodes, in program order
  detail::cvec<std::int32_t> args;  ///< every node's arguments (node ids; -1: None)
  detail::cvec<sym_expr> params;  ///< every node's parameters (dims, bounds, sizes)
  detail::cvec<symbol> syms;  ///< the symbols
  detail::cvec<custom_schema> customs;  ///< the user ops' schemas
  /// The graphs that control-flow nodes run (cond's branches, while_loop's condition and body),
  /// each a whole graph with its own placeholders and output (ops/control.hpp).
  detail::cvec<ir> subgraphs;
  std::int32_t next_storage = 0;  ///< the next fresh storage id
  graph_phase phase = graph_phase::functional;  ///< functional, or after reinplacing
  diagnostic error{};  ///< the first broken rule
  /// Only while a node is added from FX text: the strides PyTorch printed for it (not frozen).
  printed_layout printed{};

  /// The number of nodes.
  constexpr std::int32_t size() const { return static_cast<std::int32_t>(nodes.size()); }
  /// Node i.
  constexpr const node& operator[](std::int32_t i) const { return nodes[static_cast<std::size_t>(i)]; }
  /// Node i.
  constexpr node& operator[](std::int32_t i) { return nodes[static_cast<std::size_t>(i)]; }
  /// A node's arguments.
  constexpr std::span<const std::int32_t> args_of(const node& n) const {
    return {args.data() + n.arg0, static_cast<std::size_t>(n.nargs)};
  }
  /// Node i's arguments.
  constexpr std::span<const std::int32_t> args_of(std::int32_t i) const { return args_of((*this)[i]); }
  /// Argument k of node i.
  constexpr std::int32_t arg(std::int32_t i, std::int32_t k) const {
    return args[static_cast<std::size_t>((*this)[i].arg0 + k)];
  }
  /// A node's parameters.
  constexpr std::span<const sym_expr> params_of(const node& n) const {
    return {params.data() + n.par0, static_cast<std::size_t>(n.npar)};
  }
  /// Parameter k of node i.
  constexpr sym_expr param(std::int32_t i, std::int32_t k) const {
    return params[static_cast<std::size_t>((*this)[i].par0 + k)];
  }
  /// Parameter k of node i, which must be static.
  constexpr index_t iparam(std::int32_t i, std::int32_t k) const { return param(i, k).value(); }
  /// Node i's metadata.
  constexpr const tensor_meta& meta(std::int32_t i) const { return (*this)[i].meta; }

  /// The output node (last node), or -1 before one is added.
  constexpr std::int32_t output_node() const {
    for (std::int32_t i = size() - 1; i >= 0; --i)
      if ((*this)[i].op == op_kind::output) return i;
    return -1;
  }
  /// The node named `name`, or -1.
  constexpr std::int32_t find(std::string_view name) const {
    for (std::int32_t i = 0; i < size(); ++i)
      if ((*this)[i].name.view() == name) return i;
    return -1;
  }

  /// Appends a node whose arguments and parameters are given; returns its id. Metadata is set by
  /// the caller (usually through ops/meta.hpp's infer_meta).
  /// By reference, patched where it lands: in constant evaluation every copy of a node costs (the
  /// builder and every rebuild append each node).
  constexpr std::int32_t append(const node& proto, std::span<const std::int32_t> a, std::span<const sym_expr> p) {
    const auto id = static_cast<std::int32_t>(nodes.size());
    nodes.push_back(proto);
    node& n = nodes.data()[id];
    // Pointer ranges, not span iteration: in constant evaluation each iterator call costs.
    n.arg0 = static_cast<std::int32_t>(args.size());
    n.nargs = static_cast<std::int32_t>(a.size());
    args.append(a.data(), a.data() + a.size());
    n.par0 = static_cast<std::int32_t>(params.size());
    n.npar = static_cast<std::int32_t>(p.size());
    params.append(p.data(), p.data() + p.size());
    if (n.origin < 0) n.origin = id;
    return id;
  }
  /// A new storage id.
  constexpr std::int32_t fresh_storage() { return next_storage++; }

  /// Records the first error only: later ones are usually consequences of it.
  constexpr void fail(rule r, std::int32_t at, std::string_view text) {
    if (!error.ok()) return;
    error.r = r;
    error.node = at;
    std::size_t k = 0;
    for (char c : text) if (k + 1 < sizeof(error.text)) error.text[k++] = c;
  }
};

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
