// ctfx/kernels/fused_static.hpp — a fused group of a compile-time plan as a type: each node of the
// group is an expression type (its op and dtypes are template constants), so the group's inner
// loop is one expression over typed pointers that the compiler inlines and vectorizes — the loop a
// user would write by hand. Only the layouts stay run-time values (symbolic extents); the loop nest
// is kernels::make_nest's (collapsed dimensions, one division per row, never per element).
//
// `GV` describes the compile-time graph: nodes(), args(), root_of(i) (plan/fusion.hpp's grouping)
// and members(r) (how many nodes are fused into r).
//
// Values are carried in the compute type of their dtype and rounded to that dtype after every op
// (`round_to`), exactly as the unfused kernels store and reload them, so results are bit-identical.
//
// The expression types (leaf_x, op_x) take integers and enums only — scalars as their bits — never
// the graph's type: a CUDA kernel's type may not involve the closure type of the user's graph
// lambda (nvcc cannot name it in the kernel's host stub), and these types are the kernel's.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <array>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>
#include "../core/isa.hpp"
#include "fused.hpp"
#include "fused_reduce.hpp"

namespace ctfx::kernels {

// A value of compute type C rounded to dtype D, as storing it and loading it back would.
template <dtype D, class C>
CTFX_INLINE CTFX_HD compute_t<D> round_to(C v) {
  element_t<D> e;
  store_as<D, C>(&e, v);
  return load_as<D, compute_t<D>>(&e);
}

struct leaf_ptrs {
  const std::byte* p[max_fused_leaves];
  index_t st[max_fused_leaves];
};

// Where a group's loops start in one run: its destination's first element and each operand's. The
// rest (extents and strides, collapsed) is the group's nest; the element sizes are the group's types.
struct group_ptrs {
  std::byte* out;
  const std::byte* leaf[max_fused_leaves];
};

// Whether GV's layouts are the compiler's (a static plan: GV::shape(id) is node id's view without
// its data, every run's strides and extents), so that a group's loop nest is made in the compiler.
template <class GV>
inline constexpr bool static_layouts_of = false;
template <class GV>
  requires requires { GV::static_layouts; }
inline constexpr bool static_layouts_of<GV> = GV::static_layouts;

// How a group's inner loop indexes its operands: with Unit, operand l at stride 1, or at stride 0
// (one value for the whole loop: a value broadcast along the row, as softmax's row maximum) when
// bit l of Zero is set; without Unit, each at its run-time stride st[l]. Strides that are constants
// keep the loop vectorizable.
template <bool Unit, std::uint32_t Zero = 0>
struct access {
  static constexpr bool unit = Unit;
  static constexpr std::uint32_t zero = Zero;
};
using unit_access = access<true>;
using strided_access = access<false>;

// Operand l of the group, of dtype S, loaded at element i.
template <int L, dtype S>
struct leaf_x {
  template <class C, class Ix>
  CTFX_INLINE CTFX_HD static C get(const leaf_ptrs& p, index_t i) {
    const auto* q = reinterpret_cast<const element_t<S>*>(p.p[L]);
    if constexpr (Ix::unit && ((Ix::zero >> L) & 1u) != 0) return load_as<S, C>(q);
    else return load_as<S, C>(q + (Ix::unit ? i : i * p.st[L]));
  }
};

// A node of the group: op K with result dtype O, its operands' expressions A... (a conversion's
// source alone), P the dtype a bool-result op tests its operands in, and a scalar operand's bits.
template <op_kind K, dtype O, dtype P, std::uint64_t ScalarBits, bool ScalarInt, class... A>
struct op_x {
  using V = compute_t<O>;
  static constexpr dtype result = O;
  // The scalar operand, exact: an int's bits as int64, a float's as double (core/scalar.hpp).
  static constexpr scalar_value scalar = ScalarInt ? scalar_value::integer(__builtin_bit_cast(std::int64_t, ScalarBits))
                                                   : scalar_value(__builtin_bit_cast(double, ScalarBits));
  template <std::size_t k>
  using operand = std::tuple_element_t<k, std::tuple<A...>>;
  // Always inlined: at -O2 g++ left an `exp` node's eval out of line, a call per element in a
  // scalar loop (softmax 7.8 ms against 1.1 at -O3, -march=native).
  template <class C, class Ix>
  CTFX_INLINE CTFX_HD static C get(const leaf_ptrs& p, index_t i) { return static_cast<C>(eval<Ix>(p, i)); }
  template <class Ix>
  CTFX_INLINE CTFX_HD static V eval(const leaf_ptrs& p, index_t i) {
    if constexpr (K == op_kind::copy_ || K == op_kind::clone || K == op_kind::convert) {
      // as kernels::copy: through double, or int64 between integers
      using C2 = std::conditional_t<(is_floating(P) || is_floating(O)), double, std::int64_t>;
      return round_to<O, C2>(operand<0>::template get<C2, Ix>(p, i));
    } else if constexpr (K == op_kind::where) {
      // Both branches computed, then selected on the bits (as the unfused graph computes both
      // tensors; every element op is total): no branch per element, a loop that vectorizes.
      const bool c = operand<0>::template get<std::int64_t, Ix>(p, i) != 0;
      return round_to<O, V>(select_bits(c, operand<1>::template get<V, Ix>(p, i), operand<2>::template get<V, Ix>(p, i)));
    } else if constexpr (K == op_kind::fma) {  // a * b + c rounded once, each operand in the compute type
      return round_to<O, V>(fma_value<V>(operand<0>::template get<V, Ix>(p, i), operand<1>::template get<V, Ix>(p, i),
                                         operand<2>::template get<V, Ix>(p, i)));
    } else if constexpr (yields_bool(K)) {  // tested in the operands' promoted type P, stored as bool
      using C = compute_t<P>;
      const C x = operand<0>::template get<C, Ix>(p, i);
      if constexpr (is_unary(K)) {
        return round_to<O, C>(unary_value<C>(K, x));
      } else if constexpr (sizeof...(A) > 1) {
        return round_to<O, C>(binary_value<C>(K, x, operand<1>::template get<C, Ix>(p, i)));
      } else {
        return round_to<O, C>(binary_value<C>(K, x, scalar_operand<P, C>(K, scalar)));
      }
    } else if constexpr (is_unary(K)) {
      return round_to<O, V>(unary_value<V>(K, operand<0>::template get<V, Ix>(p, i)));
    } else {
      static_assert(is_binary(K), "ctfx: a fused group holds elementwise ops only");
      const V x = operand<0>::template get<V, Ix>(p, i);
      if constexpr (sizeof...(A) > 1) return round_to<O, V>(binary_value<V>(K, x, operand<1>::template get<V, Ix>(p, i)));
      else return round_to<O, V>(scalar_binary_value<V>(K, x, scalar.template as<V>()));
    }
  }
};

// A group's rows on CUDA (kernels/rows.hpp); Root is its expression, OutDt what it stores, LeafDt
// its operands' dtypes. A thread finds its row's offsets once per segment, then takes its vectors of
// `width` elements where the row allows it (the destination and every operand at unit stride and
// aligned for the vector, or broadcast along the row): each operand's values loaded at once (up to
// 16 bytes), computed by the same expression element after element, so the bits are the host's,
// and stored at once. Other rows, and the elements past the last whole vector, one element at a
// time at their strides.
template <class Root, dtype OutDt, dtype... LeafDt>
struct static_row_fn {
  static constexpr int Leaves = static_cast<int>(sizeof...(LeafDt));
  // The bytes of the widest element, and the elements of one vector step: 16 bytes of it, at most 8.
  static constexpr index_t widest = [] {
    index_t w = size_of(OutDt);
    ((w = size_of(LeafDt) > w ? size_of(LeafDt) : w), ...);
    return w;
  }();
  static constexpr int width = 16 / widest < 8 ? static_cast<int>(16 / widest) : 8;
  template <int L>
  static constexpr index_t leaf_size = size_of(std::get<L>(std::array<dtype, sizeof...(LeafDt)>{LeafDt...}));
  static constexpr index_t out_size = size_of(OutDt);

  fused_nest nest;
  const std::byte* leaf[max_fused_leaves];
  std::byte* out;

  // The elements [j0, j1) of row r that lane `lane` of `lanes` computes: whole vectors lane,
  // lane + lanes, ... where the row runs in vectors, then the elements left one by one.
  CTFX_HD void operator()(index_t r, index_t j0, index_t j1, int lane, int lanes) const {
    element_t<OutDt>* d;
    leaf_ptrs p;
    const bool vectors = row_at(r, d, p);
    const index_t ds = nest.istride[0];
    index_t t = j0;  // where the element-by-element loop starts
    if (vectors) {
      const index_t whole = (j1 - j0) / width;
      for (index_t v = lane; v < whole; v += lanes) {
        const index_t j = j0 + v * width;
        vector_step(p, d + j, j, std::make_integer_sequence<int, Leaves>{});
      }
      t = j0 + whole * width;
    }
    for (index_t j = t + lane; j < j1; j += lanes) store_as<OutDt, typename Root::V>(d + j * ds, Root::template eval<strided_access>(p, j));
  }

  // Whether row r runs in vectors.
  CTFX_HD bool vector_row(index_t r) const {
    element_t<OutDt>* d;
    leaf_ptrs p;
    return row_at(r, d, p);
  }

 private:
  // Row r's destination and operands (their starts and inner strides), and whether it runs in
  // vectors: the destination at unit stride and every operand broadcast along the row or at unit
  // stride, each aligned for its vector.
  CTFX_HD bool row_at(index_t r, element_t<OutDt>*& d, leaf_ptrs& p) const {
    index_t off[max_fused_leaves + 1];
    row_start_offsets(nest, Leaves + 1, r, off);
    row_operands(p, off, std::make_integer_sequence<int, Leaves>{});
    d = reinterpret_cast<element_t<OutDt>*>(out) + off[0];
    return nest.istride[0] == 1 && aligned_to(d, width * out_size) && vectors_fit(p, std::make_integer_sequence<int, Leaves>{});
  }
  template <int... L>
  CTFX_INLINE CTFX_HD void row_operands(leaf_ptrs& p, const index_t* off, std::integer_sequence<int, L...>) const {
    ((p.p[L] = leaf[L] + off[L + 1] * leaf_size<L>, p.st[L] = nest.istride[L + 1]), ...);
  }
  template <int... L>
  CTFX_INLINE CTFX_HD static bool vectors_fit(const leaf_ptrs& p, std::integer_sequence<int, L...>) {
    return ((p.st[L] == 0 || (p.st[L] == 1 && aligned_to(p.p[L], width * leaf_size<L>))) && ...);
  }
  // Operand L's `width` values from element j into `into` (one value repeated where broadcast).
  template <int L>
  CTFX_INLINE CTFX_HD static void load_operand(const leaf_ptrs& p, index_t j, std::byte* into) {
    if (p.st[L] == 0) {
      for (int k = 0; k < width; ++k) std::memcpy(into + k * leaf_size<L>, p.p[L], static_cast<std::size_t>(leaf_size<L>));
    } else {
      move_vector<static_cast<int>(width * leaf_size<L>)>(into, p.p[L] + j * leaf_size<L>);
    }
  }
  // Elements [j, j + width) of the row, stored at d: the operands' vectors loaded, the values
  // computed from them, the result stored as one vector.
  template <int... L>
  CTFX_INLINE CTFX_HD static void vector_step(const leaf_ptrs& p, element_t<OutDt>* d, index_t j, std::integer_sequence<int, L...>) {
    alignas(16) std::byte values[Leaves > 0 ? Leaves : 1][16];
    leaf_ptrs q;
    ((load_operand<L>(p, j, values[L]), q.p[L] = values[L], q.st[L] = 1), ...);
    alignas(16) element_t<OutDt> result[width];
    for (int k = 0; k < width; ++k) store_as<OutDt, typename Root::V>(result + k, Root::template eval<unit_access>(q, k));
    move_vector<static_cast<int>(width * out_size)>(d, result);
  }
};

// A fused reduction's fold, for CUDA (warp_fold.hpp): the output's n values evaluated one by one
// (each rounded to the input's dtype S, as storing it would), by its warp or, for short folds, its
// thread, and folded in reduce.hpp's order.
template <class Root, dtype S, dtype O, int Leaves>
struct static_fold_fn {
  using C = compute_t<O>;
  fused_nest nest;
  const std::byte* leaf[max_fused_leaves];
  index_t leaf_bytes[max_fused_leaves];
  strided out;
  fold_spec spec;
  index_t n;
  CTFX_HD fold_start source(index_t o) const { return fold_start_of(nest, Leaves + 1, o * n, n); }
  CTFX_HD C value(const fold_start& s, index_t r) const {
    index_t off[max_fused_leaves + 1];
    fold_value_offsets(nest, Leaves + 1, s, r, off);
    leaf_ptrs p;
    for (int l = 0; l < Leaves; ++l) {
      p.p[l] = leaf[l] + off[l + 1] * leaf_bytes[l];
      p.st[l] = 0;
    }
    element_t<S> e;
    store_as<S, typename Root::V>(&e, Root::template eval<unit_access>(p, 0));
    return load_as<S, C>(&e);
  }
  CTFX_HD void store(index_t o, C v) const { store_fold<O>(out, o, v, spec.divisor); }
  CTFX_HD void operator()(index_t o) const { fold_in_thread<C>(*this, o, n, spec.fold); }
};

template <class GV, std::int32_t R>
struct static_group {
  static constexpr const node& at(std::int32_t i) { return GV::nodes()[static_cast<std::size_t>(i)]; }
  static constexpr std::int32_t arg(std::int32_t i, int k) { return GV::args()[static_cast<std::size_t>(at(i).arg0 + k)]; }
  static constexpr bool inside(std::int32_t i) { return i == R || GV::root_of(i) == R; }
  static constexpr bool writes_arg0(op_kind k) { return k == op_kind::copy_ || is_mutating(k); }

  // The node the group writes: the destination of a copy_ or in-place root, else the root itself.
  static constexpr std::int32_t dst = writes_arg0(at(R).op) ? arg(R, 0) : R;
  // A reduction root folds the values of its input, the group's last member (fused_reduce.hpp).
  static constexpr bool folds = is_reduction(at(R).op);
  // The node whose extents the group's loop runs over: the reduction's input, or the destination.
  static constexpr std::int32_t domain = folds ? arg(R, 0) : dst;

  struct leaf_set {
    int n = 0;
    std::int32_t id[max_fused_leaves]{};
  };
  // The group's leaves (what it reads): the members' arguments outside the group. Members sit just
  // before the root in program order, so the walk back stops after the last one.
  static constexpr leaf_set leaves = [] {
    leaf_set L;
    auto visit = [&](std::int32_t x) {
      const int first = at(x).op == op_kind::copy_ ? 1 : 0;  // copy_ writes its destination, never reads it
      for (int k = first; k < at(x).nargs; ++k) {
        const std::int32_t a = arg(x, k);
        if (a < 0 || (inside(a) && a != R)) continue;
        bool seen = false;
        for (int j = 0; j < L.n; ++j) seen = seen || L.id[j] == a;
        if (!seen) L.id[L.n++] = a;
      }
    };
    int left = GV::members(R);
    for (std::int32_t i = R - 1; i >= 0 && left > 0; --i)
      if (GV::root_of(i) == R) { visit(i); --left; }
    visit(R);
    return L;
  }();
  static_assert(leaves.n <= max_fused_leaves, "ctfx: a fused group reads more tensors than plan/fusion.hpp allows");

  // Operand l's element size.
  static constexpr index_t leaf_bytes(int l) { return size_of(at(leaves.id[l]).meta.dt); }

  static constexpr int leaf_index(std::int32_t a) {
    for (int j = 0; j < leaves.n; ++j)
      if (leaves.id[j] == a) return j;
    return -1;
  }

  // The expression type of node I (a member, or R itself) and of each of its operands.
  template <std::int32_t I>
  struct node_expr;
  template <std::int32_t A>
  static constexpr auto operand_expr() {
    if constexpr (inside(A) && A != R) return std::type_identity<typename node_expr<A>::type>{};
    else return std::type_identity<leaf_x<leaf_index(A), at(A).meta.dt>>{};
  }
  template <std::int32_t I>
  struct node_expr {
    static constexpr op_kind K = at(I).op;
    static constexpr bool conversion = K == op_kind::copy_ || K == op_kind::clone || K == op_kind::convert;
    static constexpr dtype O = writes_arg0(K) ? at(arg(I, 0)).meta.dt : at(I).meta.dt;
    // The operands read: a conversion's source alone (copy_ writes its destination, never reads it).
    static constexpr int first = K == op_kind::copy_ ? 1 : 0;
    static constexpr int count = conversion ? 1 : at(I).nargs;
    // Conversions: the source's dtype; bool-result ops: the dtype they test in (ops/elementwise.hpp's operand_dtype).
    static constexpr dtype P = [] {
      if constexpr (conversion) return at(arg(I, first)).meta.dt;
      else if constexpr (K == op_kind::logical_not) return at(arg(I, 0)).meta.dt;
      else if constexpr (!yields_bool(K)) return O;
      else if constexpr (at(I).nargs > 1) return result_type(at(arg(I, 0)).meta.dt, at(arg(I, 0)).meta.rank > 0,
                                                             at(arg(I, 1)).meta.dt, at(arg(I, 1)).meta.rank > 0);
      else return promote_scalar(at(arg(I, 0)).meta.dt, at(I).aux == 2);
    }();
    template <std::size_t... k>
    static auto make(std::index_sequence<k...>)
        -> op_x<K, O, P,
                at(I).scalar.exact_int() ? __builtin_bit_cast(std::uint64_t, at(I).scalar.i) : __builtin_bit_cast(std::uint64_t, at(I).scalar.d),
                at(I).scalar.exact_int(),
                typename decltype(operand_expr<arg(I, first + static_cast<int>(k))>())::type...>;
    using type = decltype(make(std::make_index_sequence<count>{}));
  };

  using root = typename node_expr<domain == dst ? R : domain>::type;
  static constexpr dtype out_dt = at(domain).meta.dt;  // what the loop computes (a reduction's input)
  static_assert(out_dt == root::result, "ctfx: a fused group's last op computes its destination's dtype");
  // The group's row functor on CUDA, typed on its operands' dtypes.
  template <std::size_t... l>
  static auto row_fn_type(std::index_sequence<l...>) -> std::type_identity<static_row_fn<root, out_dt, at(leaves.id[l]).meta.dt...>>;

  // The result's last extent when the compiler knows it, else 0.
  static constexpr index_t last_extent = [] {
    const tensor_meta& o = at(domain).meta;
    return o.rank > 0 && o.size[o.rank - 1].is_static() ? o.size[o.rank - 1].value() : index_t{0};
  }();

  // The operands the compiler knows are broadcast along the result's last dimension (their extent
  // there is 1, or they have no dimensions, where the result's is a static extent above 1): their
  // stride in the nest's inner loop is 0, and the loop reads one value for the whole row.
  static constexpr std::uint32_t row_broadcast = [] {
    if (last_extent < 2) return 0u;
    std::uint32_t m = 0;
    for (int l = 0; l < leaves.n; ++l) {
      const tensor_meta& x = at(leaves.id[l]).meta;
      if (x.rank == 0 || (x.size[x.rank - 1].is_static() && x.size[x.rank - 1].value() == 1)) m |= 1u << l;
    }
    return m;
  }();
  using dense_access = access<true, row_broadcast>;

  // The row loop, at the host's widest vector level (core/isa.hpp): a fold's chunks.
  template <class Ix>
  CTFX_VECTORIZE static void inner(element_t<out_dt>* d, index_t dst_stride, const leaf_ptrs& p, index_t n) {
    isa::on_host_isa([&]() CTFX_ISA_BODY { inner_loop<Ix>(d, dst_stride, p, n); });
  }
  template <class Ix>
  CTFX_INLINE static void inner_loop(element_t<out_dt>* d, index_t dst_stride, const leaf_ptrs& p, index_t n) {
    if constexpr (Ix::unit) {
      for (index_t i = 0; i < n; ++i) store_as<out_dt, typename root::V>(d + i, root::template eval<Ix>(p, i));
    } else {
      for (index_t i = 0; i < n; ++i) store_as<out_dt, typename root::V>(d + i * dst_stride, root::template eval<Ix>(p, i));
    }
  }

  // The result's last extent when the compiler knows it and it is short: a row of exactly that
  // many elements runs a loop whose trip count is a constant (unrolled, no remainder loop), which
  // matters when the rows are short (RoPE's halves: 64 elements).
  static constexpr index_t fixed_inner = last_extent >= 2 && last_extent <= 256 ? last_extent : index_t{0};

  // One row of a map, inlined into its caller's row walk, which runs inside one on_host_isa body
  // (rows(), static_row_siblings): the whole walk at the level, one level dispatch per kernel.
  CTFX_INLINE static void row(element_t<out_dt>* d, index_t dst_stride, const leaf_ptrs& p, index_t n, bool unit) {
    if (!unit) return inner_loop<strided_access>(d, dst_stride, p, n);
    if constexpr (fixed_inner > 0) {
      if (n == fixed_inner) return inner_loop<dense_access>(d, 1, p, fixed_inner);
    }
    inner_loop<dense_access>(d, 1, p, n);
  }

  // The rows of a nest with at most one outer dimension (the common case once dimensions are
  // collapsed), from row r0: each operand's row start advances by a constant, in bytes, and the
  // destination's by `ostep` elements; no odometer and no dtype lookup per row.
  struct row_cursor {
    leaf_ptrs p;
    index_t step[max_fused_leaves > 0 ? max_fused_leaves : 1]{};
    index_t o = 0, ostep = 0;  // the destination's offset of the current row, and its row step
    CTFX_INLINE row_cursor(const group_ptrs& q, const fused_nest& nest, index_t r0) {
      for (int l = 0; l < leaves.n; ++l) {
        p.st[l] = nest.istride[l + 1];
        p.p[l] = q.leaf[l] + (nest.rank ? nest.stride[l + 1][0] * r0 : 0) * leaf_bytes(l);
        step[l] = (nest.rank ? nest.stride[l + 1][0] : 0) * leaf_bytes(l);
      }
      ostep = nest.rank ? nest.stride[0][0] : 0;
      o = ostep * r0;
    }
    CTFX_INLINE void next() {
      for (int l = 0; l < leaves.n; ++l) p.p[l] += step[l];
      o += ostep;
    }
  };

  // Walks rows [r0, r1) of the nest: row_fn(destination offset, operands at the row's start).
  // Inlined, so that a row_fn that is a hot loop (fold_direct's) is compiled at its caller's ISA level.
  template <class Row>
  CTFX_INLINE static void walk_rows(const group_ptrs& q, const fused_nest& nest, index_t r0, index_t r1, Row&& row_fn) {
    if (nest.rank <= 1) {
      const auto* out = reinterpret_cast<const element_t<out_dt>*>(q.out);
      for (row_cursor c(q, nest, r0); r0 < r1; ++r0, c.next()) {
        if (out) prefetch_row_ahead(out + c.o, c.ostep, r0, nest.rows);
        row_fn(c.o, static_cast<const leaf_ptrs&>(c.p));
      }
      return;
    }
    leaf_ptrs p;
    for (int l = 0; l < leaves.n; ++l) p.st[l] = nest.istride[l + 1];
    row_offsets w(nest, leaves.n + 1, r0);
    const index_t* off = w.off;
    for (index_t r = r0; r < r1; ++r, w.next()) {
      for (int l = 0; l < leaves.n; ++l) p.p[l] = q.leaf[l] + off[l + 1] * leaf_bytes(l);
      row_fn(off[0], static_cast<const leaf_ptrs&>(p));
    }
  }

  // The dense loop when the run's strides are the ones it assumes (stride 1, and 0 for the
  // operands broadcast along the row), else each operand at its own stride.
  static constexpr bool dense_leaves(const fused_nest& nest) {
    bool unit = true;
    for (int l = 0; l < leaves.n; ++l) unit = unit && nest.istride[l + 1] == (((row_broadcast >> l) & 1u) != 0 ? 0 : 1);
    return unit;
  }

  static constexpr bool dense_row(const fused_nest& nest) { return nest.istride[0] == 1 && dense_leaves(nest); }

  // Rows [r0, r1) of a map, the walk and its row loops compiled for the host's level (core/isa.hpp).
  // A call per row into the level's function cost RoPE's 64-element rows a quarter of their time;
  // CTFX_VECTORIZE: without the levels (a build targeting AVX-512) the walk is compiled here.
  CTFX_VECTORIZE static void rows(const group_ptrs& q, const fused_nest& nest, index_t r0, index_t r1) {
    isa::on_host_isa([&]() CTFX_ISA_BODY {
      const bool unit = dense_row(nest);
      auto* base = reinterpret_cast<element_t<out_dt>*>(q.out);
      walk_rows(q, nest, r0, r1,
                [&](index_t o, const leaf_ptrs& p) CTFX_ISA_BODY { row(base + o, nest.istride[0], p, nest.inner, unit); });
    });
  }

  // Row r of a nest with at most one outer dimension, at cursor c, which then moves to the next
  // row (static_row_siblings runs several groups' rows in turn, inside its on_host_isa body).
  CTFX_INLINE static void one_row(const group_ptrs& q, const fused_nest& nest, row_cursor& c, index_t r, bool unit) {
    auto* d = reinterpret_cast<element_t<out_dt>*>(q.out) + c.o;
    prefetch_row_ahead(d, c.ostep, r, nest.rows);
    row(d, nest.istride[0], c.p, nest.inner, unit);
    c.next();
  }

  // A reduction root: each row computed chunk by chunk into the fold's tile (fused_reduce.hpp).
  template <class Sink>
  static void fold_rows(const group_ptrs& g, const fused_nest& nest, index_t r0, index_t r1, Sink& sink) {
    const bool unit = dense_leaves(nest);
    walk_rows(g, nest, r0, r1, [&](index_t, const leaf_ptrs& p) {
      for (index_t c0 = 0; c0 < nest.inner; c0 += fused_chunk) {
        const index_t len = nest.inner - c0 < fused_chunk ? nest.inner - c0 : fused_chunk;
        leaf_ptrs q = p;
        for (int l = 0; l < leaves.n; ++l) q.p[l] += c0 * p.st[l] * leaf_bytes(l);
        element_t<out_dt>* into = sink.reserve(len);
        if (unit && len == fused_chunk) inner<dense_access>(into, 1, q, fused_chunk);
        else if (unit) inner<dense_access>(into, 1, q, len);
        else inner<strided_access>(into, 1, q, len);
        sink.commit(len);
      }
    });
  }

  // The sum of n values of a row whose operands are read at unit stride or broadcast along it (at
  // q), each rounded to the values' dtype and loaded as C, as the unfused reduction reads them,
  // added straight into 32 lanes held in registers: reduce.hpp's order, fold_acc's bits.
  template <class C>
  CTFX_INLINE static C sum_in_lanes(const leaf_ptrs& q, index_t n) {
    auto value = [&](index_t i) {
      element_t<out_dt> e;
      store_as<out_dt, typename root::V>(&e, root::template eval<dense_access>(q, i));
      return load_as<out_dt, C>(&e);
    };
    C lane[sum_lanes];
    for (int l = 0; l < sum_lanes; ++l) lane[l] = C(0);
    index_t i = 0;
    for (; i + sum_lanes <= n; i += sum_lanes)
      for (int l = 0; l < sum_lanes; ++l) lane[l] = wrap_add(lane[l], value(i + l));
    for (int l = 0; i + l < n; ++l) lane[l] = wrap_add(lane[l], value(i + l));
    return fold_acc<C>::in_order(lane, n);
  }

  // A sum whose outputs each take a run of a loop row (a row holds whole outputs) and whose operands
  // are read at unit stride or broadcast along the row: each output's values are computed and added
  // straight into 32 lanes held in registers (reduce.hpp's order, the same bits as the tile's fold),
  // as Inductor's reduction loops do. False: not such a sum (the tile folds it).
  CTFX_VECTORIZE static bool fold_direct(const group_ptrs& g, const fused_nest& nest, const strided& out, const fold_spec& spec,
                                         index_t n, index_t o0) {
    return isa::on_host_isa([&]() CTFX_ISA_BODY { return fold_direct_loop(g, nest, out, spec, n, o0); });
  }
  CTFX_INLINE static bool fold_direct_loop(const group_ptrs& g, const fused_nest& nest, const strided& out,
                                           const fold_spec& spec, index_t n, index_t o0) {
    constexpr dtype O = at(R).meta.dt;
    using C = compute_t<O>;
    if (spec.fold != fold_op::sum || n == 0 || nest.inner % n != 0 || !dense_leaves(nest)) return false;
    output_cursor to(out, o0);
    auto* base = reinterpret_cast<element_t<O>*>(out.p);
    const index_t per_row = nest.inner / n;
    walk_rows(g, nest, 0, nest.rows, [&](index_t, const leaf_ptrs& p) CTFX_ISA_BODY {
      leaf_ptrs q = p;
      for (index_t j = 0; j < per_row; ++j) {
        for (int l = 0; l < leaves.n; ++l)
          q.p[l] = p.p[l] + (((row_broadcast >> l) & 1u) != 0 ? 0 : j * n * leaf_bytes(l));
        store_result<O>(base + to.off, sum_in_lanes<C>(q, n), spec.divisor);
        to.next();
      }
    });
    return true;
  }

  // A reduction root: the group's values folded into the reduction's outputs (fused_reduce.hpp).
  template <class View, class Domain>
  static void run_fold(const device_ctx& ctx, View&& view, Domain&& domain_of) {
    constexpr dtype O = at(R).meta.dt;
    constexpr bool mean = at(R).op == op_kind::mean;
    fused_operands k;
    k.out = domain_of(domain);
    k.n_leaves = leaves.n;
    for (int l = 0; l < leaves.n; ++l) k.leaf[l].set_broadcast(view(leaves.id[l]), k.out.rank, k.out.size);
    const strided out = view(R);
    const index_t outputs = out.numel(), total = k.out.numel();
    if (outputs == 0) return;
    if (total == 0) {  // no value folded: 0, or a mean's 0 / 0 (as the unfused reduction)
      fill_typed<O>(ctx, out, mean ? __builtin_nan("") : 0.0);
      return;
    }
    const index_t n = total / outputs;
    const fold_spec spec{fold_of(at(R).op), mean ? static_cast<double>(n) : 0.0};
    if constexpr (device_kernels_compiled) {
      if (runs_device_kernels(ctx)) {
        const fused_nest nest = make_nest(k);
        static_fold_fn<root, out_dt, O, leaves.n> f{};
        f.nest = nest;
        for (int l = 0; l < leaves.n; ++l) {
          f.leaf[l] = k.leaf[l].p;
          f.leaf_bytes[l] = size_of(k.leaf[l].dt);
        }
        f.out = out;
        f.spec = spec;
        f.n = n;
        fold_outputs_on_device<compute_t<O>>(ctx, f, outputs, n, spec.fold);
        return;
      }
    }
    auto part = [&](const fused_operands& kt, index_t o0) {
      const fused_nest nest = make_nest(kt);
      const group_ptrs g = ptrs_of(kt);
      if (fold_direct(g, nest, out, spec, n, o0)) return;
      fold_sink<out_dt, O> sink(spec, n, out, o0);
      fold_rows(g, nest, 0, nest.rows, sink);
      sink.close();
    };
    if (!split_outputs_for_threads(ctx, k, outputs, part)) part(k, 0);
  }

  // Runs the group on the context's backend; `view(id)` gives node id's bound tensor, `domain_of(id)`
  // the extents of a value computed inside the group (no memory).
  template <class View, class Domain>
  static void run(const device_ctx& ctx, View&& view, Domain&& domain_of) {
    if constexpr (folds) run_fold(ctx, view, domain_of);
    else run_map(ctx, view);
  }

  // Where a kernel's loops start.
  static group_ptrs ptrs_of(const fused_operands& k) {
    group_ptrs g;
    g.out = k.out.p;
    for (int l = 0; l < leaves.n; ++l) g.leaf[l] = k.leaf[l].p;
    return g;
  }
  // Where an elementwise root's loops start: its destination's data and its operands' (a view
  // broadcast to the destination starts where the view does).
  template <class View>
  CTFX_INLINE static group_ptrs map_ptrs(View& view) {
    group_ptrs g;
    g.out = view(dst).p;
    for (int l = 0; l < leaves.n; ++l) g.leaf[l] = view(leaves.id[l]).p;
    return g;
  }

  // An elementwise root's kernel: its destination and its operands, broadcast to it.
  template <class View>
  static constexpr fused_operands map_kernel(View&& view) {
    fused_operands k;
    const strided out = view(dst);
    k.out.set_broadcast(out, out.rank, out.size);
    k.n_leaves = leaves.n;
    for (int l = 0; l < leaves.n; ++l) k.leaf[l].set_broadcast(view(leaves.id[l]), out.rank, out.size);
    return k;
  }

  // An elementwise root of a static plan: its kernel's extents and strides and its loop nest, made
  // in the compiler (only named where static_shapes holds).
  struct shape_view {
    constexpr strided operator()(std::int32_t id) const { return GV::shape(id); }
  };
  struct static_shape {
    static constexpr fused_operands kernel = map_kernel(shape_view{});
    static constexpr fused_nest nest = make_nest(kernel);
    static constexpr bool empty = kernel.out.numel() == 0;
    static constexpr bool unit = dense_row(nest);
  };
  static constexpr bool static_shapes = static_layouts_of<GV>;

  // Every row of a static plan's map: the nest's numbers are constants of the loops.
  CTFX_VECTORIZE static void static_rows(const group_ptrs& g) {
    isa::on_host_isa([&]() CTFX_ISA_BODY {
      auto* base = reinterpret_cast<element_t<out_dt>*>(g.out);
      walk_rows(g, static_shape::nest, 0, static_shape::nest.rows, [&](index_t o, const leaf_ptrs& p) CTFX_ISA_BODY {
        row(base + o, static_shape::nest.istride[0], p, static_shape::nest.inner, static_shape::unit);
      });
    });
  }

  // An elementwise root: the group's values stored into its destination.
  template <class View>
  static void run_map(const device_ctx& ctx, View&& view) {
    if constexpr (static_shapes) {
      if (ctx.where == backend::host && !emulate_device_kernels) {  // (OMP splits the nest, CUDA runs rows: their run-time kernels below)
        if constexpr (!static_shape::empty) static_rows(map_ptrs(view));
        return;
      }
    }
    const fused_operands k = map_kernel(view);
    if (k.out.numel() == 0) return;
    const fused_nest nest = make_nest(k);
    if constexpr (device_kernels_compiled) {
      if (runs_device_kernels(ctx)) {
        typename decltype(row_fn_type(std::make_index_sequence<leaves.n>{}))::type f{};
        f.nest = nest;
        for (int l = 0; l < leaves.n; ++l) f.leaf[l] = k.leaf[l].p;
        f.out = k.out.p;
        parallel_rows(ctx, nest.rows, nest.inner, f);
        return;
      }
    }
    if (!split_for_threads(ctx, k, nest, [](const fused_operands& kt, const fused_nest& nt, index_t r0, index_t r1) { rows(ptrs_of(kt), nt, r0, r1); }))
      rows(ptrs_of(k), nest, 0, nest.rows);
  }
};

// f(integral_constant<size_t, I>) for I in [0, N), in order, always inlined (the steps of a row
// walk, each typed on its own group).
template <class F, std::size_t... I>
CTFX_INLINE void for_each_index(F& f, std::index_sequence<I...>) {
  (f(std::integral_constant<std::size_t, I>{}), ...);
}
template <std::size_t N, class F>
CTFX_INLINE void for_each_index(F& f) {
  for_each_index(f, std::make_index_sequence<N>{});
}

// Row siblings (plan/row_siblings.hpp: groups computed into slices of one cat along its last
// dimension, consecutive in the schedule) run row by row together, each row of the cat's result
// written in one visit. Where their loop nests differ (operands collapse differently), or on CUDA,
// each group runs on its own.
template <class GV, std::int32_t... Rs>
struct static_row_siblings {
  using groups = std::tuple<static_group<GV, Rs>...>;
  static constexpr std::size_t N = sizeof...(Rs);
  template <class F>
  CTFX_INLINE static void each(F&& f) { for_each_index<N>(f); }

  // Each group's row cursor at row r0.
  template <std::size_t... I>
  CTFX_INLINE static auto cursors_at(const group_ptrs* g, const fused_nest* nest, index_t r0, std::index_sequence<I...>) {
    return std::tuple<typename std::tuple_element_t<I, groups>::row_cursor...>{
        typename std::tuple_element_t<I, groups>::row_cursor(g[I], nest[I], r0)...};
  }

  // A static plan's siblings: their nests, and whether they walk their rows together, are the
  // compiler's (only named where static_shapes holds).
  static constexpr bool static_shapes = (static_group<GV, Rs>::static_shapes && ...);
  struct static_shape {
    static constexpr std::array<fused_nest, N> nest{static_group<GV, Rs>::static_shape::nest...};
    static constexpr bool unit[N]{static_group<GV, Rs>::static_shape::unit...};
    static constexpr bool together = [] {
      bool t = true;
      for (std::size_t i = 0; i < N; ++i) t = t && nest[i].inner > 0 && nest[i].rank <= 1 && nest[i].rank == nest[0].rank && nest[i].rows == nest[0].rows;
      bool empty[N]{static_group<GV, Rs>::static_shape::empty...};
      for (std::size_t i = 0; i < N; ++i) t = t && !empty[i];
      return t;
    }();
  };
  template <class View>
  CTFX_VECTORIZE static void static_rows(View& view) {
    const group_ptrs g[N]{static_group<GV, Rs>::map_ptrs(view)...};
    isa::on_host_isa([&]() CTFX_ISA_BODY {
      constexpr const auto& nest = static_shape::nest;
      auto cursors = cursors_at(g, nest.data(), 0, std::make_index_sequence<N>{});
      for (index_t r = 0; r < nest[0].rows; ++r)
        each([&](auto i) CTFX_ISA_BODY {
          std::tuple_element_t<i, groups>::one_row(g[i], nest[i], std::get<i>(cursors), r, static_shape::unit[i]);
        });
    });
  }

  // Each group's operands and nest, made in place (no zeroed array to copy them into: per call,
  // that was a tenth of a small RoPE's time).
  template <class View, std::size_t... I>
  static std::array<fused_operands, N> operands_of(View& view, std::index_sequence<I...>) {
    return {std::tuple_element_t<I, groups>::map_kernel(view)...};
  }
  template <std::size_t... I>
  static std::array<fused_nest, N> nests_of(const std::array<fused_operands, N>& k, std::index_sequence<I...>) {
    return {(k[I].out.numel() > 0 ? make_nest(k[I]) : fused_nest{})...};
  }

  // CTFX_VECTORIZE: without the ISA levels the rows' loops are compiled here (see static_group::rows).
  template <class View, class Domain>
  CTFX_VECTORIZE static void run(const device_ctx& ctx, View&& view, Domain&& domain_of) {
    if constexpr (static_shapes) {
      if constexpr (static_shape::together) {
        if (ctx.where == backend::host && !emulate_device_kernels) return static_rows(view);
      } else {
        if (ctx.where == backend::host && !emulate_device_kernels) return each([&](auto i) { std::tuple_element_t<i, groups>::run(ctx, view, domain_of); });
      }
    }
    const std::array<fused_operands, N> k = operands_of(view, std::make_index_sequence<N>{});
    const std::array<fused_nest, N> nest = nests_of(k, std::make_index_sequence<N>{});
    bool unit[N]{};
    each([&](auto i) { unit[i] = std::tuple_element_t<i, groups>::dense_row(nest[i]); });
    bool together = !runs_device_kernels(ctx);
    for (std::size_t i = 0; i < N; ++i) {
      together = together && k[i].out.numel() > 0 && nest[i].rank <= 1 && nest[i].rank == nest[0].rank && nest[i].rows == nest[0].rows;
    }
    if (!together) {
      each([&](auto i) { std::tuple_element_t<i, groups>::run(ctx, view, domain_of); });
      return;
    }
    group_ptrs g[N];
    each([&](auto i) { g[i] = std::tuple_element_t<i, groups>::ptrs_of(k[i]); });
    auto part = [&](index_t r0, index_t r1) {
      isa::on_host_isa([&]() CTFX_ISA_BODY {
        auto cursors = cursors_at(g, nest.data(), r0, std::make_index_sequence<N>{});
        for (index_t r = r0; r < r1; ++r)
          each([&](auto i) CTFX_ISA_BODY { std::tuple_element_t<i, groups>::one_row(g[i], nest[i], std::get<i>(cursors), r, unit[i]); });
      });
    };
#if defined(_OPENMP)
    if (ctx.where == backend::omp && nest[0].rows > 1) {
#pragma omp parallel
      {
        const index_t t = omp_get_thread_num(), T = omp_get_num_threads();
        part(nest[0].rows * t / T, nest[0].rows * (t + 1) / T);
      }
      return;
    }
#endif
    part(0, nest[0].rows);
  }
};

}  // namespace ctfx::kernels
#include "../core/diagnostics_pop.hpp"
