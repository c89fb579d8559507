// ctfx/ops/custom.hpp — user ops declared from user code with a PyTorch-style signature.
//
//   struct my_sin : ctfx::custom_op<"my_sin", "my_sin(Tensor x, Tensor(a!) result) -> ()"> {
//     // the kernel, registered with `kernel_table::add<my_sin>()` (exec/kernel_table.hpp): c.args
//     // are the tensor arguments in schema order (a mutated one points at the memory to write),
//     // c.results the fresh results, c.ctx the backend and stream
//     static void run(const ctfx::custom_call& c);
//   };
//
// A user op's fresh results are row-major unless the op type declares their layout (its fake
// implementation's choice), as it declares host_sync:
//
//   struct my_t : ctfx::custom_op<"my_t", "my_t(Tensor x) -> Tensor"> {
//     static constexpr ctfx::fresh_layout layout = ctfx::fresh_layout::permuted({1, 0});  // column-major
//   };
//
// (or fresh_layout::like(k): torch.empty_like(args[k]); fresh_layout::strides({...}) for static
// extents). The call node checks it (rule user-result-layout); both executors allocate each result
// in it and hand it to the kernel in c.results with those strides. An imported graph's printed
// strides for a result take precedence (they are the fake implementation's choice itself).
//
// In a functional graph a mutating user op is called through its functional form
// (`auto_functionalized`): the node returns the op's results followed by the new value of each
// mutated argument, and nothing is mutated. The reinplacing pass decides, argument by argument,
// which of those may be written in place and which must still be cloned (clone_mask).
// A user kernel (`ctfx::user_kernel<...>`) is the analog of Inductor's
// triton_kernel_wrapper_functional with `tensors_to_clone`.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <string_view>
#include "meta_util.hpp"
#include "basic.hpp"

namespace ctfx {

namespace detail {
// Parses "name(Tensor a, Tensor(a!) b, int k) -> (Tensor, Tensor)" into a custom_schema: the
// tensor arguments in order, which of them are annotated mutable, and the number of results.
constexpr custom_schema parse_custom_signature(std::string_view name, std::string_view sig, bool kernel) {
  custom_schema s{};
  s.name = name_t(name);
  s.user_kernel = kernel;
  std::size_t open = sig.find('('), close = sig.find(") ->");
  std::string_view params = open != std::string_view::npos && close != std::string_view::npos
                                ? sig.substr(open + 1, close - open - 1) : std::string_view{};
  std::size_t i = 0;
  while (i < params.size()) {
    std::size_t j = params.find(',', i);
    if (j == std::string_view::npos) j = params.size();
    std::string_view a = params.substr(i, j - i);
    while (!a.empty() && a.front() == ' ') a.remove_prefix(1);
    if (a.substr(0, 6) == "Tensor") {
      if (a.find('!') != std::string_view::npos) s.mutates |= 1u << s.n_args;
      ++s.n_args;
    }
    i = j + 1;
  }
  std::string_view ret = close != std::string_view::npos ? sig.substr(close + 4) : std::string_view{};
  for (std::size_t k = 0; k + 6 <= ret.size(); ++k)
    if (ret.substr(k, 6) == "Tensor") ++s.n_returns;
  return s;
}
}  // namespace detail

namespace detail {
// A user op type may declare `static constexpr bool host_sync = true;` (it waits for the host,
// e.g. reads a value back): the graph is partitioned after it.
template <class Op>
constexpr bool declares_host_sync() {
  if constexpr (requires { Op::host_sync; }) return Op::host_sync;
  else return false;
}
// A user op type may declare `static constexpr ctfx::fresh_layout layout = ...;`: how its fresh
// results are laid out (row-major when it declares none).
template <class Op>
constexpr fresh_layout declared_fresh_layout() {
  if constexpr (requires { Op::layout; }) return fresh_layout(Op::layout);
  else return fresh_layout{};
}
// The schema of user op type Op with what the type declares besides its signature.
template <class Op>
constexpr custom_schema schema_of() {
  custom_schema s = Op::schema();
  s.host_sync = declares_host_sync<Op>();
  s.layout = declared_fresh_layout<Op>();
  return s;
}
}  // namespace detail

/// The base of a user op type: `struct my_op : ctfx::custom_op<"my_op", "my_op(Tensor x, Tensor(a!) out) -> ()"> { static void run(const ctfx::custom_call&); };`. ReturnsLike: the argument whose shape fresh results take.
template <fixed_string Name, fixed_string Sig, int ReturnsLike = 0>
struct custom_op {
  static constexpr std::string_view name = Name.view();  ///< the op's name
  static constexpr std::string_view signature = Sig.view();  ///< its PyTorch signature
  /// The schema parsed from the signature.
  static constexpr custom_schema schema() {
    auto s = detail::parse_custom_signature(Name.view(), Sig.view(), false);
    s.returns_like = ReturnsLike;
    return s;
  }
};

/// The base of a user kernel type (Inductor's triton_kernel_wrapper_functional): as custom_op, and the mutated arguments it must still clone are decided per argument.
template <fixed_string Name, fixed_string Sig, int ReturnsLike = 0>
struct user_kernel {
  static constexpr std::string_view name = Name.view();  ///< the kernel's name
  static constexpr std::string_view signature = Sig.view();  ///< its PyTorch signature
  /// The schema parsed from the signature.
  static constexpr custom_schema schema() {
    auto s = detail::parse_custom_signature(Name.view(), Sig.view(), true);
    s.returns_like = ReturnsLike;
    return s;
  }
};

namespace detail {

constexpr int mutated_count(const custom_schema& s) {
  int n = 0;
  for (int i = 0; i < s.n_args; ++i) n += (s.mutates >> i) & 1u;
  return n;
}
// The argument position of the k-th mutated argument.
constexpr int kth_mutated(const custom_schema& s, int k) {
  for (int i = 0; i < s.n_args; ++i)
    if ((s.mutates >> i) & 1u) { if (k == 0) return i; --k; }
  return -1;
}

// Whether a static layout places no two elements at one address (and has no negative stride): the
// dimensions longer than 1, by stride, each step past the span of those inside it.
constexpr bool non_overlapping(const int_layout& x) {
  int perm[max_rank]{};
  int k = 0;
  bool ok = true;
  for (int d = 0; d < x.rank; ++d) {
    ok = ok && x.stride[d] >= 0;
    if (x.size[d] > 1) perm[k++] = d;
  }
  for (int a = 1; a < k; ++a)
    for (int b = a; b > 0 && x.stride[perm[b]] < x.stride[perm[b - 1]]; --b) { const int t = perm[b]; perm[b] = perm[b - 1]; perm[b - 1] = t; }
  index_t span = 1;
  for (int a = 0; ok && a < k; ++a) {
    ok = x.stride[perm[a]] >= span;
    span = x.stride[perm[a]] * (x.size[perm[a]] - 1) + span;
  }
  return ok;
}

// The layout of the fresh results of user op call `call` (schema s), as the op type declares it
// (fresh_layout): into out, which holds the results' extents and dtype (row-major). False, with
// the reason in `why` when given, when the declaration is not a layout of them.
constexpr bool fresh_result_layout(const ir& g, std::int32_t call, const custom_schema& s, tensor_meta& out, msg* why = nullptr) {
  const fresh_layout& f = s.layout;
  auto bad = [&](auto... parts) {
    if (why) ((*why << parts), ...);
    return false;
  };
  switch (f.how) {
    case fresh_layout::kind::row_major: return true;
    case fresh_layout::kind::like: {
      if (f.arg < 0 || f.arg >= s.n_args || f.arg >= g[call].nargs)
        return bad("declares its results like argument ", f.arg, ", which it does not have (", s.n_args, " tensor arguments)");
      const tensor_meta& x = g.meta(g.arg(call, f.arg));
      bool same = x.rank == out.rank;
      for (int d = 0; same && d < out.rank; ++d) same = x.size[d] == out.size[d];
      if (!same) {
        if (why) { *why << "declares its results like argument " << f.arg << " "; put_type(*why, g, x); *why << ", whose extents are not theirs "; put_type(*why, g, out); }
        return false;
      }
      tensor_meta r;
      if (!preserve_format_layout(&g, x, out.dt, r)) return bad("declares its results like argument ", f.arg, ", whose stride order depends on sizes the graph leaves open");
      r.storage = out.storage;
      out = r;
      return true;
    }
    case fresh_layout::kind::permuted: {
      bool seen[max_rank]{};
      bool ok = f.rank == out.rank;
      int perm[max_rank]{};
      for (int k = 0; ok && k < f.rank; ++k) {
        const index_t d = f.v[k];
        ok = d >= 0 && d < out.rank && !seen[d];
        if (ok) { seen[d] = true; perm[k] = static_cast<int>(d); }
      }
      if (!ok) {
        if (why) {
          *why << "declares its results permuted (";
          for (int k = 0; k < f.rank && k < max_rank; ++k) { if (k) *why << ", "; *why << static_cast<long long>(f.v[k]); }
          *why << "), which is not a permutation of the " << out.rank << " dimensions of ";
          put_type(*why, g, out);
        }
        return false;
      }
      dense_in_order(out, perm);
      return true;
    }
    case fresh_layout::kind::strides: {
      if (f.rank != out.rank) return bad("declares ", f.rank, " strides for results of rank ", out.rank);
      tensor_meta r = out;
      for (int d = 0; d < r.rank; ++d) r.stride[d] = sym_expr(f.v[d]);
      if (!static_layout(r)) {
        if (why) { *why << "declares strides for results of symbolic extents "; put_type(*why, g, out); }
        return false;
      }
      if (!non_overlapping(int_of(r))) {
        if (why) { *why << "declares strides that place two elements of its results at one address (or are negative): "; put_type(*why, g, r); *why << " with strides ("; for (int d = 0; d < r.rank; ++d) { if (d) *why << ", "; *why << static_cast<long long>(f.v[d]); } *why << ")"; }
        return false;
      }
      out = r;
      return true;
    }
  }
  return true;
}

constexpr bool custom_meta(ir& g, std::int32_t id, tensor_meta& out) {
  const node& n = g[id];
  const custom_schema& s = g.customs[static_cast<std::size_t>(n.aux)];
  if (n.nargs != s.n_args) {
    auto m = about(g, id); m << "'" << s.name.view() << "' takes " << s.n_args << " tensor arguments, got " << n.nargs;
    fail(g, id, rule::custom_schema, m); return false;
  }
  // The results' declared layout (fresh_layout), checked once, at the call.
  if (s.n_returns > 0 && s.layout.how != fresh_layout::kind::row_major && s.returns_like >= 0 && s.returns_like < n.nargs) {
    const tensor_meta& like = g.meta(g.arg(id, s.returns_like));
    tensor_meta r = contiguous_like(like, like.dt);
    auto m = about(g, id);
    m << "'" << s.name.view() << "' ";
    if (!fresh_result_layout(g, id, s, r, &m)) { fail(g, id, rule::result_layout, m); return false; }
  }
  out = tensor_meta{};
  out.storage = -1;  // a tuple, read with getitem
  return true;
}

// A user op's fresh result `out` (its shape) laid out in the declared strides: one per dimension,
// non-negative, and no two elements at one address (checked when the extents and strides are
// numbers: a symbolic layout is taken as declared).
constexpr bool declared_result_layout(ir& g, std::int32_t id, std::span<const sym_expr> strides, tensor_meta& out) {
  if (strides.size() != static_cast<std::size_t>(out.rank)) {
    auto m = about(g, id); m << "declares " << static_cast<int>(strides.size()) << " strides for a result of rank " << out.rank
                              << "; fix: one stride per dimension of the user op's result";
    fail(g, id, rule::bad_argument, m); return false;
  }
  tensor_meta r = out;
  for (int d = 0; d < r.rank; ++d) r.stride[d] = strides[static_cast<std::size_t>(d)];
  if (static_layout(r)) {
    if (!non_overlapping(int_of(r))) {
      auto m = about(g, id); m << "the declared strides of the user op's result place two elements at one address (or are negative): ";
      put_type(m, g, r);
      m << "; fix: declare a non-overlapping layout (the strides its fake implementation gives)";
      fail(g, id, rule::bad_argument, m); return false;
    }
  }
  out = r;
  return true;
}

// getitem of a tuple-valued node: element i of a list op, or result/updated argument of a user op.
constexpr bool getitem_meta(ir& g, std::int32_t id, tensor_meta& out) {
  std::int32_t t = g.arg(id, 0);
  std::int32_t i = g[id].aux;
  const node& p = g[t];
  auto bad = [&] {
    auto m = about(g, id); m << "index " << i << " is out of range for '" << p.name.view() << "'";
    fail(g, id, rule::bad_argument, m);
    return false;
  };
  if (is_list_op(p.op)) {
    if (i < 0 || i >= p.aux) return bad();
    const tensor_meta& a = g.meta(g.arg(t, i));
    if (is_mutating(p.op)) { out = a; return true; }
    // Element i is the op on element i of each list (ATen's foreach_tensor_*_kernel_slow, which the
    // meta device runs: self[i].add(other[i]) or self[i].mul(scalar)), so it takes the elementwise
    // result's strides from both operands, not empty_like(self[i])'s.
    const bool list_b = p.nargs == 2 * p.aux;
    const tensor_meta* ops[2] = {&a, list_b ? &g.meta(g.arg(t, p.aux + i)) : nullptr};
    return elementwise_result(g, id, a, a.dt, ops, list_b ? 2 : 1, out);
  }
  if (p.op == op_kind::custom || p.op == op_kind::auto_functionalized) {
    const custom_schema& s = g.customs[static_cast<std::size_t>(p.aux)];
    if (i < 0 || i >= s.n_returns + mutated_count(s)) return bad();
    if (i < s.n_returns) {
      const tensor_meta& like = g.meta(g.arg(t, s.returns_like));
      out = contiguous_like(like, like.dt);
      // The op's own (fake) implementation lays its result out, which ctfx cannot see: the strides
      // the graph declares for it (an imported graph's printed ones, as the getitem's params) are
      // taken as they are, else the layout the op type declares (fresh_layout, checked at the
      // call), else the result is row-major.
      const node& n = g[id];
      if (n.npar == 0) {
        tensor_meta r = out;
        if (fresh_result_layout(g, t, s, r)) out = r;
        return true;
      }
      return declared_result_layout(g, id, std::span<const sym_expr>(g.params.data() + n.par0, static_cast<std::size_t>(n.npar)), out);
    }
    const int arg = kth_mutated(s, i - s.n_returns);
    const tensor_meta& a = g.meta(g.arg(t, arg));
    // A direct call writes the argument itself, unless reinplacing left it cloned (clone_mask); the
    // clone keeps the argument's strides and offset (auto_functionalized's clone_preserve_strides).
    out = p.op == op_kind::custom && !((p.clone_mask >> arg) & 1u) ? a : preserve_strides_result(a);
    return true;
  }
  auto m = about(g, id); m << "'" << p.name.view() << "' is not a tuple";
  fail(g, id, rule::bad_argument, m);
  return false;
}

}  // namespace detail
}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
