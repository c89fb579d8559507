// ctfx/graph/builder.hpp — the DSL: a user writes a graph in ordinary C++.
//
//   auto kv = ctfx::graph([](ctfx::builder& g) {
//     auto cache = g.input("cache", ctfx::f16, {8, 32, 4096, 128});
//     auto k     = g.input("k", ctfx::f16, {8, 32, 1, 128});
//     auto pos   = g.input("pos", ctfx::i64, {1});
//     g.update(cache, ctfx::index_put(cache, {ctfx::none, ctfx::none, pos}, k));
//   });
//
// Every call appends a node and computes its metadata; the first error is kept on the graph and
// becomes a compile error naming the node and the rule (graph/graph.hpp). `update(x, v)` is the
// epilogue "input x ends up holding v": the copy_ nodes are emitted at the end, before the output.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include "../comm/types.hpp"
#include "../ops/meta.hpp"

namespace ctfx {

class builder;

/// A handle to a node. Cheap to copy; valid while its builder lives.
struct tensor {
  builder* b = nullptr;  ///< the graph it belongs to
  std::int32_t id = -1;  ///< the node's id

  /// The node's metadata.
  constexpr const tensor_meta& meta() const;
  /// The number of dimensions.
  constexpr int rank() const { return meta().rank; }
  /// Extent of dimension d (negative: from the end).
  constexpr sym_expr size(int d) const { return meta().size[d < 0 ? d + rank() : d]; }
  /// The element type.
  constexpr dtype dt() const { return meta().dt; }
  /// Names the node (printed in listings and diagnostics); returns the handle.
  constexpr tensor named(std::string_view n, source_loc at = source_loc::current()) const;
  /// Marks the node: reinplacing must run it in place, or compilation fails naming what blocks it.
  constexpr tensor require_inplace(source_loc at = source_loc::current()) const;

  // views
  /// `aten.slice`: elements start, start + step, ... below end of dimension `dim` (a view).
  /// x[start:end:step] along dim; the bounds may be symbolic (b.floordiv(n, 2)).
  constexpr tensor slice(index_t dim, sym_expr start, sym_expr end = end_of_dim, index_t step = 1, source_loc at = source_loc::current()) const;
  /// `aten.constant_pad_nd` (`F.pad(x, pads, value=v)`): `pads[2k]` and `pads[2k + 1]` elements of
  /// `v` (converted to x's dtype) before and after dimension `rank - 1 - k`; a negative pad crops.
  /// A new tensor, as PyTorch's: built from slices (the crops), fulls and a cat per padded dimension
  /// (a clone where no pad is positive).
  constexpr tensor constant_pad(std::span<const index_t> pads, scalar_value v = 0.0, source_loc at = source_loc::current()) const;
  /// `aten.flip` / `prims.rev` (`x.flip(dims)`): each dimension of `dims` reversed. A new tensor, as
  /// PyTorch's: an `index` per dimension by the iota -1, -2, ..., -n (a negative index counts from
  /// the end), so a symbolic extent works too.
  constexpr tensor flip(std::span<const index_t> dims, source_loc at = source_loc::current()) const;
  /// `aten.select`: dimension `dim` at `index` (a view).
  constexpr tensor select(index_t dim, sym_expr index, source_loc at = source_loc::current()) const;
  /// `aten.diagonal` (a view).
  constexpr tensor diagonal(index_t offset = 0, index_t dim1 = 0, index_t dim2 = 1, source_loc at = source_loc::current()) const;
  /// `aten.as_strided` (a view with explicit sizes, strides and storage offset).
  constexpr tensor as_strided(std::initializer_list<sym_expr> sizes, std::initializer_list<sym_expr> strides,
                              sym_expr offset = 0, source_loc at = source_loc::current()) const;
  /// `x.unfold(dim, size, step)` (`aten.unfold`, a view): the windows of `size` elements every `step`
  /// along `dim` ((n - size) / step + 1 of them, n its static extent) as that dimension, each
  /// window a new last dimension: an as_strided view of x (stride along dim times step, and dim's
  /// stride), overlapping where step < size.
  constexpr tensor unfold(index_t dim, index_t size, index_t step, source_loc at = source_loc::current()) const;
  /// `aten.view` (a view; the layout must allow it).
  constexpr tensor view(std::initializer_list<sym_expr> sizes, source_loc at = source_loc::current()) const;
  /// `aten.reshape`: a view where the layout allows, else a copy.
  constexpr tensor reshape(std::initializer_list<sym_expr> sizes, source_loc at = source_loc::current()) const;
  /// `aten.permute` (a view).
  constexpr tensor permute(std::initializer_list<index_t> dims, source_loc at = source_loc::current()) const;
  /// `aten.transpose` (a view).
  constexpr tensor transpose(index_t d0, index_t d1, source_loc at = source_loc::current()) const;
  /// `aten.unsqueeze` (a view).
  constexpr tensor unsqueeze(index_t dim, source_loc at = source_loc::current()) const;
  /// `aten.squeeze` of dimension `dim` (a view).
  constexpr tensor squeeze(index_t dim, source_loc at = source_loc::current()) const;
  /// `aten.expand` (a broadcast view).
  constexpr tensor expand(std::initializer_list<sym_expr> sizes, source_loc at = source_loc::current()) const;
  /// `aten.alias` (a view of the whole tensor).
  constexpr tensor alias(source_loc at = source_loc::current()) const;
  // copies, reductions, conversion
  /// `aten.clone`: a copy in a fresh buffer.
  constexpr tensor clone(source_loc at = source_loc::current()) const;
  /// `aten.sum` over `dims` (all when empty), `x.sum(dims, keepdim)` in PyTorch: an integer or bool
  /// x sums in i64 (PyTorch's dtype), a floating x in its own dtype.
  constexpr tensor sum(std::initializer_list<index_t> dims = {}, bool keepdim = false, source_loc at = source_loc::current()) const;
  /// `x.sum(dims, keepdim, dtype=dt)`: x converted to dt, then summed in dt; the result is of dt
  /// (also an integer dt: `mask.sum(dtype=torch.int32)` is int32, where a plain sum of an integer
  /// or bool x is int64). dt may not be bool.
  constexpr tensor sum(std::initializer_list<index_t> dims, bool keepdim, dtype dt, source_loc at = source_loc::current()) const;
  /// `aten.amax` over `dims` (all when empty), `x.amax(dims, keepdim)` in PyTorch: any dtype, kept;
  /// NaN if a reduced element is NaN.
  constexpr tensor amax(std::initializer_list<index_t> dims = {}, bool keepdim = false, source_loc at = source_loc::current()) const;
  /// `aten.amin` over `dims` (all when empty), `x.amin(dims, keepdim)` in PyTorch: any dtype, kept;
  /// NaN if a reduced element is NaN; a reduced dimension of extent 0 is refused, as PyTorch does.
  constexpr tensor amin(std::initializer_list<index_t> dims = {}, bool keepdim = false, source_loc at = source_loc::current()) const;
  /// `x.prod(dim, keepdim)` (`aten.prod.dim_int`), or `x.prod()` of every element (`aten.prod.default`)
  /// with no dim: an integer or bool x multiplies in i64 (wrapping), f32 and f64 in their own dtype
  /// in PyTorch's CPU order (kernels/reduce.hpp: prod_run); the product of nothing is 1. f16 and bf16
  /// are refused (PyTorch rounds each product to the half type).
  constexpr tensor prod(std::optional<index_t> dim = std::nullopt, bool keepdim = false, source_loc at = source_loc::current()) const;
  /// `aten.argmax`: the int64 index of the first maximum along `dim`, or in the row-major flattened
  /// tensor when `dim` is std::nullopt (`x.argmax(dim, keepdim)`); a NaN counts as the maximum, its
  /// first index wins. An empty or symbolic reduced extent is refused (PyTorch raises on empty).
  /// `x.max(dim)` of PyTorch is `x.amax({dim})` with `x.argmax(dim)`.
  constexpr tensor argmax(std::optional<index_t> dim = std::nullopt, bool keepdim = false, source_loc at = source_loc::current()) const;
  /// `aten.argmin`: argmax's mirror (a NaN counts as the minimum); `x.min(dim)` is `x.amin({dim})`
  /// with `x.argmin(dim)`.
  constexpr tensor argmin(std::optional<index_t> dim = std::nullopt, bool keepdim = false, source_loc at = source_loc::current()) const;
  /// `aten.cumsum` along `dim` (`x.cumsum(dim, dtype=dt)`): x converted to `dt` first, or an
  /// integer or bool x to i64, as PyTorch does; each prefix summed sequentially in PyTorch's
  /// accumulation type (double for f32 and f64, f32 for f16 and bf16) and rounded once.
  constexpr tensor cumsum(index_t dim, std::optional<dtype> dt = std::nullopt, source_loc at = source_loc::current()) const;
  /// `aten.cumprod` along `dim` (`x.cumprod(dim, dtype=dt)`): cumsum's conversions, each prefix
  /// multiplied sequentially as PyTorch's CPU kernel does (in double for f32, wrapping int64).
  constexpr tensor cumprod(index_t dim, std::optional<dtype> dt = std::nullopt, source_loc at = source_loc::current()) const;
  /// `aten.logcumsumexp` along `dim` (`x.logcumsumexp(dim)`): log(exp(x0) + ... + exp(xj)) folded as
  /// PyTorch's CPU kernel folds it (`log1p(exp(min - max)) + max` in double for f32 and f64, float
  /// for f16 and bf16); floats only.
  constexpr tensor logcumsumexp(index_t dim, source_loc at = source_loc::current()) const;
  /// `aten.var.correction` over `dims` (all when empty) as PyTorch's CPU kernel computes it: one
  /// Welford pass in double over the elements in row-major order, m2 / max(n - correction, 0),
  /// rounded once. f32 and f64; reduced extents static and above 0, under 32,768 elements per
  /// result (PyTorch splits longer ones across threads), not every dimension (a two-pass algorithm
  /// in PyTorch): others are refused.
  constexpr tensor var(std::initializer_list<index_t> dims = {}, double correction = 1, bool keepdim = false,
                       source_loc at = source_loc::current()) const;
  /// The mean of `aten.var_mean.correction` (its second result: the Welford fold's mean, rounded
  /// once, not the sum / n of `mean`); `x.var(...)` is its first (`var_mean_var`, which may also
  /// reduce every dimension, as var_mean's does in PyTorch).
  constexpr tensor var_mean_mean(std::initializer_list<index_t> dims = {}, double correction = 1, bool keepdim = false,
                                 source_loc at = source_loc::current()) const;
  /// The variance of `aten.var_mean.correction` (its first result): `var`'s, over every dimension too.
  constexpr tensor var_mean_var(std::initializer_list<index_t> dims = {}, double correction = 1, bool keepdim = false,
                                source_loc at = source_loc::current()) const;
  /// `aten.mean.dim` over `dims` (all when empty): the sum divided by the count; floating only.
  constexpr tensor mean(std::initializer_list<index_t> dims = {}, bool keepdim = false, source_loc at = source_loc::current()) const;
  /// `x.mean(dims, keepdim, dtype=dt)`: x converted to dt (a floating dtype), then averaged in dt.
  constexpr tensor mean(std::initializer_list<index_t> dims, bool keepdim, dtype dt, source_loc at = source_loc::current()) const;
  /// `aten._to_copy` to dtype `d` (`convert_element_type`).
  constexpr tensor to(dtype d, source_loc at = source_loc::current()) const;
  /// `aten.sym_size` of dimension `dim`.
  constexpr tensor sym_size(index_t dim, source_loc at = source_loc::current()) const;
  // in-place ops: legal only as the result of reinplacing; in a user graph they are reported
  /// `aten.add_` (in place: only in graphs that are already reinplaced).
  constexpr tensor add_(tensor o, source_loc at = source_loc::current()) const;
  /// `aten.mul_` (in place: only in graphs that are already reinplaced).
  constexpr tensor mul_(tensor o, source_loc at = source_loc::current()) const;
  /// `aten.fill_` (in place: only in graphs that are already reinplaced).
  constexpr tensor fill_(scalar_value v, source_loc at = source_loc::current()) const;
  /// `aten.copy_` (in place; in a functional graph use builder::update).
  constexpr tensor copy_(tensor src, source_loc at = source_loc::current()) const;
};

// None in an index list: ctfx::index_put(x, {ctfx::none, idx}, v).
struct none_t {};
/// `None` in an index list (the whole dimension): `ctfx::index_put(x, {ctfx::none, idx}, v)` is `x[:, idx] = v`.
inline constexpr none_t none{};
/// An element of an index list: a tensor, or ctfx::none (the whole dimension).
struct index_arg {
  std::int32_t id = -1;  ///< the index tensor's node, or -1 for none
  constexpr index_arg(none_t) {}  ///< ctfx::none: the whole dimension (implicit by design) NOLINT
  constexpr index_arg(tensor t) : id(t.id) {}  ///< an index tensor (implicit by design) NOLINT
};

/// The tuple a list op or user op returns; element i is getitem(t, i).
struct tuple_ref {
  builder* b = nullptr;  ///< the graph it belongs to
  std::int32_t id = -1;  ///< the tuple-valued node
  /// Element i (a getitem node).
  constexpr tensor operator[](int i) const;
};

/// Builds a graph from DSL code: `ctfx::graph([](ctfx::builder& g) { ... })` hands one to the lambda. Inputs, factories, the `update` epilogue, outputs and user ops are its members; ops are free functions and tensor members.
class builder {
 public:
  ir g;  ///< the graph being built

  constexpr builder() { g.nodes.reserve(64); }

  /// A builder call in progress: the outermost one records its position (source_loc) on the error
  /// it caused, so that the compile error names the user's line.
  struct call_site {
    builder* b;  ///< the builder, or null
    source_loc at;  ///< where the user wrote the call
    bool outer;  ///< not a call made by another builder call
    bool was_ok;  ///< no rule was broken before the call
    /// Enters a call.
    constexpr call_site(builder* bb, source_loc a)
        : b(bb), at(a), outer(bb != nullptr && bb->depth_++ == 0), was_ok(bb != nullptr && bb->g.error.ok()) {}
    call_site(const call_site&) = delete;
    call_site& operator=(const call_site&) = delete;
    /// Leaves it, naming its position in the error it caused.
    constexpr ~call_site() {
      if (b == nullptr) return;
      --b->depth_;
      if (outer && was_ok) b->g.error.locate(at);
    }
  };

  /// A graph input with static or symbolic extents: g.input("x", f32, {g.sym("s0"), 8}).
  constexpr tensor input(std::string_view name, dtype dt, std::initializer_list<sym_expr> shape,
                         source_loc at = source_loc::current()) {
    const call_site site(this, at);
    node n{};
    n.op = op_kind::placeholder;
    n.name = name_t(name);
    n.aux = inputs_;
    n.meta.dt = dt;
    n.meta.rank = static_cast<std::int8_t>(shape.size() > max_rank ? max_rank : shape.size());
    int d = 0;
    for (auto e : shape) if (d < max_rank) n.meta.size[d++] = e;
    n.meta.set_contiguous();
    n.meta.storage = g.fresh_storage();
    std::int32_t id = g.append(n, {}, {});
    ++inputs_;
    if (static_cast<int>(shape.size()) > max_rank) {
      auto m = detail::about(g, id); m << "an input of rank " << static_cast<int>(shape.size()) << " exceeds ctfx::max_rank";
      detail::fail(g, id, rule::rank_limit, m);
    }
    if (n.meta.any_overflow()) {  // e.g. [s0, ..., s4]: the last element s0*s1*s2*s3*s4 - 1 has 5 symbols
      auto m = detail::about(g, id); m << "its contiguous strides or the storage they span need more than " << sym_max_terms << " terms of " << sym_max_degree << " symbols";
      detail::fail(g, id, rule::symbolic_limit, m);
    }
    // Bind backed symbols to the first input dimension that carries them.
    for (int k = 0; k < n.meta.rank; ++k) {
      const sym_expr& e = n.meta.size[k];
      if (const int sid = e.as_symbol(); sid >= 0) {
        auto& s = g.syms[static_cast<std::size_t>(sid)];
        if (s.kind == symbol_kind::backed && s.input < 0) { s.input = id; s.dim = k; }
      }
    }
    return {this, id};
  }
  /// A size known at run time from an input's shape (PyTorch's s0).
  constexpr sym_expr sym(std::string_view name) { return new_symbol(name, symbol_kind::backed); }
  // Size arithmetic that is not a polynomial, as PyTorch's sizes use it (graph/sym_ops.hpp).
  /// Python's floor division a // b of two sizes (a derived symbol unless it simplifies).
  constexpr sym_expr floordiv(const sym_expr& a, const sym_expr& b) { return sym_floordiv(g, a, b); }
  /// Python's modulo a % b of two sizes (the sign of b).
  constexpr sym_expr mod(const sym_expr& a, const sym_expr& b) { return sym_mod(g, a, b); }
  /// The larger of two sizes (sympy's Max).
  constexpr sym_expr max(const sym_expr& a, const sym_expr& b) { return sym_max(g, a, b); }
  /// The smaller of two sizes (sympy's Min).
  constexpr sym_expr min(const sym_expr& a, const sym_expr& b) { return sym_min(g, a, b); }
  /// A data-dependent size (PyTorch's u0), known only once a kernel has run.
  constexpr sym_expr unbacked(std::string_view name) { return new_symbol(name, symbol_kind::unbacked); }

  /// `aten.empty` of `shape`.
  constexpr tensor empty(std::initializer_list<sym_expr> shape, dtype dt = dtype::f32, source_loc at = source_loc::current()) {
    const call_site site(this, at);
    return factory(op_kind::empty, shape, dt, 0.0);
  }
  /// `aten.zeros` of `shape`.
  constexpr tensor zeros(std::initializer_list<sym_expr> shape, dtype dt = dtype::f32, source_loc at = source_loc::current()) {
    const call_site site(this, at);
    return factory(op_kind::zeros, shape, dt, 0.0);
  }
  /// `aten.ones` of `shape`.
  constexpr tensor ones(std::initializer_list<sym_expr> shape, dtype dt = dtype::f32, source_loc at = source_loc::current()) {
    const call_site site(this, at);
    return factory(op_kind::ones, shape, dt, 1.0);
  }
  /// `aten.full` of `shape` with value `v`.
  constexpr tensor full(std::initializer_list<sym_expr> shape, scalar_value v, dtype dt = dtype::f32, source_loc at = source_loc::current()) {
    const call_site site(this, at);
    return factory(op_kind::full, shape, dt, v);
  }

  /// `prims.iota` (`torch.arange(start, start + n * step, step)` of an integer dtype): `n` elements,
  /// element i is `start + i * step`, wrapping in int64 as PyTorch's kernel does, in an integer
  /// `dt`. Built from existing ops, so every executor runs it: a full of `step` summed along its
  /// dimension (a cumsum, `(i + 1) * step`), plus `start - step`, converted to `dt` when not i64.
  constexpr tensor iota(sym_expr n, std::int64_t start = 0, std::int64_t step = 1, dtype dt = dtype::i64,
                        source_loc at = source_loc::current()) {
    const call_site site(this, at);
    const std::int32_t steps = add(op_kind::full, {}, {n}, static_cast<std::int32_t>(dtype::i64), scalar_value::integer(step));
    const std::int32_t sums = add(op_kind::cumsum, {steps}, {sym_expr(0)});
    const std::int32_t r = add(op_kind::add, {sums}, {}, 2, scalar_value::integer(iota_offset(start, step)));
    if (!is_integral(dt)) {
      g.fail(rule::bad_argument, r, "iota (arange) of a non-integer dtype: PyTorch's iota makes integers only (convert the i64 result) [rule bad-argument]");
      return {this, r};
    }
    return {this, dt == dtype::i64 ? r : add(op_kind::convert, {r}, {}, static_cast<std::int32_t>(dt))};
  }
  /// `start - step` wrapped to int64 (what iota adds to the running sum `(i + 1) * step`).
  static constexpr std::int64_t iota_offset(std::int64_t start, std::int64_t step) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(start) - static_cast<std::uint64_t>(step));
  }

  /// The epilogue: input `x` ends up holding `v` (a copy_ at the end of the graph).
  constexpr void update(tensor x, tensor v, source_loc at = source_loc::current()) {
    const call_site site(this, at);
    if (!check(x) || !check(v)) return;
    if (g[x.id].op != op_kind::placeholder) {
      std::int32_t id = add(op_kind::copy_, {x.id, v.id});
      auto m = detail::about(g, id);
      m << "the epilogue writes '" << g[x.id].name.view() << "', which is not a graph input";
      detail::fail(g, id, rule::epilogue_target, m);
      return;
    }
    for (auto& u : updates_) if (u.first == x.id) { u.second = v.id; return; }
    updates_.push_back({x.id, v.id});
  }

  /// The graph's outputs (a call replaces the previous list).
  constexpr void output(std::initializer_list<tensor> outs, source_loc at = source_loc::current()) {
    const call_site site(this, at);
    outputs_.clear();
    for (auto t : outs) if (check(t)) outputs_.push_back(t.id);
  }
  /// The graph's outputs, as arguments.
  template <class... T>
  constexpr void output(T... outs) {
    const call_site site(this, {});  // a parameter pack leaves no room for the caller's position
    output({outs...});
  }

  /// Calls a user op (ops/custom.hpp). A mutating op is called functionally (auto_functionalized);
  /// element i of the result is its i-th return, then the new value of each mutated argument.
  template <class Op>
  constexpr tuple_ref call(std::initializer_list<tensor> args, source_loc at = source_loc::current()) {
    const call_site site(this, at);
    const custom_schema s = detail::schema_of<Op>();
    std::int32_t idx = -1;
    for (std::size_t i = 0; i < g.customs.size(); ++i)
      if (g.customs[i].name == s.name) idx = static_cast<std::int32_t>(i);
    if (idx < 0) { g.customs.push_back(s); idx = static_cast<std::int32_t>(g.customs.size()) - 1; }
    std::int32_t ids[32]{};
    std::size_t k = 0;
    for (auto t : args) { if (!check(t)) return {this, -1}; if (k < 32) ids[k++] = t.id; }
    op_kind kind = s.mutates ? op_kind::auto_functionalized : op_kind::custom;
    tuple_ref r{this, add(kind, std::span<const std::int32_t>(ids, k), {}, idx)};
    if (s.host_sync) ++partition_;  // what follows a host-synchronizing op is a new partition
    return r;
  }
  /// Calls user op `Op` (ops/custom.hpp) on tensor arguments: its results and updated arguments, as a tuple.
  template <class Op, class... T>
  constexpr tuple_ref call(T... args) {
    const call_site site(this, {});  // a parameter pack leaves no room for the caller's position
    return call<Op>({args...});
  }

  /// `torch.cond(pred, then, else, operands)`: runs `then_graph` when the one-element b8 `pred` is
  /// true, else `else_graph`, on `operands`; element k of the result is the branch's output k. Each
  /// branch is a whole graph with one input per operand (of its dtype and extents): an ir
  /// (ctfx::build_checked) or a lambda taking a ctfx::builder& that declares them with b.input.
  template <class Then, class Else>
  constexpr tuple_ref cond(tensor pred, Then then_graph, Else else_graph, std::initializer_list<tensor> operands,
                           source_loc at = source_loc::current()) {
    const call_site site(this, at);
    if (!check(pred)) return {this, -1};
    std::int32_t ids[33]{pred.id};
    std::size_t k = 1;
    for (auto t : operands) { if (!check(t)) return {this, -1}; if (k < 33) ids[k++] = t.id; }
    const auto first = static_cast<std::int32_t>(g.subgraphs.size());
    g.subgraphs.push_back(subgraph_of(then_graph));
    g.subgraphs.push_back(subgraph_of(else_graph));
    return {this, add(op_kind::cond, std::span<const std::int32_t>(ids, k), {}, first)};
  }
  /// `while_loop(cond_fn, body_fn, carried, additional)`: while `cond_graph` (on the carried then the
  /// additional values) returns true, the carried values become `body_graph`'s outputs; element k of
  /// the result is carried value k after the last trip (its initial value after none). Subgraphs as
  /// for cond: each takes one input per carried and additional value; the body returns one output
  /// per carried value, of its dtype and extents.
  template <class Cond, class Body>
  constexpr tuple_ref while_loop(Cond cond_graph, Body body_graph, std::initializer_list<tensor> carried,
                                 std::initializer_list<tensor> additional = {}, source_loc at = source_loc::current()) {
    const call_site site(this, at);
    std::int32_t ids[32]{};
    std::size_t k = 0;
    for (auto t : carried) { if (!check(t)) return {this, -1}; if (k < 32) ids[k++] = t.id; }
    const auto n_carried = static_cast<index_t>(k);
    for (auto t : additional) { if (!check(t)) return {this, -1}; if (k < 32) ids[k++] = t.id; }
    const auto first = static_cast<std::int32_t>(g.subgraphs.size());
    g.subgraphs.push_back(subgraph_of(cond_graph));
    g.subgraphs.push_back(subgraph_of(body_graph));
    const sym_expr p[1] = {sym_expr(n_carried)};
    return {this, add(op_kind::while_loop, std::span<const std::int32_t>(ids, k), std::span<const sym_expr>(p, 1), first)};
  }

  /// Ends the current partition: later nodes go to the next one (separately planned functions, as
  /// Inductor's graph partitions around CUDA-graph-unsafe ops).
  constexpr void partition_boundary() { ++partition_; }

  // ----- used by the handles and free functions -----
  /// Whether `t` is a node of this graph (else the graph fails with rule undefined-node).
  constexpr bool check(tensor t) {
    if (t.b == this && t.id >= 0 && t.id < g.size()) return true;
    g.fail(rule::undefined_node, -1,
           "a tensor handle names no node of this graph (a handle from another graph, or a default-constructed one) [rule undefined-node]");
    return false;
  }
  /// A subgraph given as a graph (cond, while_loop).
  static constexpr ir subgraph_of(const ir& sub) { return sub; }
  /// A subgraph given as a lambda that builds it on a fresh builder (cond, while_loop).
  template <class F>
  static constexpr ir subgraph_of(F f) {
    builder b;
    f(b);
    return static_cast<builder&&>(b).finish();
  }
  /// Appends a node of op `k` with argument ids and parameters, and infers its metadata; returns its id.
  constexpr std::int32_t add(op_kind k, std::span<const std::int32_t> a, std::span<const sym_expr> p = {},
                             std::int32_t aux = 0, scalar_value scalar = {}) {
    // A binary op's tensor operands in PyTorch's common dtype where the kernels' loads would skip
    // that cast (ops/elementwise.hpp: cast_before_compute): an explicit convert node, which every
    // executor runs the same way.
    std::int32_t cast[2]{};
    if (is_binary(k) && a.size() == 2 && a[0] >= 0 && a[1] >= 0 && a[0] < g.size() && a[1] < g.size() &&
        g.meta(a[0]).is_tensor() && g.meta(a[1]).is_tensor()) {
      const tensor_meta &x = g.meta(a[0]), &y = g.meta(a[1]);
      const dtype to = is_mutating(k) ? x.dt : detail::common_dtype(k, x, y);
      bool any = false;
      for (int j = 0; j < 2; ++j) {
        const tensor_meta& m = j ? y : x;
        cast[j] = a[static_cast<std::size_t>(j)];
        if (!(is_mutating(k) && j == 0) && detail::cast_before_compute(k, j, m.dt, to, m.rank == 0)) {
          cast[j] = add(op_kind::convert, {cast[j]}, {}, static_cast<std::int32_t>(to));
          g[cast[j]].name = with_suffix(name_t("to_common_dtype"), 15, cast_count_++);
          any = true;
        }
      }
      if (any) a = std::span<const std::int32_t>(cast, 2);
    }
    // A floating-point function of an integer or bool tensor (exp, log, sqrt, ...) computes in f32
    // and gives f32, as PyTorch's int-to-float promotion: the input converted first.
    if (detail::promotes_int_to_float(k) && a.size() == 1 && a[0] >= 0 && a[0] < g.size() && g.meta(a[0]).is_tensor() &&
        !is_floating(g.meta(a[0]).dt)) {
      cast[0] = add(op_kind::convert, {a[0]}, {}, static_cast<std::int32_t>(dtype::f32));
      g[cast[0]].name = with_suffix(name_t("to_common_dtype"), 15, cast_count_++);
      a = std::span<const std::int32_t>(cast, 1);
    }
    node n{};
    n.op = k;
    n.aux = aux;
    n.scalar = scalar;
    n.name = auto_name(k);
    n.partition = partition_;
    std::int32_t id = g.append(n, a, p);
    infer_meta(g, id);
    return id;
  }
  /// Appends a node (braced lists of ids and parameters).
  constexpr std::int32_t add(op_kind k, std::initializer_list<std::int32_t> a, std::initializer_list<sym_expr> p = {},
                             std::int32_t aux = 0, scalar_value scalar = {}) {
    return add(k, std::span<const std::int32_t>(a.begin(), a.size()), std::span<const sym_expr>(p.begin(), p.size()), aux, scalar);
  }
  /// Appends a node on tensor handles and returns its handle.
  constexpr tensor make(op_kind k, std::initializer_list<tensor> a, std::initializer_list<sym_expr> p = {},
                        std::int32_t aux = 0, scalar_value scalar = {}) {
    std::int32_t ids[8]{};
    std::size_t n = 0;
    for (auto t : a) { if (!check(t)) return {this, 0}; ids[n++] = t.id; }
    return {this, add(k, std::span<const std::int32_t>(ids, n), std::span<const sym_expr>(p.begin(), p.size()), aux, scalar)};
  }

  /// Ends the graph: the epilogue copy_ nodes, then the output node. Called by ctfx::graph.
  constexpr ir finish() && {
    for (auto [x, v] : updates_) add(op_kind::copy_, {x, v});
    node o{};
    o.op = op_kind::output;
    o.name = name_t("output");
    o.partition = partition_;
    g.append(o, std::span<const std::int32_t>(outputs_.data(), outputs_.size()), {});
    infer_meta(g, g.size() - 1);
    return static_cast<ir&&>(g);
  }

 private:
  std::int32_t inputs_ = 0;
  std::int32_t depth_ = 0;  // builder calls in progress (call_site)
  std::int32_t partition_ = 0;
  std::int32_t name_count_[static_cast<int>(op_kind::count_)]{};
  int cast_count_ = 0;  // convert nodes add() made for a common dtype
  name_t name_base_[static_cast<int>(op_kind::count_)]{};
  std::uint8_t name_len_[static_cast<int>(op_kind::count_)]{};
  std::vector<std::pair<std::int32_t, std::int32_t>> updates_;
  std::vector<std::int32_t> outputs_;

  constexpr sym_expr new_symbol(std::string_view name, symbol_kind k) {
    symbol s{};
    s.name = name_t(name);
    s.kind = k;
    g.syms.push_back(s);
    return sym_expr::symbol(static_cast<int>(g.syms.size()) - 1);
  }
  // FX-style names: the op's name, then name_1, name_2, ... The op's name is made once per builder
  // (name_base_, its length in name_len_ + 1, 0 = not yet); each node appends only its suffix (a
  // loop over characters is the dear part of a name in constant evaluation).
  constexpr name_t auto_name(op_kind k) {
    const auto ki = static_cast<std::size_t>(k);
    int& c = name_count_[ki];
    if (name_len_[ki] == 0) {
      std::string_view base = name_of(k);
      if (!base.empty() && base[0] == '_') base.remove_prefix(1);
      name_base_[ki] = name_t(base);
      name_len_[ki] = static_cast<std::uint8_t>(name_base_[ki].view().size() + 1);
    }
    return with_suffix(name_base_[ki], name_len_[ki] - 1u, c++);
  }
  constexpr tensor factory(op_kind k, std::initializer_list<sym_expr> shape, dtype dt, scalar_value v) {
    return {this, add(k, std::span<const std::int32_t>{}, std::span<const sym_expr>(shape.begin(), shape.size()),
                      static_cast<std::int32_t>(dt), v)};
  }
};

// ----- handle members -----
constexpr const tensor_meta& tensor::meta() const { return b->g.meta(id); }
constexpr tensor tensor::named(std::string_view n, source_loc at) const {
  const builder::call_site site(b, at);
  if (b && b->check(*this)) b->g[id].name = name_t(n);
  return *this;
}
constexpr tensor tensor::require_inplace(source_loc at) const {
  const builder::call_site site(b, at);
  if (b->check(*this)) {
    b->g[id].require_inplace = true;
    b->g[id].required_line = at.line > 0 && at.line <= 0xffff ? static_cast<std::uint16_t>(at.line) : std::uint16_t{0};
  }
  return *this;
}
constexpr tensor tensor::slice(index_t dim, sym_expr start, sym_expr end, index_t step, source_loc at) const {
  const builder::call_site site(b, at);
  return b->make(op_kind::slice, {*this}, {dim, start, end, step});
}
constexpr tensor tensor::select(index_t dim, sym_expr index, source_loc at) const {
  const builder::call_site site(b, at);
  return b ? b->make(op_kind::select, {*this}, {dim, index}) : *this;
}
constexpr tensor tensor::diagonal(index_t offset, index_t dim1, index_t dim2, source_loc at) const {
  const builder::call_site site(b, at);
  return b->make(op_kind::diagonal, {*this}, {offset, dim1, dim2});
}
constexpr tensor tensor::as_strided(std::initializer_list<sym_expr> sizes, std::initializer_list<sym_expr> strides,
                                    sym_expr offset, source_loc at) const {
  const builder::call_site site(b, at);
  sym_expr p[2 * max_rank + 2]{};
  std::size_t k = 0;
  p[k++] = sym_expr(static_cast<index_t>(sizes.size()));
  for (auto s : sizes) if (k < 2 * max_rank + 1) p[k++] = s;
  if (sizes.size() != strides.size() || sizes.size() > max_rank) p[0] = sym_expr(-1);  // reported by the rule
  for (auto s : strides) if (k < 2 * max_rank + 1) p[k++] = s;
  p[k++] = offset;
  if (!b || !b->check(*this)) return *this;
  std::int32_t a[1] = {id};
  return {b, b->add(op_kind::as_strided, std::span<const std::int32_t>(a, 1), std::span<const sym_expr>(p, k))};
}
constexpr tensor tensor::view(std::initializer_list<sym_expr> sizes, source_loc at) const {
  const builder::call_site site(b, at);
  if (!b || !b->check(*this)) return *this;
  std::int32_t a[1] = {id};
  return {b, b->add(op_kind::view, std::span<const std::int32_t>(a, 1), std::span<const sym_expr>(sizes.begin(), sizes.size()))};
}
// reshape = view when the layout allows it, else a contiguous copy then view (PyTorch's
// decomposition: clone(memory_format=contiguous_format); a plain clone keeps the strides).
constexpr tensor tensor::reshape(std::initializer_list<sym_expr> sizes, source_loc at) const {
  const builder::call_site site(b, at);
  if (!b || !b->check(*this)) return *this;
  if (meta().is_contiguous()) return view(sizes);
  if (detail::clone_meta(meta()).is_contiguous()) return clone().view(sizes);  // a clone packs it
  return b->make(op_kind::clone, {*this}, {}, 1).view(sizes);  // permuted: clone(memory_format=contiguous_format)
}
constexpr tensor tensor::permute(std::initializer_list<index_t> dims, source_loc at) const {
  const builder::call_site site(b, at);
  sym_expr p[max_rank]{};
  std::size_t k = 0;
  for (auto d : dims) if (k < max_rank) p[k++] = sym_expr(d);
  if (!b || !b->check(*this)) return *this;
  std::int32_t a[1] = {id};
  return {b, b->add(op_kind::permute, std::span<const std::int32_t>(a, 1), std::span<const sym_expr>(p, k))};
}
constexpr tensor tensor::transpose(index_t d0, index_t d1, source_loc at) const {
  const builder::call_site site(b, at);
  return b ? b->make(op_kind::transpose, {*this}, {d0, d1}) : *this;
}
constexpr tensor tensor::unsqueeze(index_t dim, source_loc at) const {
  const builder::call_site site(b, at);
  return b ? b->make(op_kind::unsqueeze, {*this}, {dim}) : *this;
}
constexpr tensor tensor::squeeze(index_t dim, source_loc at) const {
  const builder::call_site site(b, at);
  return b ? b->make(op_kind::squeeze, {*this}, {dim}) : *this;
}
constexpr tensor tensor::expand(std::initializer_list<sym_expr> sizes, source_loc at) const {
  const builder::call_site site(b, at);
  if (!b || !b->check(*this)) return *this;
  std::int32_t a[1] = {id};
  return {b, b->add(op_kind::expand, std::span<const std::int32_t>(a, 1), std::span<const sym_expr>(sizes.begin(), sizes.size()))};
}
constexpr tensor tensor::alias(source_loc at) const {
  const builder::call_site site(b, at);
  return b ? b->make(op_kind::alias, {*this}) : *this;
}
constexpr tensor tensor::clone(source_loc at) const {
  const builder::call_site site(b, at);
  return b ? b->make(op_kind::clone, {*this}) : *this;
}
namespace detail {
// sum, amax, amin, mean: the reduced dimensions as params, keepdim (bit 0) and a sum's dtype= (bit 1) as aux.
constexpr tensor reduction(const tensor& t, op_kind k, std::initializer_list<index_t> dims, std::int32_t aux) {
  sym_expr p[max_rank]{};
  std::size_t n = 0;
  for (auto d : dims) if (n < max_rank) p[n++] = sym_expr(d);
  if (!t.b || !t.b->check(t)) return t;
  std::int32_t a[1] = {t.id};
  return {t.b, t.b->add(k, std::span<const std::int32_t>(a, 1), std::span<const sym_expr>(p, n), aux)};
}
}  // namespace detail
constexpr tensor tensor::sum(std::initializer_list<index_t> dims, bool keepdim, source_loc at) const {
  const builder::call_site site(b, at);
  return detail::reduction(*this, op_kind::sum, dims, keepdim ? 1 : 0);
}
constexpr tensor tensor::sum(std::initializer_list<index_t> dims, bool keepdim, dtype dt, source_loc at) const {
  const builder::call_site site(b, at);
  if (!b || !b->check(*this)) return *this;
  const tensor x = meta().dt == dt ? *this : to(dt);
  return detail::reduction(x, op_kind::sum, dims, (keepdim ? 1 : 0) | sum_in_input_dtype);
}
constexpr tensor tensor::amax(std::initializer_list<index_t> dims, bool keepdim, source_loc at) const {
  const builder::call_site site(b, at);
  return detail::reduction(*this, op_kind::amax, dims, keepdim ? 1 : 0);
}
constexpr tensor tensor::amin(std::initializer_list<index_t> dims, bool keepdim, source_loc at) const {
  const builder::call_site site(b, at);
  return detail::reduction(*this, op_kind::amin, dims, keepdim ? 1 : 0);
}
constexpr tensor tensor::prod(std::optional<index_t> dim, bool keepdim, source_loc at) const {
  const builder::call_site site(b, at);
  if (dim) return detail::reduction(*this, op_kind::prod, {*dim}, keepdim ? 1 : 0);
  return detail::reduction(*this, op_kind::prod, {}, 0);
}
namespace detail {
// argmax, argmin: the dim as a param (none: the flattened tensor; a 0-d tensor's dim 0 or -1 too).
constexpr tensor arg_reduction(const tensor& t, op_kind k, std::optional<index_t> dim, bool keepdim) {
  if (!t.b || !t.b->check(t)) return t;
  std::int32_t a[1] = {t.id};
  sym_expr p[1]{};
  std::size_t n = 0;
  if (dim && (t.meta().rank > 0 || (*dim != 0 && *dim != -1))) p[n++] = sym_expr(*dim);
  return {t.b, t.b->add(k, std::span<const std::int32_t>(a, 1), std::span<const sym_expr>(p, n), keepdim)};
}
}  // namespace detail
namespace detail {
// var, var_mean: the reduced dimensions as params, keepdim as aux, the correction as the scalar.
constexpr tensor welford(const tensor& t, op_kind k, std::initializer_list<index_t> dims, double correction, std::int32_t aux) {
  sym_expr p[max_rank]{};
  std::size_t n = 0;
  for (auto d : dims) if (n < max_rank) p[n++] = sym_expr(d);
  if (!t.b || !t.b->check(t)) return t;
  std::int32_t a[1] = {t.id};
  return {t.b, t.b->add(k, std::span<const std::int32_t>(a, 1), std::span<const sym_expr>(p, n), aux, scalar_value(correction))};
}
}  // namespace detail
constexpr tensor tensor::var(std::initializer_list<index_t> dims, double correction, bool keepdim, source_loc at) const {
  const builder::call_site site(b, at);
  return detail::welford(*this, op_kind::var, dims, correction, keepdim ? 1 : 0);
}
constexpr tensor tensor::var_mean_mean(std::initializer_list<index_t> dims, double correction, bool keepdim, source_loc at) const {
  const builder::call_site site(b, at);
  return detail::welford(*this, op_kind::var_mean, dims, correction, keepdim ? 1 : 0);
}
constexpr tensor tensor::var_mean_var(std::initializer_list<index_t> dims, double correction, bool keepdim, source_loc at) const {
  const builder::call_site site(b, at);
  return detail::welford(*this, op_kind::var, dims, correction, keepdim ? 3 : 2);
}
constexpr tensor tensor::cumsum(index_t dim, std::optional<dtype> dt, source_loc at) const {
  const builder::call_site site(b, at);
  if (!b || !b->check(*this)) return *this;
  const dtype xd = meta().dt;
  const dtype od = dt ? *dt : is_floating(xd) ? xd : dtype::i64;
  const tensor x = od == xd ? *this : b->make(op_kind::convert, {*this}, {}, static_cast<std::int32_t>(od));
  return b->make(op_kind::cumsum, {x}, {sym_expr(dim)});
}
constexpr tensor tensor::constant_pad(std::span<const index_t> pads, scalar_value v, source_loc at) const {
  const builder::call_site site(b, at);
  if (!b || !b->check(*this)) return *this;
  const int rank = meta().rank;
  if (pads.size() % 2 != 0 || pads.size() / 2 > static_cast<std::size_t>(rank)) {
    b->g.fail(rule::bad_argument, id, "constant_pad_nd takes a pair of pads per dimension, for at most every dimension [rule bad-argument]");
    return *this;
  }
  tensor r = *this;
  bool fresh = false;  // r is a new tensor (a cat), not a view of x
  for (std::size_t k = 0; k < pads.size() / 2; ++k) {
    const index_t d = rank - 1 - static_cast<index_t>(k), lo = pads[2 * k], hi = pads[2 * k + 1];
    if (lo < 0 || hi < 0) {  // crop first: PyTorch pads the cropped tensor
      const sym_expr n = r.meta().size[d];
      r = r.slice(d, sym_expr(lo < 0 ? -lo : 0), hi < 0 ? n + sym_expr(hi) : n);
    }
    if (lo <= 0 && hi <= 0) continue;
    std::int32_t parts[3]{};
    std::size_t count = 0;
    for (int side = 0; side < 3; ++side) {
      const index_t w = side == 0 ? lo : hi;
      if (side == 1) { parts[count++] = r.id; continue; }
      if (w <= 0) continue;
      sym_expr sz[max_rank]{};
      for (int j = 0; j < rank; ++j) sz[j] = j == d ? sym_expr(w) : r.meta().size[j];
      parts[count++] = b->add(op_kind::full, std::span<const std::int32_t>{}, std::span<const sym_expr>(sz, static_cast<std::size_t>(rank)),
                              static_cast<std::int32_t>(meta().dt), v);
    }
    const sym_expr p[1] = {sym_expr(d)};
    r = {b, b->add(op_kind::cat, std::span<const std::int32_t>(parts, count), std::span<const sym_expr>(p, 1))};
    fresh = true;
  }
  return fresh ? r : r.clone();
}
constexpr tensor tensor::unfold(index_t dim, index_t size, index_t step, source_loc at) const {
  const builder::call_site site(b, at);
  if (!b || !b->check(*this)) return *this;
  const tensor_meta m = meta();
  const index_t d = dim < 0 ? dim + m.rank : dim;
  if (m.rank == 0 || m.rank >= max_rank || d < 0 || d >= m.rank) {
    b->g.fail(rule::bad_argument, id, "unfold's dim must be a dimension of a tensor of 1 to 7 dimensions [rule bad-argument]");
    return *this;
  }
  if (!m.size[d].is_static() || size < 0 || step < 1 || size > m.size[d].value()) {
    b->g.fail(rule::bad_argument, id,
              "unfold's window must fit a static extent: 0 <= size <= the extent, step >= 1 (a symbolic extent's window count "
              "is a floor division ctfx's extents do not express) [rule bad-argument]");
    return *this;
  }
  sym_expr p[2 * max_rank + 2]{};
  const int r = m.rank + 1;
  p[0] = sym_expr(static_cast<index_t>(r));
  for (int i = 0; i < m.rank; ++i) {
    p[1 + i] = i == d ? sym_expr((m.size[d].value() - size) / step + 1) : m.size[i];
    p[1 + r + i] = i == d ? m.stride[d] * sym_expr(step) : m.stride[i];
  }
  p[r] = sym_expr(size);
  p[2 * r] = m.stride[d];
  p[2 * r + 1] = m.offset;
  std::int32_t a[1] = {id};
  return {b, b->add(op_kind::as_strided, std::span<const std::int32_t>(a, 1), std::span<const sym_expr>(p, static_cast<std::size_t>(2 * r + 2)))};
}
constexpr tensor tensor::flip(std::span<const index_t> dims, source_loc at) const {
  const builder::call_site site(b, at);
  if (!b || !b->check(*this)) return *this;
  const int rank = meta().rank;
  bool seen[max_rank]{};
  for (index_t d : dims) {
    const index_t n = d < 0 ? d + rank : d;
    if (n < 0 || n >= rank || seen[n]) {
      b->g.fail(rule::bad_argument, id, "flip's dims must be distinct dimensions of its input [rule bad-argument]");
      return *this;
    }
    seen[n] = true;
  }
  tensor r = *this;
  bool fresh = false;
  for (int d = 0; d < rank; ++d) {
    if (!seen[d]) continue;
    const tensor idx = b->iota(r.meta().size[d], -1, -1);
    std::int32_t a[1 + max_rank]{};
    a[0] = r.id;
    for (int j = 0; j < d; ++j) a[1 + j] = -1;
    a[1 + d] = idx.id;
    r = {b, b->add(op_kind::index, std::span<const std::int32_t>(a, static_cast<std::size_t>(d + 2)))};
    fresh = true;
  }
  return fresh ? r : r.clone();
}
constexpr tensor tensor::cumprod(index_t dim, std::optional<dtype> dt, source_loc at) const {
  const builder::call_site site(b, at);
  if (!b || !b->check(*this)) return *this;
  const dtype xd = meta().dt;
  const dtype od = dt ? *dt : is_floating(xd) ? xd : dtype::i64;
  const tensor x = od == xd ? *this : b->make(op_kind::convert, {*this}, {}, static_cast<std::int32_t>(od));
  return b->make(op_kind::cumprod, {x}, {sym_expr(dim)});
}
constexpr tensor tensor::logcumsumexp(index_t dim, source_loc at) const {
  const builder::call_site site(b, at);
  if (!b || !b->check(*this)) return *this;
  return b->make(op_kind::logcumsumexp, {*this}, {sym_expr(dim)});
}
constexpr tensor tensor::argmax(std::optional<index_t> dim, bool keepdim, source_loc at) const {
  const builder::call_site site(b, at);
  return detail::arg_reduction(*this, op_kind::argmax, dim, keepdim);
}
constexpr tensor tensor::argmin(std::optional<index_t> dim, bool keepdim, source_loc at) const {
  const builder::call_site site(b, at);
  return detail::arg_reduction(*this, op_kind::argmin, dim, keepdim);
}
constexpr tensor tensor::mean(std::initializer_list<index_t> dims, bool keepdim, source_loc at) const {
  const builder::call_site site(b, at);
  return detail::reduction(*this, op_kind::mean, dims, keepdim ? 1 : 0);
}
constexpr tensor tensor::mean(std::initializer_list<index_t> dims, bool keepdim, dtype dt, source_loc at) const {
  const builder::call_site site(b, at);
  if (!b || !b->check(*this)) return *this;
  return detail::reduction(meta().dt == dt ? *this : to(dt), op_kind::mean, dims, keepdim ? 1 : 0);
}
constexpr tensor tensor::to(dtype d, source_loc at) const {
  const builder::call_site site(b, at);
  return b ? b->make(op_kind::convert, {*this}, {}, static_cast<std::int32_t>(d)) : *this;
}
constexpr tensor tensor::sym_size(index_t dim, source_loc at) const {
  const builder::call_site site(b, at);
  return b ? b->make(op_kind::sym_size, {*this}, {dim}) : *this;
}
constexpr tensor tensor::add_(tensor o, source_loc at) const {
  const builder::call_site site(b, at);
  return b ? b->make(op_kind::add_, {*this, o}) : *this;
}
constexpr tensor tensor::mul_(tensor o, source_loc at) const {
  const builder::call_site site(b, at);
  return b ? b->make(op_kind::mul_, {*this, o}) : *this;
}
constexpr tensor tensor::fill_(scalar_value v, source_loc at) const {
  const builder::call_site site(b, at);
  return b ? b->make(op_kind::fill_, {*this}, {}, 0, v) : *this;
}
constexpr tensor tensor::copy_(tensor src, source_loc at) const {
  const builder::call_site site(b, at);
  return b ? b->make(op_kind::copy_, {*this, src}) : *this;
}

constexpr tensor tuple_ref::operator[](int i) const {
  if (id < 0) return {b, -1};
  std::int32_t a[1] = {id};
  return {b, b->add(op_kind::getitem, std::span<const std::int32_t>(a, 1), {}, i)};
}

// ----- free functions -----
namespace detail {
constexpr tensor binary(op_kind k, tensor a, tensor b) {
  builder* bb = a.b ? a.b : b.b;  // a default-constructed operand is reported by the other's builder
  return bb ? bb->make(k, {a, b}) : a;
}
// A scalar right operand; an int (or bool) scalar is marked integral (aux 2), a float aux 1.
constexpr tensor binary(op_kind k, tensor a, scalar_value s) { if (!a.b) return a;
  return a.b->make(k, {a}, {}, s.exact_int() ? 2 : 1, s);
}
// pow's and remainder's double operand: an integral value is an int (PyTorch's Python callers pass 2, not 2.0).
constexpr scalar_value int_if_whole(double v) {
  return v >= -0x1p63 && v < 0x1p63 && v == static_cast<double>(static_cast<long long>(v))
             ? scalar_value::integer(static_cast<long long>(v)) : scalar_value(v);
}
}  // namespace detail

#define CTFX_BINARY_OP(OP, KIND) \
  constexpr tensor operator OP(tensor a, tensor b) { return detail::binary(op_kind::KIND, a, b); } \
  template <class S> requires std::is_arithmetic_v<S> \
  constexpr tensor operator OP(tensor a, S s) { return detail::binary(op_kind::KIND, a, scalar_value(s)); }
/// \fn constexpr tensor ctfx::operator+(tensor a, tensor b)
/// `a + b` (`torch.add`, `aten.add.Tensor`), broadcasting. Dtypes: any; the result's is
/// `torch.result_type(a, b)`'s (a 0-d tensor promotes only across categories).
/// \fn template <class S> requires std::is_arithmetic_v<S> constexpr tensor ctfx::operator+(tensor a, S s)
/// `a + s` with a Python number (`aten.add.Scalar`): an integral `s` is an int, a floating one a
/// float; the result's dtype is `torch.result_type(a, s)`'s (a float number makes an integer `a` f32).
CTFX_BINARY_OP(+, add)
/// \fn constexpr tensor ctfx::operator-(tensor a, tensor b)
/// `a - b` (`torch.sub`, `aten.sub.Tensor`), broadcasting. Dtypes: any; the result's is `torch.result_type(a, b)`'s.
/// \fn template <class S> requires std::is_arithmetic_v<S> constexpr tensor ctfx::operator-(tensor a, S s)
/// `a - s` with a Python number (`aten.sub.Scalar`); the result's dtype is `torch.result_type(a, s)`'s.
CTFX_BINARY_OP(-, sub)
/// \fn constexpr tensor ctfx::operator*(tensor a, tensor b)
/// `a * b` (`torch.mul`, `aten.mul.Tensor`), broadcasting. Dtypes: any; the result's is `torch.result_type(a, b)`'s.
/// \fn template <class S> requires std::is_arithmetic_v<S> constexpr tensor ctfx::operator*(tensor a, S s)
/// `a * s` with a Python number (`aten.mul.Scalar`; for f16 and bf16 the number is used at full
/// precision, as PyTorch's kernels do); the result's dtype is `torch.result_type(a, s)`'s.
CTFX_BINARY_OP(*, mul)
/// \fn constexpr tensor ctfx::operator/(tensor a, tensor b)
/// `a / b` (`torch.div`, `aten.div.Tensor`): true division, broadcasting; integer or bool operands
/// give f32, as PyTorch's.
/// \fn template <class S> requires std::is_arithmetic_v<S> constexpr tensor ctfx::operator/(tensor a, S s)
/// `a / s` with a Python number (`aten.div.Scalar`): true division (an integer `a` gives f32).
CTFX_BINARY_OP(/, div)
#undef CTFX_BINARY_OP
/// `-a` (`torch.neg`, `aten.neg`): the result has a's shape and dtype.
constexpr tensor operator-(tensor a) { if (!a.b) return a;
  return a.b->make(op_kind::neg, {a});
}
/// `torch.maximum(a, b)` (`aten.maximum`): the larger element, NaN if either is NaN; broadcasting,
/// dtype `torch.result_type(a, b)`.
constexpr tensor maximum(tensor a, tensor b, source_loc at = source_loc::current()) {
  const builder::call_site site(a.b ? a.b : b.b, at);
  return detail::binary(op_kind::maximum, a, b);
}
/// `torch.minimum(a, b)` (`aten.minimum`): the smaller element, NaN if either is NaN; broadcasting,
/// dtype `torch.result_type(a, b)`.
constexpr tensor minimum(tensor a, tensor b, source_loc at = source_loc::current()) {
  const builder::call_site site(a.b ? a.b : b.b, at);
  return detail::binary(op_kind::minimum, a, b);
}
/// `torch.pow(a, b)` (`aten.pow.Tensor_Tensor`): a to the power b, broadcasting; dtype
/// `torch.result_type(a, b)`.
constexpr tensor pow(tensor a, tensor b, source_loc at = source_loc::current()) {
  const builder::call_site site(a.b ? a.b : b.b, at);
  return detail::binary(op_kind::pow, a, b);
}
/// `torch.pow(a, e)` (`aten.pow.Tensor_Scalar`): a whole `e` is an int exponent (`pow(x, 2.0)` is
/// `x ** 2`), so an integer `a` stays integer; `pow(x, 0.5)` of an integer `x` is f32.
constexpr tensor pow(tensor a, double e, source_loc at = source_loc::current()) {
  const builder::call_site site(a.b, at);
  return detail::binary(op_kind::pow, a, detail::int_if_whole(e));
}
/// `aten.remainder`: Python's modulo (the result has the divisor's sign).
constexpr tensor remainder(tensor a, tensor b, source_loc at = source_loc::current()) {
  const builder::call_site site(a.b ? a.b : b.b, at);
  return detail::binary(op_kind::remainder, a, b);
}
/// `torch.remainder(a, s)` with a Python number (`aten.remainder.Scalar`); a whole `s` is an int.
constexpr tensor remainder(tensor a, double s, source_loc at = source_loc::current()) {
  const builder::call_site site(a.b, at);
  return detail::binary(op_kind::remainder, a, detail::int_if_whole(s));
}
/// `torch.fmod(a, b)` (`aten.fmod.Tensor`): C's fmod, the remainder of truncating division (the
/// result has the dividend's sign; exact for floats); an integer fmod by 0 is 0 (PyTorch raises).
constexpr tensor fmod(tensor a, tensor b, source_loc at = source_loc::current()) {
  const builder::call_site site(a.b ? a.b : b.b, at);
  return detail::binary(op_kind::fmod, a, b);
}
/// `torch.fmod(a, s)` with a Python number (`aten.fmod.Scalar`); a whole `s` is an int.
constexpr tensor fmod(tensor a, double s, source_loc at = source_loc::current()) {
  const builder::call_site site(a.b, at);
  return detail::binary(op_kind::fmod, a, detail::int_if_whole(s));
}
/// `torch.hypot(a, b)` (`aten.hypot`): sqrt(a^2 + b^2) without intermediate overflow (C's hypot);
/// floats only, as PyTorch's; libm's, PyTorch's vectorized kernel (SLEEF) may differ by 1 ulp.
constexpr tensor hypot(tensor a, tensor b, source_loc at = source_loc::current()) {
  const builder::call_site site(a.b ? a.b : b.b, at);
  return detail::binary(op_kind::hypot, a, b);
}
/// `torch.atan2(a, b)` (`aten.atan2`): the angle of (b, a) in (-pi, pi] (C's atan2); integer operands
/// give f32, as PyTorch's; libm's, PyTorch's vectorized kernel (SLEEF) may differ by 1 ulp.
constexpr tensor atan2(tensor a, tensor b, source_loc at = source_loc::current()) {
  const builder::call_site site(a.b ? a.b : b.b, at);
  return detail::binary(op_kind::atan2, a, b);
}
/// `torch.pow(s, e)` with a Python number base (`aten.pow.Scalar`): the number becomes a 0-d tensor
/// of `torch.result_type(s, e)` (a whole `s` is an int), as PyTorch wraps it, then `pow(base, e)`.
constexpr tensor pow(double s, tensor e, source_loc at = source_loc::current()) {
  const builder::call_site site(e.b, at);
  if (!e.b) return e;
  const scalar_value v = detail::int_if_whole(s);
  const tensor base = e.b->full({}, v, promote_scalar(e.b->g.meta(e.id).dt, v.exact_int()), at);
  return detail::binary(op_kind::pow, base, e);
}

// Integer bitwise ops (PyTorch's `&`, `|`, `^`, `<<`, `>>`): integer or bool operands, broadcasting,
// dtype `torch.result_type(a, b)`; a number operand is an int.
#define CTFX_BITWISE_FN(NAME)                                                                  \
  constexpr tensor NAME(tensor a, tensor b, source_loc at = source_loc::current()) {           \
    const builder::call_site site(a.b ? a.b : b.b, at);                                        \
    return detail::binary(op_kind::NAME, a, b);                                                \
  }                                                                                            \
  constexpr tensor NAME(tensor a, std::int64_t s, source_loc at = source_loc::current()) {     \
    const builder::call_site site(a.b, at);                                                    \
    return detail::binary(op_kind::NAME, a, scalar_value::integer(s));                        \
  }
/// \fn constexpr tensor ctfx::bitwise_and(tensor a, tensor b, source_loc at)
/// `a & b` (`aten.bitwise_and.Tensor`); on bool tensors the same as logical_and.
/// \fn constexpr tensor ctfx::bitwise_and(tensor a, std::int64_t s, source_loc at)
/// `a & s` with a Python int (`aten.bitwise_and.Scalar`).
CTFX_BITWISE_FN(bitwise_and)
/// \fn constexpr tensor ctfx::bitwise_or(tensor a, tensor b, source_loc at)
/// `a | b` (`aten.bitwise_or.Tensor`).
/// \fn constexpr tensor ctfx::bitwise_or(tensor a, std::int64_t s, source_loc at)
/// `a | s` with a Python int (`aten.bitwise_or.Scalar`).
CTFX_BITWISE_FN(bitwise_or)
/// \fn constexpr tensor ctfx::bitwise_xor(tensor a, tensor b, source_loc at)
/// `a ^ b` (`aten.bitwise_xor.Tensor`).
/// \fn constexpr tensor ctfx::bitwise_xor(tensor a, std::int64_t s, source_loc at)
/// `a ^ s` with a Python int (`aten.bitwise_xor.Scalar`).
CTFX_BITWISE_FN(bitwise_xor)
/// \fn constexpr tensor ctfx::bitwise_left_shift(tensor a, tensor b, source_loc at)
/// `a << b` (`aten.bitwise_left_shift.Tensor`): integers only; a count below 0 or at least the
/// dtype's width gives 0, as PyTorch's CPU kernel.
/// \fn constexpr tensor ctfx::bitwise_left_shift(tensor a, std::int64_t s, source_loc at)
/// `a << s` (`aten.bitwise_left_shift.Tensor_Scalar`, `aten.__lshift__.Scalar`); `s` wraps to a's dtype first.
CTFX_BITWISE_FN(bitwise_left_shift)
/// \fn constexpr tensor ctfx::bitwise_right_shift(tensor a, tensor b, source_loc at)
/// `a >> b` (`aten.bitwise_right_shift.Tensor`): arithmetic (the sign fills); a count below 0 or at
/// least the dtype's width less one gives the sign (0 or -1), as PyTorch's CPU kernel.
/// \fn constexpr tensor ctfx::bitwise_right_shift(tensor a, std::int64_t s, source_loc at)
/// `a >> s` (`aten.bitwise_right_shift.Tensor_Scalar`, `aten.__rshift__.Scalar`).
CTFX_BITWISE_FN(bitwise_right_shift)
#undef CTFX_BITWISE_FN

// Comparisons (bool results, computed in the operands' promoted type) and logical ops. Functions,
// not operators: `a == b` compares handles.
#define CTFX_PREDICATE_FN(NAME)                                                             \
  constexpr tensor NAME(tensor a, tensor b, source_loc at = source_loc::current()) {        \
    const builder::call_site site(a.b ? a.b : b.b, at);                                     \
    return detail::binary(op_kind::NAME, a, b);                                             \
  }                                                                                         \
  template <class S> requires std::is_arithmetic_v<S>                                       \
  constexpr tensor NAME(tensor a, S s, source_loc at = source_loc::current()) {             \
    const builder::call_site site(a.b, at);                                                 \
    return detail::binary(op_kind::NAME, a, scalar_value(s));                               \
  }
/// \fn constexpr tensor ctfx::eq(tensor a, tensor b, source_loc at)
/// `a == b` elementwise (`torch.eq`, `aten.eq.Tensor`): a b8 tensor, compared in the operands'
/// promoted dtype (`a == b` in C++ compares handles, hence a function).
/// \fn template <class S> requires std::is_arithmetic_v<S> constexpr tensor ctfx::eq(tensor a, S s, source_loc at)
/// `a == s` with a Python number (`aten.eq.Scalar`): b8.
/// \fn constexpr tensor ctfx::ne(tensor a, tensor b, source_loc at)
/// `a != b` elementwise (`torch.ne`, `aten.ne.Tensor`): b8, compared in the promoted dtype.
/// \fn template <class S> requires std::is_arithmetic_v<S> constexpr tensor ctfx::ne(tensor a, S s, source_loc at)
/// `a != s` with a Python number (`aten.ne.Scalar`): b8.
/// \fn constexpr tensor ctfx::lt(tensor a, tensor b, source_loc at)
/// `a < b` elementwise (`torch.lt`, `aten.lt.Tensor`): b8, compared in the promoted dtype.
/// \fn template <class S> requires std::is_arithmetic_v<S> constexpr tensor ctfx::lt(tensor a, S s, source_loc at)
/// `a < s` with a Python number (`aten.lt.Scalar`): b8.
/// \fn constexpr tensor ctfx::le(tensor a, tensor b, source_loc at)
/// `a <= b` elementwise (`torch.le`, `aten.le.Tensor`): b8, compared in the promoted dtype.
/// \fn template <class S> requires std::is_arithmetic_v<S> constexpr tensor ctfx::le(tensor a, S s, source_loc at)
/// `a <= s` with a Python number (`aten.le.Scalar`): b8.
/// \fn constexpr tensor ctfx::gt(tensor a, tensor b, source_loc at)
/// `a > b` elementwise (`torch.gt`, `aten.gt.Tensor`): b8, compared in the promoted dtype.
/// \fn template <class S> requires std::is_arithmetic_v<S> constexpr tensor ctfx::gt(tensor a, S s, source_loc at)
/// `a > s` with a Python number (`aten.gt.Scalar`): b8.
CTFX_PREDICATE_FN(eq) CTFX_PREDICATE_FN(ne) CTFX_PREDICATE_FN(lt) CTFX_PREDICATE_FN(le) CTFX_PREDICATE_FN(gt)
/// \fn constexpr tensor ctfx::ge(tensor a, tensor b, source_loc at)
/// `a >= b` elementwise (`torch.ge`, `aten.ge.Tensor`): b8, compared in the promoted dtype.
/// \fn template <class S> requires std::is_arithmetic_v<S> constexpr tensor ctfx::ge(tensor a, S s, source_loc at)
/// `a >= s` with a Python number (`aten.ge.Scalar`): b8.
/// \fn constexpr tensor ctfx::clamp_min(tensor a, tensor b, source_loc at)
/// `torch.clamp_min(a, b)` (`aten.clamp_min.Tensor`): max(a, b) elementwise, NaN propagated;
/// dtype `torch.result_type(a, b)`.
/// \fn template <class S> requires std::is_arithmetic_v<S> constexpr tensor ctfx::clamp_min(tensor a, S s, source_loc at)
/// `torch.clamp_min(a, s)` with a Python number (`aten.clamp_min.default`).
/// \fn constexpr tensor ctfx::clamp_max(tensor a, tensor b, source_loc at)
/// `torch.clamp_max(a, b)` (`aten.clamp_max.Tensor`): min(a, b) elementwise, NaN propagated;
/// dtype `torch.result_type(a, b)`.
/// \fn template <class S> requires std::is_arithmetic_v<S> constexpr tensor ctfx::clamp_max(tensor a, S s, source_loc at)
/// `torch.clamp_max(a, s)` with a Python number (`aten.clamp_max.default`).
CTFX_PREDICATE_FN(ge) CTFX_PREDICATE_FN(clamp_min) CTFX_PREDICATE_FN(clamp_max)
#undef CTFX_PREDICATE_FN
/// `a // b` (`aten.floor_divide`, `div(rounding_mode='floor')`): integers stay integers; an integer
/// division by 0 gives 0 (PyTorch raises).
constexpr tensor floor_divide(tensor a, tensor b, source_loc at = source_loc::current()) {
  const builder::call_site site(a.b ? a.b : b.b, at);
  return detail::binary(op_kind::floor_divide, a, b);
}
/// `a // s` with a Python number (`aten.floor_divide.Scalar`).
template <class S> requires std::is_arithmetic_v<S>
constexpr tensor floor_divide(tensor a, S s, source_loc at = source_loc::current()) {
  const builder::call_site site(a.b, at);
  return detail::binary(op_kind::floor_divide, a, scalar_value(s));
}
/// `div(a, b, rounding_mode='trunc')`: the quotient rounded toward zero.
constexpr tensor trunc_divide(tensor a, tensor b, source_loc at = source_loc::current()) {
  const builder::call_site site(a.b ? a.b : b.b, at);
  return detail::binary(op_kind::trunc_divide, a, b);
}
/// `div(a, s, rounding_mode='trunc')` with a Python number.
template <class S> requires std::is_arithmetic_v<S>
constexpr tensor trunc_divide(tensor a, S s, source_loc at = source_loc::current()) {
  const builder::call_site site(a.b, at);
  return detail::binary(op_kind::trunc_divide, a, scalar_value(s));
}

/// `torch.logical_and(a, b)`: (a != 0) and (b != 0), a b8 tensor; any dtypes, broadcasting.
constexpr tensor logical_and(tensor a, tensor b, source_loc at = source_loc::current()) {
  const builder::call_site site(a.b ? a.b : b.b, at);
  return detail::binary(op_kind::logical_and, a, b);
}
/// `torch.logical_or(a, b)`: (a != 0) or (b != 0), a b8 tensor; any dtypes, broadcasting.
constexpr tensor logical_or(tensor a, tensor b, source_loc at = source_loc::current()) {
  const builder::call_site site(a.b ? a.b : b.b, at);
  return detail::binary(op_kind::logical_or, a, b);
}
/// `torch.logical_not(a)`: a == 0, a b8 tensor; any dtype.
constexpr tensor logical_not(tensor a, source_loc at = source_loc::current()) {
  const builder::call_site site(a.b, at);
  return a.b ? a.b->make(op_kind::logical_not, {a}) : a;
}
/// `aten.clamp`, as PyTorch's post-grad graphs print it: clamp_min then clamp_max; either bound
/// may be std::nullopt (at least one is given).
constexpr tensor clamp(tensor a, std::optional<double> lo, std::optional<double> hi, source_loc at = source_loc::current()) {
  if (lo && hi) return clamp_max(clamp_min(a, *lo, at), *hi, at);
  if (lo) return clamp_min(a, *lo, at);
  if (hi) return clamp_max(a, *hi, at);
  const builder::call_site site(a.b, at);
  if (a.b) a.b->g.fail(rule::bad_argument, a.id, "clamp needs a min or a max (both are std::nullopt) [rule bad-argument]");
  return a;
}
/// `aten.where.self`: c ? a : b elementwise (c bool; the three broadcast).
constexpr tensor where(tensor c, tensor a, tensor b, source_loc at = source_loc::current()) {
  builder* bb = c.b ? c.b : a.b ? a.b : b.b;
  const builder::call_site site(bb, at);
  return bb ? bb->make(op_kind::where, {c, a, b}) : c;
}

/// `prims.fma`: a * b + c rounded once (std::fma; integers modulo 2^bits); the three broadcast and
/// promote, each loaded straight into the result's compute type (float for f16/bf16, then rounded).
constexpr tensor fma(tensor a, tensor b, tensor c, source_loc at = source_loc::current()) {
  builder* bb = a.b ? a.b : b.b ? b.b : c.b;
  const builder::call_site site(bb, at);
  return bb ? bb->make(op_kind::fma, {a, b, c}) : a;
}
/// fma(a, s, c) with a number s: s becomes a 0-d full of a and c's promoted dtype (rounded to it).
template <class S> requires std::is_arithmetic_v<S>
constexpr tensor fma(tensor a, S s, tensor c, source_loc at = source_loc::current()) {
  builder* bb = a.b ? a.b : c.b;
  if (!bb || !a.b || !c.b) return a;
  const builder::call_site site(bb, at);
  const tensor_meta &x = a.meta(), &z = c.meta();
  const dtype dt = result_type(x.dt, x.rank > 0, z.dt, z.rank > 0);
  const tensor w = bb->full({}, scalar_value(s), dt, at);
  return bb->make(op_kind::fma, {a, w, c});
}

#define CTFX_UNARY_FN(NAME)                                                     \
  constexpr tensor NAME(tensor a, source_loc at = source_loc::current()) {      \
    const builder::call_site site(a.b, at);                                     \
    return a.b ? a.b->make(op_kind::NAME, {a}) : a;                             \
  }
/// \fn constexpr tensor ctfx::neg(tensor a, source_loc at)
/// `torch.neg(a)`, `-a` (`aten.neg`): the result has a's shape and dtype (as for every unary op below).
/// \fn constexpr tensor ctfx::abs(tensor a, source_loc at)
/// `torch.abs(a)` (`aten.abs`).
/// \fn constexpr tensor ctfx::exp(tensor a, source_loc at)
/// `torch.exp(a)` (`aten.exp`); libm's exp (PyTorch's vectorized kernel may differ by 1 ulp).
/// \fn constexpr tensor ctfx::log(tensor a, source_loc at)
/// `torch.log(a)` (`aten.log`): the natural logarithm.
/// \fn constexpr tensor ctfx::sin(tensor a, source_loc at)
/// `torch.sin(a)` (`aten.sin`).
CTFX_UNARY_FN(neg) CTFX_UNARY_FN(abs) CTFX_UNARY_FN(exp) CTFX_UNARY_FN(log) CTFX_UNARY_FN(sin)
/// \fn constexpr tensor ctfx::cos(tensor a, source_loc at)
/// `torch.cos(a)` (`aten.cos`).
/// \fn constexpr tensor ctfx::sqrt(tensor a, source_loc at)
/// `torch.sqrt(a)` (`aten.sqrt`).
/// \fn constexpr tensor ctfx::relu(tensor a, source_loc at)
/// `torch.relu(a)` (`aten.relu`): max(a, 0).
/// \fn constexpr tensor ctfx::ceil(tensor a, source_loc at)
/// `torch.ceil(a)` (`aten.ceil`); integers unchanged.
/// \fn constexpr tensor ctfx::floor(tensor a, source_loc at)
/// `torch.floor(a)` (`aten.floor`); integers unchanged.
CTFX_UNARY_FN(cos) CTFX_UNARY_FN(sqrt) CTFX_UNARY_FN(relu) CTFX_UNARY_FN(ceil) CTFX_UNARY_FN(floor)
/// \fn constexpr tensor ctfx::round(tensor a, source_loc at)
/// `torch.round(a)` (`aten.round`): half to even, as PyTorch's.
/// \fn constexpr tensor ctfx::trunc(tensor a, source_loc at)
/// `torch.trunc(a)` (`aten.trunc`): rounded toward zero.
/// \fn constexpr tensor ctfx::tanh(tensor a, source_loc at)
/// `torch.tanh(a)` (`aten.tanh`); libm's tanh (PyTorch's vectorized kernel may differ by 1 ulp).
/// \fn constexpr tensor ctfx::erf(tensor a, source_loc at)
/// `torch.erf(a)` (`aten.erf`, exact GELU's); libm's erf, within 1 ulp of PyTorch's CPU kernel.
/// \fn constexpr tensor ctfx::log1p(tensor a, source_loc at)
/// `torch.log1p(a)` (`aten.log1p`): log(1 + a), exact near 0 (softplus, log-sigmoid); libm's, PyTorch's
/// vectorized kernel may differ by 1 ulp.
/// \fn constexpr tensor ctfx::expm1(tensor a, source_loc at)
/// `torch.expm1(a)` (`aten.expm1`): exp(a) - 1, exact near 0 (ELU, SELU); libm's, PyTorch's vectorized
/// kernel may differ by 1 ulp.
/// \fn constexpr tensor ctfx::sigmoid(tensor a, source_loc at)
/// `torch.sigmoid(a)` (`aten.sigmoid`): 1 / (1 + exp(-a)).
/// \fn constexpr tensor ctfx::rsqrt(tensor a, source_loc at)
/// `torch.rsqrt(a)` (`aten.rsqrt`): 1 / sqrt(a).
CTFX_UNARY_FN(round) CTFX_UNARY_FN(trunc) CTFX_UNARY_FN(tanh) CTFX_UNARY_FN(erf) CTFX_UNARY_FN(log1p) CTFX_UNARY_FN(expm1)
CTFX_UNARY_FN(sigmoid) CTFX_UNARY_FN(rsqrt)
/// `aten.sign`: (0 < x) - (x < 0) (sign(nan) = 0, sign(-0.0) = +0.0).
CTFX_UNARY_FN(sign)
/// \fn constexpr tensor ctfx::log2(tensor a, source_loc at)
/// `torch.log2(a)` (`aten.log2`): the base-2 logarithm (an integer `a` converted to f32 first);
/// libm's, PyTorch's vectorized kernel (SLEEF) may differ by 1 ulp.
/// \fn constexpr tensor ctfx::log10(tensor a, source_loc at)
/// `torch.log10(a)` (`aten.log10`): the base-10 logarithm, as log2.
CTFX_UNARY_FN(log2) CTFX_UNARY_FN(log10)
/// `torch.exp2(a)` (`aten.exp2`): 2 to the power a (an integer `a` converted to f32 first); libm's,
/// PyTorch's vectorized kernel (SLEEF) may differ by 1 ulp.
CTFX_UNARY_FN(exp2)
#undef CTFX_UNARY_FN

/// `torch.bitwise_not(a)`, `~a` (`aten.bitwise_not`): the complement of an integer tensor; of a
/// bool tensor, logical_not (PyTorch's `~` on bools).
constexpr tensor bitwise_not(tensor a, source_loc at = source_loc::current()) {
  const builder::call_site site(a.b, at);
  if (!a.b) return a;
  return a.b->make(a.b->g.meta(a.id).dt == dtype::b8 ? op_kind::logical_not : op_kind::bitwise_not, {a});
}
/// `aten.isnan`: x != x (false for integers).
constexpr tensor isnan(tensor x, source_loc at = source_loc::current()) { return ne(x, x, at); }
/// `aten.isinf`: abs(x) == inf.
constexpr tensor isinf(tensor x, source_loc at = source_loc::current()) {
  return eq(abs(x, at), std::numeric_limits<double>::infinity(), at);
}
/// `aten.logical_xor`: (a != 0) != (b != 0).
constexpr tensor logical_xor(tensor a, tensor b, source_loc at = source_loc::current()) {
  return ne(ne(a, 0, at), ne(b, 0, at), at);
}
/// `aten.reciprocal`: 1 / x (pow(x, -1), which the kernels compute as a division); an integer or
/// bool x is converted to f32 first, as PyTorch's result is.
constexpr tensor reciprocal(tensor x, source_loc at = source_loc::current()) {
  if (x.b && !is_floating(x.meta().dt)) x = x.to(dtype::f32, at);
  const builder::call_site site(x.b, at);
  return detail::binary(op_kind::pow, x, scalar_value::integer(-1));
}

/// `torch.clone(a)` (`aten.clone`): a copy in a fresh buffer (any dtype); same as a.clone().
constexpr tensor clone(tensor a, source_loc at = source_loc::current()) { return a.clone(at); }
/// `aten.alias(a)`: a view of the whole of `a`; same as a.alias().
constexpr tensor alias(tensor a, source_loc at = source_loc::current()) { return a.alias(at); }
/// `torch.empty_like(a)` (`aten.empty_like`): a fresh, uninitialized tensor of a's shape and dtype.
constexpr tensor empty_like(tensor a, source_loc at = source_loc::current()) {
  const builder::call_site site(a.b, at);
  if (!a.b) return a;
  return a.b->make(op_kind::empty_like, {a});
}
/// `aten.copy(dst, src)`, the functional copy: a new tensor of dst's shape and dtype holding
/// `src` (broadcast and converted to dst's dtype); `dst` itself is not written.
constexpr tensor copy(tensor dst, tensor src, source_loc at = source_loc::current()) {
  builder* bb = dst.b ? dst.b : src.b;  // a default-constructed operand is reported by the other's builder
  const builder::call_site site(bb, at);
  return bb ? bb->make(op_kind::copy, {dst, src}) : dst;
}

/// `torch.slice_scatter(x, src, dim, start, end, step)`: a copy of x whose slice
/// `x[start:end:step]` along `dim` holds src (any dtype, src's equal to x's).
constexpr tensor slice_scatter(tensor x, tensor src, index_t dim = 0, index_t start = 0, index_t end = end_of_dim, index_t step = 1, source_loc at = source_loc::current()) {
  const builder::call_site site(x.b, at);
  if (!x.b) return x;
  return x.b->make(op_kind::slice_scatter, {x, src}, {dim, start, end, step});
}
/// `torch.select_scatter(x, src, dim, index)`: a copy of x whose `x.select(dim, index)` holds src.
constexpr tensor select_scatter(tensor x, tensor src, index_t dim, index_t index, source_loc at = source_loc::current()) {
  const builder::call_site site(x.b, at);
  if (!x.b) return x;
  return x.b->make(op_kind::select_scatter, {x, src}, {dim, index});
}
/// `torch.diagonal_scatter(x, src, offset, dim1, dim2)`: a copy of x whose diagonal holds src.
constexpr tensor diagonal_scatter(tensor x, tensor src, index_t offset = 0, index_t dim1 = 0, index_t dim2 = 1, source_loc at = source_loc::current()) {
  const builder::call_site site(x.b, at);
  if (!x.b) return x;
  return x.b->make(op_kind::diagonal_scatter, {x, src}, {offset, dim1, dim2});
}
/// `torch.as_strided_scatter(x, src, sizes, strides, offset)`: a copy of x whose strided view
/// `x.as_strided(sizes, strides, offset)` holds src.
constexpr tensor as_strided_scatter(tensor x, tensor src, std::initializer_list<sym_expr> sizes,
                                    std::initializer_list<sym_expr> strides, sym_expr offset = 0, source_loc at = source_loc::current()) {
  const builder::call_site site(x.b, at);
  sym_expr p[2 * max_rank + 2]{};
  std::size_t k = 0;
  p[k++] = sym_expr(static_cast<index_t>(sizes.size()));
  for (auto s : sizes) if (k < 2 * max_rank + 1) p[k++] = s;
  if (sizes.size() != strides.size() || sizes.size() > max_rank) p[0] = sym_expr(-1);
  for (auto s : strides) if (k < 2 * max_rank + 1) p[k++] = s;
  p[k++] = offset;
  if (!x.b->check(x) || !x.b->check(src)) return x;
  std::int32_t a[2] = {x.id, src.id};
  return {x.b, x.b->add(op_kind::as_strided_scatter, std::span<const std::int32_t>(a, 2), std::span<const sym_expr>(p, k))};
}

namespace detail {
constexpr tensor index_put_impl(op_kind k, tensor x, std::initializer_list<index_arg> idx, tensor v, bool acc) {
  std::int32_t a[2 + max_rank]{};
  std::size_t n = 0;
  if (!x.b->check(x) || !x.b->check(v)) return x;
  a[n++] = x.id;
  a[n++] = v.id;
  for (auto i : idx) if (n < 2 + max_rank) a[n++] = i.id;
  return {x.b, x.b->add(k, std::span<const std::int32_t>(a, n), {}, acc ? 1 : 0)};
}
}  // namespace detail
/// `aten.index.Tensor`: x[idx...] with integer index tensors (None: the whole dimension).
constexpr tensor index(tensor x, std::initializer_list<index_arg> idx, source_loc at = source_loc::current()) {
  const builder::call_site site(x.b, at);
  std::int32_t a[1 + max_rank]{};
  std::size_t n = 0;
  if (!x.b || !x.b->check(x)) return x;
  a[n++] = x.id;
  for (auto i : idx) if (n < 1 + max_rank) a[n++] = i.id;
  return {x.b, x.b->add(op_kind::index, std::span<const std::int32_t>(a, n), {})};
}
/// `torch.index_put(x, idx, v, accumulate)` (`aten.index_put`): a copy of x with `x[idx...] = v`
/// (`+= v` when `accumulate`, repeated indices summed). Indices: i32 or i64 tensors (checked
/// against x's extents before anything is written), a b8 mask, or ctfx::none for a whole
/// dimension; v broadcasts to the indexed shape. Reinplacing runs it in place (`index_put_`)
/// where it can; the reinplacing report says why where it cannot.
constexpr tensor index_put(tensor x, std::initializer_list<index_arg> idx, tensor v, bool accumulate = false, source_loc at = source_loc::current()) {
  const builder::call_site site(x.b, at);
  return detail::index_put_impl(op_kind::index_put, x, idx, v, accumulate);
}
/// `aten._unsafe_index_put`: index_put as Inductor's decompositions emit it (the same semantics here;
/// indices are still checked).
constexpr tensor unsafe_index_put(tensor x, std::initializer_list<index_arg> idx, tensor v, bool accumulate = false, source_loc at = source_loc::current()) {
  const builder::call_site site(x.b, at);
  return detail::index_put_impl(op_kind::unsafe_index_put, x, idx, v, accumulate);
}
/// `x.index_put_(idx, v, accumulate)`, in place: only in graphs that are already reinplaced (in a
/// user graph, write `g.update(x, ctfx::index_put(x, idx, v))`).
constexpr tensor index_put_(tensor x, std::initializer_list<index_arg> idx, tensor v, bool accumulate = false, source_loc at = source_loc::current()) {
  const builder::call_site site(x.b, at);
  return detail::index_put_impl(op_kind::index_put_, x, idx, v, accumulate);
}

namespace detail {
// dim made non-negative against x's rank (left as given when out of range: the op's rule refuses it).
constexpr sym_expr along_dim_param(tensor x, index_t dim) {
  const index_t r = x.b->g.meta(x.id).rank;
  return sym_expr(dim < 0 && dim >= -r ? dim + r : dim);
}
constexpr tensor scatter_impl(op_kind k, tensor x, index_t dim, tensor idx, tensor src, bool add) {
  if (!x.b->check(x) || !x.b->check(idx) || !x.b->check(src)) return x;
  const sym_expr p[1] = {along_dim_param(x, dim)};
  const std::int32_t a[3] = {x.id, src.id, idx.id};
  return {x.b, x.b->add(k, std::span<const std::int32_t>(a, 3), std::span<const sym_expr>(p, 1), add ? 1 : 0)};
}
}  // namespace detail
/// `torch.gather(x, dim, idx)` (`aten.gather`): out[p] = x[p with p[dim] replaced by idx[p]], of
/// idx's shape. idx: int64, x's rank, no larger than x in the other dimensions; its values must
/// lie in [0, x.size(dim)) (no wrapping, as PyTorch), checked before anything is written.
constexpr tensor gather(tensor x, index_t dim, tensor idx, source_loc at = source_loc::current()) {
  const builder::call_site site(x.b, at);
  if (!x.b || !x.b->check(x) || !x.b->check(idx)) return x;
  const sym_expr p[1] = {detail::along_dim_param(x, dim)};
  const std::int32_t a[2] = {x.id, idx.id};
  return {x.b, x.b->add(op_kind::gather, std::span<const std::int32_t>(a, 2), std::span<const sym_expr>(p, 1))};
}
/// `torch.scatter(x, dim, idx, src)` (`aten.scatter.src`): a copy of x with x[p with p[dim] :=
/// idx[p]] = src[p] for every position p of idx (src may be larger: read at idx's positions).
/// Repeated destinations: the last position in idx's row-major order wins, on every backend
/// (PyTorch leaves it unspecified; its CPU kernel does the same). Indices as gather's.
constexpr tensor scatter(tensor x, index_t dim, tensor idx, tensor src, source_loc at = source_loc::current()) {
  const builder::call_site site(x.b, at);
  return detail::scatter_impl(op_kind::scatter, x, dim, idx, src, false);
}
/// `torch.scatter(x, dim, idx, value)` (`aten.scatter.value`): src is `value` in x's dtype, at
/// every position of idx.
constexpr tensor scatter(tensor x, index_t dim, tensor idx, scalar_value value, source_loc at = source_loc::current()) {
  const builder::call_site site(x.b, at);
  if (!x.b || !x.b->check(x) || !x.b->check(idx)) return x;
  const std::int32_t fill = x.b->add(op_kind::full, std::span<const std::int32_t>{}, {}, static_cast<std::int32_t>(x.b->g.meta(x.id).dt), value);
  const tensor_meta im = x.b->g.meta(idx.id);
  const std::int32_t a[1] = {fill};
  const std::int32_t src = x.b->add(op_kind::expand, std::span<const std::int32_t>(a, 1),
                                    std::span<const sym_expr>(im.size, static_cast<std::size_t>(im.rank < 0 ? 0 : im.rank)));
  return detail::scatter_impl(op_kind::scatter, x, dim, idx, tensor{x.b, src}, false);
}
/// `torch.scatter_add(x, dim, idx, src)` (`aten.scatter_add`; also scatter_reduce with 'sum' and
/// include_self=True): like scatter, adding. Repeated destinations add in idx's row-major order
/// (the order of PyTorch's CPU kernel, so float sums match it bit for bit; f16 and bf16 sums
/// accumulate in f32 and round once, as that kernel's float accumulator does).
constexpr tensor scatter_add(tensor x, index_t dim, tensor idx, tensor src, source_loc at = source_loc::current());
/// `x.scatter_(dim, idx, src)` / `x.scatter_add_(...)` in place: only in graphs already reinplaced
/// (in a user graph, write `g.update(x, ctfx::scatter(...))`).
constexpr tensor scatter_(tensor x, index_t dim, tensor idx, tensor src, bool add = false, source_loc at = source_loc::current()) {
  const builder::call_site site(x.b, at);
  return detail::scatter_impl(op_kind::scatter_, x, dim, idx, src, add);
}

namespace detail {
// scatter_reduce's `reduce` as a scatter node's combine (graph/ir.hpp); mean is a sum (divided
// afterwards), anything else an invalid code that the op's rule refuses.
constexpr std::int32_t scatter_combine_of(std::string_view reduce) {
  return reduce == "sum" || reduce == "mean" ? 1 : reduce == "prod" ? 2 : reduce == "amax" ? 3 : reduce == "amin" ? 4 : scatter_reduce_mask;
}
// scatter_reduce as PyTorch's CPU kernel computes it: one scatter node that combines in index
// order (without include_self every destination first takes the identity). For f16 and bf16, sum,
// prod and mean accumulate in f32 and round once (the kernel's float accumulator), so the node runs
// on f32 copies. mean divides the sum by a count scattered the same way in x's dtype (1 for self
// when included, 0 counts made 1), true division for floats and floor division for integers.
constexpr tensor scatter_reduce_impl(op_kind k, tensor x, index_t dim, tensor idx, tensor src, std::string_view reduce, bool include_self) {
  builder* b = x.b;
  if (!b || !b->check(x) || !b->check(idx) || !b->check(src)) return x;
  const dtype dt = x.dt();
  const std::int32_t code = scatter_combine_of(reduce);
  const bool mean = reduce == "mean";
  const bool widen = (dt == dtype::f16 || dt == dtype::bf16) && src.dt() == dt && (code == 1 || code == 2);
  const sym_expr p[1] = {along_dim_param(x, dim)};
  const tensor xs = widen ? x.to(dtype::f32) : x, ss = widen ? src.to(dtype::f32) : src;
  const std::int32_t a[3] = {xs.id, ss.id, idx.id};
  tensor r{b, b->add(k, std::span<const std::int32_t>(a, 3), std::span<const sym_expr>(p, 1), code | (include_self ? 0 : scatter_without_self))};
  if (widen) r = r.to(dt);
  if (!mean || !b->g.error.ok()) return r;
  // The count, in x's dtype: self's 1 (or 0) plus one per position of idx.
  const tensor one{b, b->add(op_kind::full, std::span<const std::int32_t>{}, {}, static_cast<std::int32_t>(dt), scalar_value::integer(1))};
  const tensor_meta im = b->g.meta(idx.id), xm = b->g.meta(x.id);
  const std::int32_t o[1] = {one.id};
  const tensor ones{b, b->add(op_kind::expand, std::span<const std::int32_t>(o, 1), std::span<const sym_expr>(im.size, static_cast<std::size_t>(im.rank)))};
  const tensor self_count{b, b->add(op_kind::full, std::span<const std::int32_t>{}, {}, static_cast<std::int32_t>(dt), scalar_value::integer(include_self ? 1 : 0))};
  const std::int32_t c[1] = {self_count.id};
  const tensor base{b, b->add(op_kind::expand, std::span<const std::int32_t>(c, 1), std::span<const sym_expr>(xm.size, static_cast<std::size_t>(xm.rank)))};
  tensor count = scatter_reduce_impl(op_kind::scatter, base, dim, idx, ones, "sum", true);
  if (!include_self) count = where(eq(count, 0), one, count);
  return is_floating(dt) ? r / count : floor_divide(r, count);
}
}  // namespace detail
/// `torch.scatter_reduce(x, dim, idx, src, reduce, include_self)` (`aten.scatter_reduce.two`):
/// a copy of x where each position p of idx combines src[p] into x[p with p[dim] := idx[p]], in
/// idx's row-major order. `reduce`: "sum", "prod", "mean", "amax" or "amin"; without
/// `include_self` a destination's own value is left out (it starts from the identity: 0, 1, -inf,
/// +inf, or the integer limits). As PyTorch's CPU kernel: amax / amin propagate NaN, f16 and bf16
/// sums and products accumulate in f32 and round once, mean divides by the count (self included
/// when it is; floor division for integers). Indices as gather's, checked before anything is written.
constexpr tensor scatter_reduce(tensor x, index_t dim, tensor idx, tensor src, std::string_view reduce, bool include_self = true,
                                source_loc at = source_loc::current()) {
  const builder::call_site site(x.b, at);
  return detail::scatter_reduce_impl(op_kind::scatter, x, dim, idx, src, reduce, include_self);
}

constexpr tensor scatter_add(tensor x, index_t dim, tensor idx, tensor src, source_loc at) {
  const builder::call_site site(x.b, at);
  return detail::scatter_reduce_impl(op_kind::scatter, x, dim, idx, src, "sum", true);
}

/// `torch.cat(ts, dim)` (`aten.cat`): the tensors joined along `dim` (equal other extents); the
/// result's dtype is the operands' promoted dtype. The planner computes each operand straight into
/// its slice of the result where it can.
constexpr tensor cat(std::initializer_list<tensor> ts, index_t dim = 0, source_loc at = source_loc::current()) {
  builder* b = ts.begin()->b;
  const builder::call_site site(b, at);
  std::int32_t a[32]{};
  std::size_t n = 0;
  for (auto t : ts) { if (!b->check(t)) return t; if (n < 32) a[n++] = t.id; }
  sym_expr p[1] = {sym_expr(dim)};
  return {b, b->add(op_kind::cat, std::span<const std::int32_t>(a, n), std::span<const sym_expr>(p, 1))};
}

namespace detail {
constexpr tuple_ref foreach_impl(op_kind k, std::initializer_list<tensor> xs, std::initializer_list<tensor> ys, scalar_value s) {
  builder* b = xs.begin()->b;
  std::int32_t a[64]{};
  std::size_t n = 0;
  for (auto t : xs) { if (!b->check(t)) return {b, -1}; if (n < 64) a[n++] = t.id; }
  for (auto t : ys) { if (!b->check(t)) return {b, -1}; if (n < 64) a[n++] = t.id; }
  return {b, b->add(k, std::span<const std::int32_t>(a, n), {}, static_cast<std::int32_t>(xs.size()), s)};
}
}  // namespace detail
/// `torch._foreach_add(xs, ys)` (`aten._foreach_add.List`): `xs[i] + ys[i]` for each i, as a tuple
/// (element i is the i-th sum); any dtypes, per-pair promotion as add's.
constexpr tuple_ref foreach_add(std::initializer_list<tensor> xs, std::initializer_list<tensor> ys,
                            source_loc at = source_loc::current()) {
  const builder::call_site site(xs.begin()->b, at);
  return detail::foreach_impl(op_kind::foreach_add, xs, ys, 0.0);
}
/// `torch._foreach_add(xs, s)` (`aten._foreach_add.Scalar`): `xs[i] + s` for each i, as a tuple;
/// s is converted to each tensor's dtype as add converts it.
constexpr tuple_ref foreach_add(std::initializer_list<tensor> xs, double s, source_loc at = source_loc::current()) {
  const builder::call_site site(xs.begin()->b, at);
  return detail::foreach_impl(op_kind::foreach_add, xs, {}, s);
}
/// `torch._foreach_mul(xs, ys)` (`aten._foreach_mul.List`): `xs[i] * ys[i]` for each i, as a tuple.
constexpr tuple_ref foreach_mul(std::initializer_list<tensor> xs, std::initializer_list<tensor> ys,
                            source_loc at = source_loc::current()) {
  const builder::call_site site(xs.begin()->b, at);
  return detail::foreach_impl(op_kind::foreach_mul, xs, ys, 0.0);
}
/// `torch._foreach_mul(xs, s)` (`aten._foreach_mul.Scalar`): `xs[i] * s` for each i, as a tuple
/// (s at full precision, as mul's).
constexpr tuple_ref foreach_mul(std::initializer_list<tensor> xs, double s, source_loc at = source_loc::current()) {
  const builder::call_site site(xs.begin()->b, at);
  return detail::foreach_impl(op_kind::foreach_mul, xs, {}, s);
}

/// `_c10d_functional.all_reduce`: `op` over the ranks of the run's communicator of x.
constexpr tensor all_reduce(tensor x, reduce_op op = reduce_op::sum, source_loc at = source_loc::current()) {
  const builder::call_site site(x.b, at);
  if (!x.b) return x;
  return x.b->make(op_kind::all_reduce, {x}, {}, static_cast<std::int32_t>(op));
}
/// `_c10d_functional.broadcast`: rank `src`'s x, on every rank.
constexpr tensor broadcast(tensor x, int src, source_loc at = source_loc::current()) {
  const builder::call_site site(x.b, at);
  if (!x.b) return x;
  return x.b->make(op_kind::broadcast, {x}, {}, src);
}
/// `_c10d_functional.all_gather_into_tensor`: the x of the `group_size` ranks, stacked along dimension 0.
constexpr tensor all_gather(tensor x, index_t group_size, source_loc at = source_loc::current()) {
  const builder::call_site site(x.b, at);
  if (!x.b) return x;
  return x.b->make(op_kind::all_gather, {x}, {sym_expr(group_size)});
}
/// `_c10d_functional.reduce_scatter_tensor`: block `rank` (along dimension 0) of `op` over the ranks of x.
constexpr tensor reduce_scatter(tensor x, index_t group_size, reduce_op op = reduce_op::sum,
                                source_loc at = source_loc::current()) {
  const builder::call_site site(x.b, at);
  if (!x.b) return x;
  return x.b->make(op_kind::reduce_scatter, {x}, {sym_expr(group_size)}, static_cast<std::int32_t>(op));
}
/// The gather inside one buffer x [group_size * n, ...]: block r of the result is rank r's block r of
/// x (each rank fills its own block; written back with `update`, it runs in place: MPI_IN_PLACE).
constexpr tensor all_gather_blocks(tensor x, index_t group_size, source_loc at = source_loc::current()) {
  const builder::call_site site(x.b, at);
  if (!x.b) return x;
  return x.b->make(op_kind::all_gather_blocks, {x}, {sym_expr(group_size)});
}
/// The reduce-scatter inside one buffer x [group_size * n, ...]: x, with block `rank` replaced by `op`
/// over the ranks of their block `rank` (the other blocks as they were; written back with `update`,
/// it runs in place: each block reduced into its owner's buffer).
constexpr tensor reduce_scatter_blocks(tensor x, index_t group_size, reduce_op op = reduce_op::sum,
                                       source_loc at = source_loc::current()) {
  const builder::call_site site(x.b, at);
  if (!x.b) return x;
  return x.b->make(op_kind::reduce_scatter_blocks, {x}, {sym_expr(group_size)}, static_cast<std::int32_t>(op));
}
/// The halo exchange of a 2-D grid split over `grid.px * grid.py` ranks: x is this rank's block with
/// `halo` ghost rows and columns; the result has the neighbours' edge cells in its ghosts (corners
/// included; ghosts past a non-periodic edge keep their values). Written back with `update`, it
/// runs in place in the caller's grid.
constexpr tensor halo_exchange(tensor x, index_t halo, halo_grid grid, source_loc at = source_loc::current()) {
  const builder::call_site site(x.b, at);
  if (!x.b) return x;
  return x.b->make(op_kind::halo_exchange, {x}, {sym_expr(halo), sym_expr(grid.px), sym_expr(grid.py)},
                   (grid.periodic_x ? 1 : 0) | (grid.periodic_y ? 2 : 0));
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
#include "builder_products.hpp"  // (and builder_attention.hpp, which composes the products)
