// ctfx/kernels/fused.hpp — one kernel for a group of elementwise ops (plan/fusion.hpp): the values
// inside the group never touch memory.
//
// A group is a small program over its operands (the leaves: tensors read, broadcast to the loop
// domain) computed into one destination: op j reads leaves or earlier ops' results. Each op computes
// exactly as its unfused kernel does — in the compute type of its result's dtype, rounded to that
// dtype after every op (an f16 intermediate is rounded to half, an i32 one truncated) — so a fused
// run is bit-identical to the unfused graph by construction. (FMA contraction across ops would
// break that: the ctfx target compiles with -ffp-contract=off, and the CUDA path with --fmad=false.)
//
// On the host the loop nest is: dimensions collapsed where every operand is contiguous across them,
// the outer ones walked row by row (split across threads on the OMP backend), the innermost in
// chunks of 1,024 elements (`fused_chunk`, 256, into a reduction's sink). Each op runs over a
// chunk as a plain loop on typed arrays that the compiler vectorizes, dispatched once per chunk
// through a function pointer chosen when the plan was made (never a dtype switch per element);
// with ctfx::runtime each chunk loop runs at the CPU's widest ISA level (chunk_loop). A
// unit-stride operand is read in place; an f32/f64/i64 value feeds the next op without a
// conversion pass; an f32 add/sub/mul/div, relu, neg
// or abs read by just one f32 add/sub/mul/div runs inside its reader's loop (pair_ops: pairs, and
// trees of three), so its value stays in a register.
//
// On CUDA (and as the host's cross-check in tests) `fused_elem_fn` evaluates the same program from
// its ops, `fused_row_fn` running it over the rows of the group's nest (kernels/rows.hpp): each op
// dispatched on its dtypes and kind once for four elements of a thread, never per element.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <array>
#include <cstring>
#include <type_traits>
#include <utility>
#include "../core/isa.hpp"
#include "../plan/fusion.hpp"
#include "launch.hpp"
#include "pointwise.hpp"
#include "rows.hpp"
#if defined(_OPENMP)
#include <omp.h>
#endif

namespace ctfx::kernels {

inline constexpr index_t fused_chunk = 256;

// An operand reference: an op's result (0 .. max_fused_ops-1) or a leaf (max_fused_ops + l).
using fused_ref = std::int8_t;
constexpr fused_ref leaf_ref(int l) { return static_cast<fused_ref>(max_fused_ops + l); }

// Runs a chunk loop's body. With the executor compiled once (ctfx::runtime: exec/instantiate.hpp,
// and the files that link it, which define CTFX_SEPARATE_RUNTIME) each chunk loop is compiled at
// every host ISA level and runs at isa::current(): one branch per call (a chunk or a row), not per
// element. A header-only build compiles them at its own level only: three copies of its ~450 chunk
// loops cost a file that compiles the executor a quarter more time, paid in every such file.
// Define CTFX_CHUNK_ISA_LEVELS to 1 (or 0) to choose, the same in every file of a program.
#if !defined(CTFX_CHUNK_ISA_LEVELS)
#if CTFX_HOST_ISA_LEVELS && (defined(CTFX_SEPARATE_RUNTIME) || defined(CTFX_RUNTIME_INSTANCE))
#define CTFX_CHUNK_ISA_LEVELS 1
#else
#define CTFX_CHUNK_ISA_LEVELS 0
#endif
#endif
template <class Loop>
CTFX_INLINE void chunk_loop(Loop&& loop) {
#if CTFX_CHUNK_ISA_LEVELS
  isa::on_host_isa(loop);
#else
  loop();  // inlined into the chunk function, which carries CTFX_VECTORIZE
#endif
}

// Chunk loops, type-erased so that a plan resolves them once.
using conv_chunk_fn = void (*)(void* out, const void* in, index_t n);                          // element -> compute
using op_chunk_fn = void (*)(void* out, const void* a, const void* b, scalar_value scalar, index_t n);  // compute -> compute
using where_chunk_fn = void (*)(void* out, const void* c, const void* a, const void* b, index_t n);  // c: bool elements
using fma_chunk_fn = void (*)(void* out, const void* a, const void* b, const void* c, index_t n);  // compute -> compute

template <dtype S, class C>
CTFX_VECTORIZE void load_chunk(void* out, const void* in, index_t n) {
  auto* o = static_cast<C*>(out);
  const auto* p = static_cast<const element_t<S>*>(in);
  chunk_loop([&]() CTFX_ISA_BODY { for (index_t i = 0; i < n; ++i) o[i] = load_as<S, C>(p + i); });
}
template <dtype D, class C>
CTFX_VECTORIZE void store_chunk(void* out, const void* in, index_t n) {
  auto* o = static_cast<element_t<D>*>(out);
  const auto* p = static_cast<const C*>(in);
  chunk_loop([&]() CTFX_ISA_BODY { for (index_t i = 0; i < n; ++i) store_as<D, C>(o + i, p[i]); });
}
template <op_kind K, class C>
CTFX_VECTORIZE void unary_chunk(void* out, const void* a, const void*, scalar_value, index_t n) {
  auto* o = static_cast<C*>(out);
  const auto* x = static_cast<const C*>(a);
  chunk_loop([&]() CTFX_ISA_BODY { for (index_t i = 0; i < n; ++i) o[i] = unary_value<C>(K, x[i]); });
}
template <op_kind K, class C>
CTFX_VECTORIZE void binary_chunk(void* out, const void* a, const void* b, scalar_value, index_t n) {
  auto* o = static_cast<C*>(out);
  const auto* x = static_cast<const C*>(a);
  const auto* y = static_cast<const C*>(b);
  chunk_loop([&]() CTFX_ISA_BODY { for (index_t i = 0; i < n; ++i) o[i] = binary_value<C>(K, x[i], y[i]); });
}
template <op_kind K, class C>
CTFX_VECTORIZE void binary_scalar_chunk(void* out, const void* a, const void*, scalar_value scalar, index_t n) {
  auto* o = static_cast<C*>(out);
  const auto* x = static_cast<const C*>(a);
  const C y = scalar.as<C>();  // as binary_fn: the scalar in the result's compute type
  chunk_loop([&]() CTFX_ISA_BODY { for (index_t i = 0; i < n; ++i) o[i] = scalar_binary_value<C>(K, x[i], y); });
}

template <class C>
CTFX_VECTORIZE void where_chunk(void* out, const void* c, const void* a, const void* b, index_t n) {
  auto* o = static_cast<C*>(out);
  const auto* t = static_cast<const std::uint8_t*>(c);
  const auto* x = static_cast<const C*>(a);
  const auto* y = static_cast<const C*>(b);
  chunk_loop([&]() CTFX_ISA_BODY {
    for (index_t i = 0; i < n; ++i) o[i] = select_bits(t[i] != 0, x[i], y[i]);  // no branch per element
  });
}

// out = a * b + c rounded once (fma_value), all three in the compute type.
template <class C>
CTFX_VECTORIZE void fma_chunk(void* out, const void* a, const void* b, const void* c, index_t n) {
  auto* o = static_cast<C*>(out);
  const auto* x = static_cast<const C*>(a);
  const auto* y = static_cast<const C*>(b);
  const auto* z = static_cast<const C*>(c);
  chunk_loop([&]() CTFX_ISA_BODY { for (index_t i = 0; i < n; ++i) o[i] = fma_value<C>(x[i], y[i], z[i]); });
}

// Destination rows a page or more apart (a KV cache's, written at one position per head): the row
// `prefetch_rows` ahead is fetched while row r is computed, its page walk and line fill overlapped
// with the work. d: row r's start; step: the rows' distance in elements.
inline constexpr index_t prefetch_rows = 8;
template <class E>
inline void prefetch_row_ahead(const E* d, index_t step, index_t r, index_t rows) {
  const index_t bytes = step * static_cast<index_t>(sizeof(E));
  if ((bytes >= 4096 || bytes <= -4096) && r + prefetch_rows < rows) __builtin_prefetch(d + prefetch_rows * step, 1, 1);
}

// Rows of a direct loop (run_direct_rows) run by one call of a superinstruction: `rows` rows of n
// values, each operand (destination first, then a, b, c, d; 0 for a scalar) `step` bytes further
// per row. A row then costs its loop, not a call and an ISA dispatch: RoPE's rows of a KV cache
// are 64 values each, and the call was as long as the arithmetic. Null: one row.
struct row_steps {
  index_t rows = 1;
  index_t step[5]{};
};
namespace detail {
template <class T>
CTFX_INLINE T* bump(T* p, index_t bytes) {
  using B = std::conditional_t<std::is_const_v<T>, const std::byte, std::byte>;
  return reinterpret_cast<T*>(reinterpret_cast<B*>(p) + bytes);
}
// Runs row(o, x, y, z, w) over the rows of rs (once when it is null), the pointers moved by its steps.
template <class C, class Row>
CTFX_INLINE void each_row(const row_steps* rs, C* o, const C* x, const C* y, const C* z, const C* w, Row&& row) {
  if (!rs) {
    row(o, x, y, z, w);
    return;
  }
  const index_t dst_step = rs->step[0] / static_cast<index_t>(sizeof(C));
  for (index_t r = 0; r < rs->rows; ++r) {
    prefetch_row_ahead(o, dst_step, r, rs->rows);
    row(o, x, y, z, w);
    o = bump(o, rs->step[0]);
    x = bump(x, rs->step[1]);
    y = bump(y, rs->step[2]);
    z = bump(z, rs->step[3]);
    w = bump(w, rs->step[4]);
  }
}
}  // namespace detail

// A superinstruction: an add/sub/mul/div (inner) whose one reader is another add/sub/mul/div
// (outer), both in C, run as one loop, so the inner result stays in a register instead of
// making a round trip through a chunk buffer. The same two operations in the same order and
// precision as the two chunk loops (no contraction: the ctfx target compiles with
// -ffp-contract=off), so the results are the same bits. S1/S2: the inner's/outer's second operand
// is its scalar; Right: the inner result is the outer's right operand (c op inner).
using pair_chunk_fn = void (*)(void* out, const void* a, const void* b, const void* c, scalar_value s1, scalar_value s2, index_t n,
                               const row_steps* rs);

template <op_kind K1, op_kind K2, bool S1, bool S2, bool Right, class C>
CTFX_VECTORIZE void pair_chunk(void* out, const void* a, const void* b, const void* c, scalar_value s1, scalar_value s2, index_t n,
                               const row_steps* rs) {
  const C ys = s1.as<C>(), zs = s2.as<C>();
  chunk_loop([&]() CTFX_ISA_BODY {
    detail::each_row<C>(rs, static_cast<C*>(out), static_cast<const C*>(a), static_cast<const C*>(b), static_cast<const C*>(c), nullptr,
                        [&](C* o, const C* x, const C* y, const C* z, const C*) CTFX_ISA_BODY {
                          for (index_t i = 0; i < n; ++i) {
                            const C t = binary_value<C>(K1, x[i], S1 ? ys : y[i]);
                            const C u = S2 ? zs : z[i];
                            o[i] = Right ? binary_value<C>(K2, u, t) : binary_value<C>(K2, t, u);
                          }
                        });
  });
}

namespace detail {
inline constexpr op_kind pair_kinds[4] = {op_kind::add, op_kind::sub, op_kind::mul, op_kind::div};
// Which of pair_kinds k is (the in-place twins count as their functional op), or -1.
constexpr int pair_kind_index(op_kind k) {
  switch (k) {
    case op_kind::add: case op_kind::add_: return 0;
    case op_kind::sub: case op_kind::sub_: return 1;
    case op_kind::mul: case op_kind::mul_: return 2;
    case op_kind::div: case op_kind::div_: return 3;
    default: return -1;
  }
}
template <class C, std::size_t I>
constexpr pair_chunk_fn pair_entry() {
  return &pair_chunk<pair_kinds[I / 32], pair_kinds[I / 8 % 4], (I / 4 % 2) != 0, (I / 2 % 2) != 0, (I % 2) != 0, C>;
}
template <class C, std::size_t... I>
constexpr std::array<pair_chunk_fn, sizeof...(I)> pair_table(std::index_sequence<I...>) { return {pair_entry<C, I>()...}; }
}  // namespace detail

// f32 only: the one compute type whose pairs the benchmarks and models make hot (each compute
// type adds 128 instantiations to every program that includes the runtime executor).
inline pair_chunk_fn pair_chunk_for(op_kind inner, op_kind outer, bool s1, bool s2, bool right) {
  static constexpr auto table = detail::pair_table<float>(std::make_index_sequence<128>{});
  const int k1 = detail::pair_kind_index(inner), k2 = detail::pair_kind_index(outer);
  if (k1 < 0 || k2 < 0) return nullptr;
  return table[static_cast<std::size_t>(k1 * 32 + k2 * 8 + s1 * 4 + s2 * 2 + right)];
}

// A pair whose inner op is a cheap unary one (relu, neg, abs): outer(inner(a), c), as two loops
// would compute it. S2 and Right as pair_chunk's; b and s1 are unused.
template <op_kind K1, op_kind K2, bool S2, bool Right, class C>
CTFX_VECTORIZE void unary_pair_chunk(void* out, const void* a, const void*, const void* c, scalar_value, scalar_value s2, index_t n,
                                     const row_steps* rs) {
  const C zs = s2.as<C>();
  chunk_loop([&]() CTFX_ISA_BODY {
    detail::each_row<C>(rs, static_cast<C*>(out), static_cast<const C*>(a), nullptr, static_cast<const C*>(c), nullptr,
                        [&](C* o, const C* x, const C*, const C* z, const C*) CTFX_ISA_BODY {
                          for (index_t i = 0; i < n; ++i) {
                            const C t = unary_value<C>(K1, x[i]);
                            const C u = S2 ? zs : z[i];
                            o[i] = Right ? binary_value<C>(K2, u, t) : binary_value<C>(K2, t, u);
                          }
                        });
  });
}

namespace detail {
inline constexpr op_kind pair_unary_kinds[3] = {op_kind::relu, op_kind::neg, op_kind::abs};
constexpr int pair_unary_index(op_kind k) {
  switch (k) {
    case op_kind::relu: return 0;
    case op_kind::neg: return 1;
    case op_kind::abs: return 2;
    default: return -1;
  }
}
template <class C, std::size_t... I>
constexpr std::array<pair_chunk_fn, sizeof...(I)> unary_pair_table(std::index_sequence<I...>) {
  return {&unary_pair_chunk<pair_unary_kinds[I / 16], pair_kinds[I / 4 % 4], (I / 2 % 2) != 0, (I % 2) != 0, C>...};
}
}  // namespace detail

// f32 only, as pair_chunk_for.
inline pair_chunk_fn unary_pair_chunk_for(op_kind inner, op_kind outer, bool s2, bool right) {
  static constexpr auto table = detail::unary_pair_table<float>(std::make_index_sequence<48>{});
  const int k1 = detail::pair_unary_index(inner), k2 = detail::pair_kind_index(outer);
  if (k1 < 0 || k2 < 0) return nullptr;
  return table[static_cast<std::size_t>(k1 * 16 + k2 * 4 + s2 * 2 + right)];
}

// The same for a tree of three: outer(inner1(a, b), inner2(c, d)), all operands read in place
// (the stencil's (n + s) + (w + e), RoPE's k1 * cos - k2 * sin).
using tree_chunk_fn = void (*)(void* out, const void* a, const void* b, const void* c, const void* d, index_t n, const row_steps* rs);

template <op_kind K1, op_kind K2, op_kind K3, class C>
CTFX_VECTORIZE void tree_chunk(void* out, const void* a, const void* b, const void* c, const void* d, index_t n, const row_steps* rs) {
  chunk_loop([&]() CTFX_ISA_BODY {
    detail::each_row<C>(rs, static_cast<C*>(out), static_cast<const C*>(a), static_cast<const C*>(b), static_cast<const C*>(c),
                        static_cast<const C*>(d), [&](C* o, const C* x, const C* y, const C* z, const C* w) CTFX_ISA_BODY {
                          for (index_t i = 0; i < n; ++i) {
                            const C t = binary_value<C>(K1, x[i], y[i]);
                            const C u = binary_value<C>(K2, z[i], w[i]);
                            o[i] = binary_value<C>(K3, t, u);
                          }
                        });
  });
}

namespace detail {
template <class C, std::size_t... I>
constexpr std::array<tree_chunk_fn, sizeof...(I)> tree_table(std::index_sequence<I...>) {
  return {&tree_chunk<pair_kinds[I / 16], pair_kinds[I / 4 % 4], pair_kinds[I % 4], C>...};
}
}  // namespace detail

inline tree_chunk_fn tree_chunk_for(op_kind inner1, op_kind inner2, op_kind outer) {
  static constexpr auto table = detail::tree_table<float>(std::make_index_sequence<64>{});
  const int k1 = detail::pair_kind_index(inner1), k2 = detail::pair_kind_index(inner2), k3 = detail::pair_kind_index(outer);
  if (k1 < 0 || k2 < 0 || k3 < 0) return nullptr;
  return table[static_cast<std::size_t>(k1 * 16 + k2 * 4 + k3)];
}

// A superinstruction for a masked select: where(x K y, a, b) (K a comparison, y a tensor or the
// scalar s) as one loop, the condition kept in a register instead of a bool chunk between two
// loops. The comparison and the select are the unfused ops' own (binary_chunk's, where_chunk's).
using cmp_where_chunk_fn = void (*)(void* out, const void* x, const void* y, scalar_value s, const void* a, const void* b, index_t n);

template <op_kind K, bool S, class C>
CTFX_VECTORIZE void cmp_where_chunk(void* out, const void* x, const void* y, scalar_value s, const void* a, const void* b, index_t n) {
  auto* o = static_cast<C*>(out);
  const auto* xs = static_cast<const C*>(x);
  const auto* ys = static_cast<const C*>(y);
  const auto* as = static_cast<const C*>(a);
  const auto* bs = static_cast<const C*>(b);
  const C sc = s.as<C>();
  chunk_loop([&]() CTFX_ISA_BODY {
    for (index_t i = 0; i < n; ++i) {
      const C t = S ? scalar_binary_value<C>(K, xs[i], sc) : binary_value<C>(K, xs[i], ys[i]);
      o[i] = select_bits(t != C(0), as[i], bs[i]);
    }
  });
}

// f32 only, as the pairs.
inline cmp_where_chunk_fn cmp_where_chunk_for(op_kind k, bool scalar) {
#define CTFX_CMP(K) \
  case op_kind::K: return scalar ? &cmp_where_chunk<op_kind::K, true, float> : &cmp_where_chunk<op_kind::K, false, float>;
  switch (k) {
    CTFX_CMP(eq) CTFX_CMP(ne) CTFX_CMP(lt) CTFX_CMP(le) CTFX_CMP(gt) CTFX_CMP(ge)
    default: return nullptr;
  }
#undef CTFX_CMP
}

// The element type of D is its compute type C (no conversion pass between ops).
template <class C>
constexpr bool stores_as(dtype d) {
  if constexpr (std::is_same_v<C, float>) return d == dtype::f32;
  else if constexpr (std::is_same_v<C, double>) return d == dtype::f64;
  else return d == dtype::i64;
}

template <class C>
inline conv_chunk_fn load_chunk_for(dtype s) {
  return visit_dtype(s, [](auto sd) -> conv_chunk_fn { return &load_chunk<decltype(sd)::value, C>; });
}
template <class C>
inline conv_chunk_fn store_chunk_for(dtype d) {
  return visit_dtype(d, [](auto dd) -> conv_chunk_fn { return &store_chunk<decltype(dd)::value, C>; });
}

template <class C>
inline op_chunk_fn op_chunk_for(op_kind k, bool scalar) {
#define CTFX_UNARY(K) case op_kind::K: return &unary_chunk<op_kind::K, C>;
#define CTFX_BINARY(K, F)                                                                         \
  case op_kind::K: case op_kind::F:                                                               \
    return scalar ? &binary_scalar_chunk<op_kind::K, C> : &binary_chunk<op_kind::K, C>;
  switch (k) {
    CTFX_UNARY(neg) CTFX_UNARY(abs) CTFX_UNARY(exp) CTFX_UNARY(exp2) CTFX_UNARY(log) CTFX_UNARY(log2) CTFX_UNARY(log10) CTFX_UNARY(sin) CTFX_UNARY(cos)
    CTFX_UNARY(sqrt) CTFX_UNARY(relu) CTFX_UNARY(ceil) CTFX_UNARY(floor) CTFX_UNARY(round) CTFX_UNARY(trunc)
    CTFX_UNARY(tanh) CTFX_UNARY(erf) CTFX_UNARY(log1p) CTFX_UNARY(expm1) CTFX_UNARY(sigmoid) CTFX_UNARY(rsqrt) CTFX_UNARY(sign)
    CTFX_BINARY(add, add_) CTFX_BINARY(sub, sub_) CTFX_BINARY(mul, mul_) CTFX_BINARY(div, div_)
    CTFX_UNARY(bitwise_not) CTFX_UNARY(logical_not)
    CTFX_BINARY(maximum, clamp_min) CTFX_BINARY(minimum, clamp_max)
    case op_kind::pow: return scalar ? &binary_scalar_chunk<op_kind::pow, C> : &binary_chunk<op_kind::pow, C>;
    case op_kind::remainder: return scalar ? &binary_scalar_chunk<op_kind::remainder, C> : &binary_chunk<op_kind::remainder, C>;
    case op_kind::fmod: return scalar ? &binary_scalar_chunk<op_kind::fmod, C> : &binary_chunk<op_kind::fmod, C>;
    case op_kind::hypot: return scalar ? &binary_scalar_chunk<op_kind::hypot, C> : &binary_chunk<op_kind::hypot, C>;
    case op_kind::atan2: return scalar ? &binary_scalar_chunk<op_kind::atan2, C> : &binary_chunk<op_kind::atan2, C>;
    case op_kind::floor_divide: return scalar ? &binary_scalar_chunk<op_kind::floor_divide, C> : &binary_chunk<op_kind::floor_divide, C>;
    case op_kind::trunc_divide: return scalar ? &binary_scalar_chunk<op_kind::trunc_divide, C> : &binary_chunk<op_kind::trunc_divide, C>;
#define CTFX_PREDICATE(K) case op_kind::K: return scalar ? &binary_scalar_chunk<op_kind::K, C> : &binary_chunk<op_kind::K, C>;
    CTFX_PREDICATE(eq) CTFX_PREDICATE(ne) CTFX_PREDICATE(lt) CTFX_PREDICATE(le) CTFX_PREDICATE(gt) CTFX_PREDICATE(ge)
    CTFX_PREDICATE(logical_and) CTFX_PREDICATE(logical_or)
    CTFX_PREDICATE(bitwise_and) CTFX_PREDICATE(bitwise_or) CTFX_PREDICATE(bitwise_xor)
    CTFX_PREDICATE(bitwise_left_shift) CTFX_PREDICATE(bitwise_right_shift)
#undef CTFX_PREDICATE
    default: return nullptr;  // convert: no arithmetic, only the load and the store
  }
#undef CTFX_UNARY
#undef CTFX_BINARY
}

// One op of a group. `k` is a unary, binary, where or fma op, or op_kind::copy for the conversions of
// clone, convert and copy_ (computed as kernels::copy does: through double, or int64 between integers).
struct fused_op {
  op_kind k = op_kind::copy;
  dtype out = dtype::f32;   // the result's dtype
  fused_ref a = -1, b = -1; // operands; b < 0 with `has_scalar`: the scalar
  bool has_scalar = false;
  scalar_value scalar{};    // for a bool-result op, already rounded to cdt (kernels::scalar_in)
  fused_ref c = -1;         // where's condition (then a and b are its branches); fma's addend (a * b + c)
  dtype cdt = dtype::f32;   // what a bool-result op (yields_bool) computes in: its operands' promoted dtype
  // Resolved when the plan is made (host): the compute type index, the loads of a and b into it,
  // the op over compute values, the store into `out` (null: the compute type is out's element type).
  std::int8_t cidx = 0;
  conv_chunk_fn load_a = nullptr, load_b = nullptr, store = nullptr;
  op_chunk_fn fn = nullptr;
  where_chunk_fn fnw = nullptr;
  fma_chunk_fn fnf = nullptr;      // fma: a * b + c
  conv_chunk_fn load_c = nullptr;  // fma's addend into the compute type
  // Set by pair_ops (host): this op computes op `inner` (fn2), or its operands a and b (fn3),
  // inside its own loop; those then run no loop of their own (`absorbed`).
  pair_chunk_fn fn2 = nullptr;
  tree_chunk_fn fn3 = nullptr;
  cmp_where_chunk_fn fnc = nullptr;  // a where that computes its condition, op `inner`, itself
  fused_ref inner = -1;
  bool absorbed = false;
};

// A group's operands and destination, bound per run: all that a loop over its domain reads when
// its ops are types (fused_static.hpp), so a typed kernel's per-call setup neither builds nor
// copies the program below (16 ops: 1.5 KiB of stores, a third of a small RoPE call's time).
struct fused_operands {
  int n_leaves = 0;
  dtype leaf_dt[max_fused_leaves]{};
  strided leaf[max_fused_leaves]{};  // broadcast to the domain (out's extents)
  strided out{};
};

// The group as the run-time executor interprets it: its program, its operands and its destination.
struct fused_kernel : fused_operands {
  int n_ops = 0;
  fused_op ops[max_fused_ops]{};
};

// The compute type of an op: as kernels::copy for conversions, compute_t<out> otherwise (of cdt for
// the bool-result ops).
constexpr int compute_index_of(const fused_op& o, dtype a_dt) {
  if (o.k == op_kind::copy) return is_floating(a_dt) || is_floating(o.out) ? 1 : 2;
  const dtype c = yields_bool(o.k) ? o.cdt : o.out;
  return c == dtype::f64 ? 1 : is_floating(c) ? 0 : 2;
}

// Resolves every op's chunk functions (host); a_dt/b_dt (c_dt: fma's addend): the operands' dtypes.
inline void resolve(fused_op& o, dtype a_dt, dtype b_dt, dtype c_dt = dtype::f32) {
  if (o.k == op_kind::copy && a_dt == o.out) {  // clone, or copy_ between equal dtypes: the bytes
    o.load_a = o.load_b = o.store = nullptr;
    o.fn = nullptr;
    return;
  }
  o.cidx = static_cast<std::int8_t>(compute_index_of(o, a_dt));
  auto pick = [&](auto c) {
    using C = decltype(c);
    o.load_a = stores_as<C>(a_dt) ? nullptr : load_chunk_for<C>(a_dt);
    o.load_b = (o.b < 0 || stores_as<C>(b_dt)) ? nullptr : load_chunk_for<C>(b_dt);
    o.fn = o.k == op_kind::copy || o.c >= 0 ? nullptr : op_chunk_for<C>(o.k, o.has_scalar);
    o.fnw = o.k == op_kind::where ? &where_chunk<C> : nullptr;
    o.fnf = o.k == op_kind::fma ? &fma_chunk<C> : nullptr;
    o.load_c = o.k != op_kind::fma || stores_as<C>(c_dt) ? nullptr : load_chunk_for<C>(c_dt);
    o.store = stores_as<C>(o.out) ? nullptr : store_chunk_for<C>(o.out);
  };
  if (o.cidx == 0) pick(float{});
  else if (o.cidx == 1) pick(double{});
  else pick(std::int64_t{});
}

// Pairs ops into superinstructions (pair_chunk, unary_pair_chunk, tree_chunk): an f32
// add/sub/mul/div, relu, neg or abs whose result exactly one operand of the group reads, and that
// reader an f32 add/sub/mul/div, runs inside its reader's loop (both operands, when both are
// add/sub/mul/div without scalars: a tree). Greedy in program order; an op that absorbed others is
// not absorbed itself. Host only: fused_elem_fn still evaluates every op on its own.
inline bool plain_f32_arith(const fused_op& o) {
  return detail::pair_kind_index(o.k) >= 0 && o.out == dtype::f32 && o.cidx == 0 && o.c < 0 && o.fn && !o.load_a &&
         !o.load_b && !o.store;
}
inline bool plain_f32_unary(const fused_op& o) {
  return detail::pair_unary_index(o.k) >= 0 && o.out == dtype::f32 && o.cidx == 0 && o.c < 0 && o.fn && !o.load_a && !o.store;
}
inline void pair_ops(fused_kernel& k) {
  int uses[max_fused_ops]{};
  for (int j = 0; j < k.n_ops; ++j)
    for (fused_ref r : {k.ops[j].a, k.ops[j].b, k.ops[j].c})
      if (r >= 0 && r < max_fused_ops) ++uses[r];
  for (int j = 0; j < k.n_ops; ++j) {
    fused_op& o = k.ops[j];
    if (o.fnw && o.out == dtype::f32 && o.cidx == 0 && !o.load_a && !o.load_b && !o.store && o.c < max_fused_ops &&
        uses[o.c] == 1) {  // where(x K y, a, b), the comparison in f32 read by this where only
      fused_op& q = k.ops[o.c];
      if (q.fn && q.cdt == dtype::f32 && !q.load_a && !q.load_b && !q.fn2 && !q.fn3 && !q.absorbed &&
          (o.fnc = cmp_where_chunk_for(q.k, q.has_scalar)) != nullptr) {
        o.inner = o.c;
        q.absorbed = true;
      }
      continue;
    }
    if (!plain_f32_arith(o)) continue;
    auto absorbable = [&](fused_ref r) {
      return r >= 0 && r < max_fused_ops && uses[r] == 1 && (plain_f32_arith(k.ops[r]) || plain_f32_unary(k.ops[r])) &&
             !k.ops[r].fn2 && !k.ops[r].fn3 && !k.ops[r].absorbed;
    };
    if (!o.has_scalar && o.a != o.b && absorbable(o.a) && absorbable(o.b) && !k.ops[o.a].has_scalar && !k.ops[o.b].has_scalar) {
      o.fn3 = tree_chunk_for(k.ops[o.a].k, k.ops[o.b].k, o.k);
      if (o.fn3) {
        k.ops[o.a].absorbed = k.ops[o.b].absorbed = true;
        continue;
      }
    }
    bool right;
    if (absorbable(o.a) && (o.has_scalar || o.b != o.a)) right = false;
    else if (!o.has_scalar && absorbable(o.b)) right = true;
    else continue;
    const fused_ref i = right ? o.b : o.a;
    fused_op& in = k.ops[i];
    o.fn2 = plain_f32_unary(in) ? unary_pair_chunk_for(in.k, o.k, o.has_scalar, right)
                                : pair_chunk_for(in.k, o.k, in.has_scalar, o.has_scalar, right);
    if (!o.fn2) continue;
    o.inner = i;
    in.absorbed = true;
  }
}

namespace detail {

// Reads n elements of `t` from element offset `off` with inner stride `st` into a contiguous
// array (or returns the address in place when the stride is 1).
inline const void* gather(const strided& t, index_t off, index_t st, index_t n, std::byte* buf) {
  const int es = size_of(t.dt);
  const std::byte* p = t.p + off * es;
  if (st == 1) return p;
  if (st == 0) {  // one value broadcast over the chunk: a typed fill (vectorized), not a copy per element
    auto fill = [&](auto v) {
      std::memcpy(&v, p, sizeof v);
      auto* b = reinterpret_cast<decltype(v)*>(buf);
      for (index_t i = 0; i < n; ++i) b[i] = v;
    };
    switch (es) {
      case 1: fill(std::uint8_t{}); break;
      case 2: fill(std::uint16_t{}); break;
      case 4: fill(std::uint32_t{}); break;
      default: fill(std::uint64_t{}); break;
    }
    return buf;
  }
  switch (es) {
    case 1: for (index_t i = 0; i < n; ++i) buf[i] = p[i * st]; break;
    case 2: for (index_t i = 0; i < n; ++i) std::memcpy(buf + 2 * i, p + 2 * i * st, 2); break;
    case 4: for (index_t i = 0; i < n; ++i) std::memcpy(buf + 4 * i, p + 4 * i * st, 4); break;
    default: for (index_t i = 0; i < n; ++i) std::memcpy(buf + 8 * i, p + 8 * i * st, 8); break;
  }
  return buf;
}

inline void scatter(const strided& t, index_t off, index_t st, index_t n, const std::byte* src) {
  const int es = size_of(t.dt);
  std::byte* p = t.p + off * es;
  for (index_t i = 0; i < n; ++i) std::memcpy(p + i * st * es, src + i * es, static_cast<std::size_t>(es));
}

}  // namespace detail

// Runs rows [r0, r1) of the collapsed loop nest: `outer` dims (sizes os, strides per operand),
// inner extent `inner`. Operand 0 is the destination, 1.. the leaves.
struct fused_nest {
  int rank = 0;  // outer dims
  index_t size[max_rank]{};
  index_t stride[max_fused_leaves + 1][max_rank]{};
  index_t inner = 1;
  index_t istride[max_fused_leaves + 1]{};
  index_t rows = 1;
};

// constexpr: a static plan's groups make their nests in the compiler (fused_static.hpp).
constexpr fused_nest make_nest(const fused_operands& k) {
  fused_nest nest;
  const int r = k.out.rank;
  const int nop = k.n_leaves + 1;
  auto st = [&](int o, int d) { return o == 0 ? k.out.stride[d] : k.leaf[o - 1].stride[d]; };
  // Collapse from the innermost dimension outwards; extent-1 dimensions vanish.
  index_t sz[max_rank];
  index_t str[max_fused_leaves + 1][max_rank];
  int n = 0;  // collapsed dims, innermost first
  for (int d = r - 1; d >= 0; --d) {
    if (k.out.size[d] == 1) continue;
    bool merge = n > 0;
    for (int o = 0; merge && o < nop; ++o) merge = st(o, d) == str[o][n - 1] * sz[n - 1];
    if (merge) {
      sz[n - 1] *= k.out.size[d];
    } else {
      sz[n] = k.out.size[d];
      for (int o = 0; o < nop; ++o) str[o][n] = st(o, d);
      ++n;
    }
  }
  if (n == 0) {
    nest.inner = k.out.numel() == 0 ? 0 : 1;
    for (int o = 0; o < nop; ++o) nest.istride[o] = 1;
    return nest;
  }
  nest.inner = sz[0];
  for (int o = 0; o < nop; ++o) nest.istride[o] = str[o][0];
  nest.rank = n - 1;
  for (int d = 0; d < nest.rank; ++d) {  // outer dims, outermost first
    nest.size[d] = sz[n - 1 - d];
    for (int o = 0; o < nop; ++o) nest.stride[o][d] = str[o][n - 1 - d];
    nest.rows *= nest.size[d];
  }
  return nest;
}

// The operands' offsets of the first element of row `row` of a nest: one division per outer
// dimension, for a thread that starts a row (CUDA: kernels/rows.hpp); the host walks rows instead
// (row_offsets).
CTFX_HD inline void row_start_offsets(const fused_nest& n, int operands, index_t row, index_t* off) {
  for (int o = 0; o < operands; ++o) off[o] = 0;
  for (int d = n.rank - 1; d >= 0; --d) {
    const index_t idx = row % n.size[d];
    row /= n.size[d];
    for (int o = 0; o < operands; ++o) off[o] += idx * n.stride[o][d];
  }
}

// The operands' offsets of element i of a nest (row-major over its collapsed dimensions): its
// row's start and one division by the row length, for a thread that computes one element (CUDA).
CTFX_HD inline void element_offsets(const fused_nest& n, int operands, index_t i, index_t* off) {
  const index_t row = i / n.inner;
  const index_t j = i - row * n.inner;
  row_start_offsets(n, operands, row, off);
  for (int o = 0; o < operands; ++o) off[o] += j * n.istride[o];
}

// Where an output's values start, for a fold over a nest that gives each output n consecutive
// values (kernels/warp_fold.hpp's `source`): the first value's index and, where the n values lie in
// one row of the nest (n divides the row's length), its offsets, found once, so that each value's
// are a step of the inner strides, with no division (fold_value_offsets).
struct fold_start {
  index_t first = 0;
  bool in_row = false;
  index_t off[max_fused_leaves + 1]{};
};
CTFX_HD inline fold_start fold_start_of(const fused_nest& n, int operands, index_t first, index_t values) {
  fold_start s;
  s.first = first;
  s.in_row = values > 0 && values <= n.inner && n.inner % values == 0;
  if (s.in_row) element_offsets(n, operands, first, s.off);
  return s;
}
// The operands' offsets of value r of an output that starts at s.
CTFX_HD inline void fold_value_offsets(const fused_nest& n, int operands, const fold_start& s, index_t r, index_t* off) {
  if (!s.in_row) return element_offsets(n, operands, s.first + r, off);
  for (int o = 0; o < operands; ++o) off[o] = s.off[o] + r * n.istride[o];
}

// The operands' offsets of consecutive rows of a nest: the first by one division per outer
// dimension, each next one by an odometer step (no division per row, which counts for short rows).
// The strides are stored dimension-major: a per-operand column of strides, gathered by the
// vectorizer into a vector after two scalar stores, stalled on store forwarding at every row (most
// of the time of short-row groups).
struct row_offsets {
  int rank, nop;
  index_t size[max_rank]{};
  index_t stride[max_rank][max_fused_leaves + 1]{};
  index_t idx[max_rank]{};
  index_t off[max_fused_leaves + 1]{};
  row_offsets(const fused_nest& n, int operands, index_t row) : rank(n.rank), nop(operands) {
    for (int d = 0; d < rank; ++d) {
      size[d] = n.size[d];
      for (int o = 0; o < nop; ++o) stride[d][o] = n.stride[o][d];
    }
    for (int d = rank - 1; d >= 0; --d) {
      idx[d] = row % size[d];
      row /= size[d];
      for (int o = 0; o < nop; ++o) off[o] += idx[d] * stride[d][o];
    }
  }
  void next() {
    for (int d = rank - 1; d >= 0; --d) {
      for (int o = 0; o < nop; ++o) off[o] += stride[d][o];
      if (++idx[d] < size[d]) return;
      for (int o = 0; o < nop; ++o) off[o] -= stride[d][o] * size[d];
      idx[d] = 0;
    }
  }
};

// Where a group's values go when they are not stored: a reduction folds each chunk of them as it is
// computed (kernels/fused_reduce.hpp), receiving them in row-major order of the loop domain.
struct chunk_sink {
  void* self = nullptr;
  void* (*reserve)(void* self, index_t n) = nullptr;  // where the last op writes the chunk's n values
  void (*commit)(void* self, index_t n) = nullptr;    // ... which are then in
};

// A group that is one loop (one op, a pair or a tree of ops: pair_ops) over unit-stride leaves, its
// result stored densely in its dtype: per row only the operands' pointers move, and the loop runs
// over the whole row, straight from the leaves into the destination (no chunk buffers). Rows are
// short when a run-time position or a broadcast keeps dimensions apart (RoPE's rows of a KV cache,
// 64 values each), and then the general walk's per-row bookkeeping cost as much as the arithmetic.
struct direct_loop {
  int arity = 0;                 // 1: fn, 2: fn2, 3: fn3
  std::int8_t leaf[4]{-1, -1, -1, -1};  // the loop's operands, as leaf indices (-1: a scalar)
  const fused_op* op = nullptr;
  // The group's direct loop, or arity 0 when it has none.
  static direct_loop of(const fused_kernel& k, const fused_nest& nest) {
    direct_loop d;
    if (k.n_ops == 0 || nest.istride[0] != 1) return d;
    for (int j = 0; j + 1 < k.n_ops; ++j)
      if (!k.ops[j].absorbed) return d;  // more than one loop
    const fused_op& o = k.ops[k.n_ops - 1];
    auto leaf_of = [&](fused_ref r, std::int8_t& slot) {
      if (r < max_fused_ops || nest.istride[r - max_fused_ops + 1] != 1) return false;
      slot = static_cast<std::int8_t>(r - max_fused_ops);
      return true;
    };
    bool ok;
    if (o.fn3) {
      const fused_op& p = k.ops[o.a];
      const fused_op& q = k.ops[o.b];
      ok = leaf_of(p.a, d.leaf[0]) && leaf_of(p.b, d.leaf[1]) && leaf_of(q.a, d.leaf[2]) && leaf_of(q.b, d.leaf[3]);
      d.arity = 3;
    } else if (o.fn2) {
      const fused_op& in = k.ops[o.inner];
      const bool right = o.b == o.inner;
      ok = leaf_of(in.a, d.leaf[0]) && (in.b < 0 || leaf_of(in.b, d.leaf[1])) &&
           (o.has_scalar || leaf_of(right ? o.a : o.b, d.leaf[2]));
      d.arity = 2;
    } else {
      ok = o.fn && !o.fnw && !o.load_a && !o.load_b && !o.store && leaf_of(o.a, d.leaf[0]) &&
           (o.b < 0 || leaf_of(o.b, d.leaf[1]));
      d.arity = 1;
    }
    if (!ok || o.out != k.out.dt) d.arity = 0;
    d.op = &o;
    return d;
  }
};

inline void run_direct_rows(const fused_kernel& k, const fused_nest& nest, const direct_loop& d, index_t r0, index_t r1) {
  const int nop = k.n_leaves + 1;
  const fused_op& o = *d.op;
  const scalar_value s1 = d.arity == 2 ? k.ops[o.inner].scalar : scalar_value{};
  // The loop's operands: the destination, then up to four leaves (null: a scalar), as byte
  // pointers at row r0 and, in a nest of one outer dimension, their byte steps per row.
  std::byte* p[5]{};
  index_t es[5]{};
  row_steps rs;
  index_t* const step = rs.step;
  const int leaf_of_arg[5] = {-1, d.leaf[0], d.leaf[1], d.leaf[2], d.leaf[3]};
  row_offsets w(nest, nop, r0);
  auto place = [&] {
    p[0] = k.out.p + w.off[0] * es[0];
    for (int i = 1; i < 5; ++i)
      if (const int l = leaf_of_arg[i]; l >= 0) p[i] = k.leaf[l].p + w.off[l + 1] * es[i];
  };
  es[0] = size_of(k.out.dt);
  for (int i = 1; i < 5; ++i)
    if (const int l = leaf_of_arg[i]; l >= 0) es[i] = size_of(k.leaf_dt[l]);
  if (nest.rank == 1) {
    step[0] = nest.stride[0][0] * es[0];
    for (int i = 1; i < 5; ++i)
      if (const int l = leaf_of_arg[i]; l >= 0) step[i] = nest.stride[l + 1][0] * es[i];
  }
  place();
  const index_t n = nest.inner;
  if (nest.rank == 1 && d.arity >= 2) {  // evenly spaced rows: one call runs them all
    rs.rows = r1 - r0;
    if (d.arity == 3) o.fn3(p[0], p[1], p[2], p[3], p[4], n, &rs);
    else o.fn2(p[0], p[1], p[2], p[3], s1, o.scalar, n, &rs);
    return;
  }
  for (index_t row = r0; row < r1; ++row) {
    if (nest.rank == 1) prefetch_row_ahead(p[0], step[0], row, nest.rows);
    if (d.arity == 3) o.fn3(p[0], p[1], p[2], p[3], p[4], n, nullptr);
    else if (d.arity == 2) o.fn2(p[0], p[1], p[2], p[3], s1, o.scalar, n, nullptr);
    else o.fn(p[0], p[1], p[2], o.scalar, n);
    if (nest.rank == 1) {
      for (int i = 0; i < 5; ++i) p[i] += step[i];
    } else {
      w.next();
      place();
    }
  }
}

// The host loop over rows [r0, r1), its values stored into k.out, or handed to `sink`. Its own
// loops (a broadcast value's fill, a strided operand's gather) vectorize at -O2 too (CTFX_VECTORIZE).
CTFX_VECTORIZE inline void run_fused_rows(const fused_kernel& k, const fused_nest& nest, index_t r0, index_t r1, const chunk_sink* sink = nullptr) {
  if (!sink) {
    const direct_loop d = direct_loop::of(k, nest);
    if (d.arity) {
      run_direct_rows(k, nest, d, r0, r1);
      return;
    }
  }
  // Chunks of 1,024 values (a reduction's sink takes fused_chunk at a time): each op's loop is a
  // call and an ISA dispatch per chunk, which over 256 values cost a third of the 8-op chain's
  // instructions (callgrind: 7.0 M against 4.6 M per 1 M values). Each of its buffers is 4–8 KiB
  // and an op's loop touches three or four, within L1; the frame is ~380 KiB of stack.
  constexpr index_t BM = 1024;
  const index_t B = sink ? fused_chunk : BM;
  alignas(64) std::byte val[max_fused_ops][BM * 8];     // each op's result, in its compute type
  alignas(64) std::byte elem[max_fused_ops][BM * 8];    // ... and in its dtype, when they differ
  alignas(64) std::byte leafbuf[max_fused_leaves][BM * 8];
  alignas(64) std::byte conv[3][BM * 8];
  alignas(64) std::byte outbuf[BM * 8];
  const int nop = k.n_leaves + 1;
  const bool dense_out = !sink && nest.istride[0] == 1;
  const int out_es = size_of(k.out.dt);
  row_offsets w(nest, nop, r0);
  const index_t* off = w.off;
  // Per row only what changes per row (rows are short when a broadcast operand keeps dimensions
  // from merging): unit-stride leaves are addressed in place, absorbed ops are skipped up front.
  int leaf_es[max_fused_leaves];
  bool leaf_unit[max_fused_leaves];
  for (int l = 0; l < k.n_leaves; ++l) {
    leaf_es[l] = size_of(k.leaf[l].dt);
    leaf_unit[l] = nest.istride[l + 1] == 1;
  }
  int run_ops[max_fused_ops];
  int n_run = 0;
  for (int j = 0; j < k.n_ops; ++j)
    if (!k.ops[j].absorbed) run_ops[n_run++] = j;  // the others are computed inside their reader's loop (pair_ops)
  // Op j's value in its dtype's element type: cleared once per call, not per chunk (each entry is
  // written before it is read; an absorbed op's result is read only inside its reader's loop).
  const void* res[max_fused_ops]{};
  for (index_t row = r0; row < r1; ++row, w.next()) {
    if (!sink && nest.rank == 1) prefetch_row_ahead(k.out.p + off[0] * out_es, nest.stride[0][0] * out_es, row, nest.rows);
    const void* leafp[max_fused_leaves];
    for (index_t c0 = 0; c0 < nest.inner; c0 += B) {
      const index_t n = nest.inner - c0 < B ? nest.inner - c0 : B;
      for (int l = 0; l < k.n_leaves; ++l) {
        if (leaf_unit[l]) {
          leafp[l] = k.leaf[l].p + (off[l + 1] + c0) * leaf_es[l];
          continue;
        }
        // A value broadcast along the row (softmax's row maximum) fills its buffer once per row.
        if (nest.istride[l + 1] == 0 && c0 > 0) continue;
        leafp[l] = detail::gather(k.leaf[l], off[l + 1] + c0 * nest.istride[l + 1], nest.istride[l + 1], n, leafbuf[l]);
      }
      std::byte* dst = dense_out ? k.out.p + (off[0] + c0 * nest.istride[0]) * out_es : nullptr;
      auto operand = [&](fused_ref r) { return r >= max_fused_ops ? leafp[r - max_fused_ops] : res[r]; };
      // The last op's values (in `target`), when they were not computed straight into a dense destination.
      auto emit = [&](const void* values) {
        if (sink) sink->commit(sink->self, n);
        else detail::scatter(k.out, off[0] + c0 * nest.istride[0], nest.istride[0], n, static_cast<const std::byte*>(values));
      };
      for (int jj = 0; jj < n_run; ++jj) {
        const int j = run_ops[jj];
        const fused_op& o = k.ops[j];
        const bool last = j == k.n_ops - 1;
        // Where the result goes: straight into the destination for the last op when it is dense,
        // or where the sink says.
        std::byte* target = !last ? elem[j] : sink ? static_cast<std::byte*>(sink->reserve(sink->self, n)) : dense_out ? dst : outbuf;
        if (o.fn3) {  // a tree: all operands f32, read in place
          const fused_op& p = k.ops[o.a];
          const fused_op& q = k.ops[o.b];
          o.fn3(target, operand(p.a), operand(p.b), operand(q.a), operand(q.b), n, nullptr);
          res[j] = target;
          if (last && !dense_out) emit(target);
          continue;
        }
        if (o.fnc) {  // a select with its comparison: all operands f32, read in place
          const fused_op& q = k.ops[o.inner];
          o.fnc(target, operand(q.a), q.has_scalar ? nullptr : operand(q.b), q.scalar, operand(o.a), operand(o.b), n);
          res[j] = target;
          if (last && !dense_out) emit(target);
          continue;
        }
        if (o.fn2) {  // a pair: all operands f32, read in place
          const fused_op& in = k.ops[o.inner];
          const bool right = o.b == o.inner;
          o.fn2(target, operand(in.a), in.b < 0 ? nullptr : operand(in.b),
                o.has_scalar ? nullptr : operand(right ? o.a : o.b), in.scalar, o.scalar, n, nullptr);
          res[j] = target;
          if (last && !dense_out) emit(target);
          continue;
        }
        const void* a = operand(o.a);
        if (o.load_a) { o.load_a(conv[0], a, n); a = conv[0]; }
        const void* b = nullptr;
        if (o.b >= 0) {
          b = operand(o.b);
          if (o.load_b) { o.load_b(conv[1], b, n); b = conv[1]; }
        }
        if (o.k == op_kind::copy && !o.store && !o.load_a) {  // same representation: no arithmetic
          if (last) std::memcpy(target, a, static_cast<std::size_t>(n) * size_of(o.out));
          res[j] = last ? target : a;
        } else {
          const void* computed = a;
          if (o.fn || o.fnw || o.fnf) {
            void* cv = o.store ? static_cast<void*>(val[j]) : static_cast<void*>(target);
            if (o.fnw) o.fnw(cv, operand(o.c), a, b, n);
            else if (o.fnf) {
              const void* c = operand(o.c);
              if (o.load_c) { o.load_c(conv[2], c, n); c = conv[2]; }
              o.fnf(cv, a, b, c, n);
            } else o.fn(cv, a, b, o.scalar, n);
            computed = cv;
          }
          if (o.store) {
            o.store(target, computed, n);
            res[j] = target;
          } else if (!o.fn && !o.fnw && !o.fnf) {  // a conversion whose result type is the compute type
            std::memcpy(target, computed, static_cast<std::size_t>(n) * size_of(o.out));
            res[j] = target;
          } else {
            res[j] = computed;
          }
        }
        if (last && !dense_out) emit(res[j]);
      }
    }
  }
}

// R values of an operand in fused_elem_fn::values_at: the t-th at p + t * step bytes, of dtype dt.
struct value_run {
  const std::byte* p;
  index_t step;
  dtype dt;
};
// x[t] = run's value t as C, for t < m (m <= R): the dtype dispatched once for the R.
template <int R, class C>
CTFX_HD inline void load_values(const value_run& a, int m, C* x) {
  visit_dtype(a.dt, [&](auto sd) {
    constexpr dtype S = decltype(sd)::value;
    for (int t = 0; t < R; ++t)
      if (t < m) x[t] = load_as<S, C>(a.p + t * a.step);
  });
}
// to[t] = x[t] stored as dtype d, for t < m.
template <int R, class C>
CTFX_HD inline void store_values(const C* x, dtype d, int m, std::byte (*to)[8]) {
  visit_dtype(d, [&](auto dd) {
    constexpr dtype D = decltype(dd)::value;
    for (int t = 0; t < R; ++t)
      if (t < m) store_as<D, C>(to[t], x[t]);
  });
}

// The group evaluated from its program (CUDA's runtime_plan kernels; the host's cross-check in
// tests): at element i of its domain (operator()), at one element's operands (value_at, a fused
// reduction's fold), or at R elements at once (values_at, fused_row_fn's rows). The operands'
// offsets come from the kernel's collapsed nest: one division per collapsed dimension gives all
// of them, not one per dimension for each operand.
struct fused_elem_fn {
  fused_kernel k;
  fused_nest nest;
  fused_elem_fn() = default;
  explicit fused_elem_fn(const fused_kernel& kernel) : k(kernel), nest(make_nest(kernel)) {}
  fused_elem_fn(const fused_kernel& kernel, const fused_nest& made) : k(kernel), nest(made) {}  // made: make_nest(kernel)
  CTFX_HD void operator()(index_t i) const {
    index_t off[max_fused_leaves + 1];
    element_offsets(nest, k.n_leaves + 1, i, off);
    alignas(8) std::byte v[8];
    value_at(off, v);
    std::memcpy(k.out.p + off[0] * size_of(k.out.dt), v, static_cast<std::size_t>(size_of(k.out.dt)));
  }
  // The last op's value, in its dtype, at the element of the loop domain (k.out's extents) whose
  // operands' offsets are off[1 + l] (off[0]: the destination's).
  CTFX_HD void value_at(const index_t* off, std::byte* result) const {
    const std::byte* leafp[max_fused_leaves];
    const index_t step[max_fused_leaves]{};
    for (int l = 0; l < k.n_leaves; ++l) leafp[l] = k.leaf[l].p + off[1 + l] * size_of(k.leaf[l].dt);
    alignas(8) std::byte v[1][8];
    values_at<1>(leafp, step, 1, v);
    std::memcpy(result, v[0], 8);
  }
  // The last op's values at m <= R elements, each in its dtype into result[t]: leaf l's t-th
  // operand at leafp[l] + t * lstep[l] bytes. Each op dispatches on its dtypes and its kind once
  // for the R elements, then loops over them with both fixed: with R > 1 no switch runs per
  // element. Each op computes as its unfused kernel: in compute_t of its result's dtype (of its
  // operands' promoted dtype, cdt, for a bool result), rounded to its dtype after the op.
  template <int R>
  CTFX_NOINLINE CTFX_HD void values_at(const std::byte* const* leafp, const index_t* lstep, int m, std::byte (*result)[8]) const {
    alignas(8) std::byte v[max_fused_ops][R][8];
    auto run_of = [&](fused_ref r) -> value_run {
      if (r >= max_fused_ops) return {leafp[r - max_fused_ops], lstep[r - max_fused_ops], k.leaf_dt[r - max_fused_ops]};
      return {v[r][0], 8, k.ops[r].out};
    };
    for (int j = 0; j < k.n_ops; ++j) {
      const fused_op& o = k.ops[j];
      const value_run a = run_of(o.a);
      if (o.k == op_kind::copy) {  // a conversion, as kernels::copy: through double, or int64 between integers
        auto convert = [&](auto c) {
          using C = decltype(c);
          C x[R]{};
          load_values<R>(a, m, x);
          store_values<R>(x, o.out, m, v[j]);
        };
        if (is_floating(a.dt) || is_floating(o.out)) convert(double{});
        else convert(std::int64_t{});
        continue;
      }
      visit_compute(yields_bool(o.k) ? o.cdt : o.out, [&](auto c) {
        using C = decltype(c);
        C x[R]{};
        load_values<R>(a, m, x);
        if (o.k == op_kind::fma) {  // a * b + c rounded once, each operand in the compute type
          C y[R]{}, z[R]{};
          load_values<R>(run_of(o.b), m, y);
          load_values<R>(run_of(o.c), m, z);
          for (int t = 0; t < R; ++t)
            if (t < m) x[t] = fma_value<C>(x[t], y[t], z[t]);
        } else if (o.c >= 0) {  // where: the condition is bool elements
          C y[R]{};
          load_values<R>(run_of(o.b), m, y);
          const value_run cond = run_of(o.c);
          for (int t = 0; t < R; ++t)
            if (t < m) x[t] = *reinterpret_cast<const std::uint8_t*>(cond.p + t * cond.step) ? x[t] : y[t];
        } else if (is_unary(o.k)) {
          visit_unary_kind(o.k, [&](auto kk) {
            for (int t = 0; t < R; ++t)
              if (t < m) x[t] = unary_value<C>(decltype(kk)::value, x[t]);
          });
        } else if (o.b >= 0) {
          C y[R]{};
          load_values<R>(run_of(o.b), m, y);
          visit_binary_kind(o.k, [&](auto kk) {
            for (int t = 0; t < R; ++t)
              if (t < m) x[t] = binary_value<C>(decltype(kk)::value, x[t], y[t]);
          });
        } else {
          const C y = o.scalar.as<C>();
          visit_binary_kind(o.k, [&](auto kk) {
            for (int t = 0; t < R; ++t)
              if (t < m) x[t] = scalar_binary_value<C>(decltype(kk)::value, x[t], y);
          });
        }
        store_values<R>(x, yields_bool(o.k) ? dtype::b8 : o.out, m, v[j]);
      });
    }
    for (int t = 0; t < m; ++t) std::memcpy(result[t], v[k.n_ops - 1][t], 8);
  }
};

// The group's rows on CUDA (kernels/rows.hpp): a thread finds its row's offsets once per segment,
// then steps each operand by its inner stride, so no element costs a division. Its elements j,
// j + lanes, ... are evaluated `per_dispatch` at a time (fused_elem_fn::values_at): the plan's
// dtypes and ops are run-time values here, dispatched once for those, not once per element.
struct fused_row_fn {
  static constexpr int width = 1;
  static constexpr int per_dispatch = 4;
  fused_elem_fn e;
  CTFX_HD void operator()(index_t r, index_t j0, index_t j1, int lane, int lanes) const {
    constexpr int R = per_dispatch;
    const fused_kernel& k = e.k;
    index_t start[max_fused_leaves + 1];
    row_start_offsets(e.nest, k.n_leaves + 1, r, start);
    const std::byte* leafp[max_fused_leaves];
    index_t lstep[max_fused_leaves];
    for (int l = 0; l < k.n_leaves; ++l) lstep[l] = lanes * e.nest.istride[l + 1] * size_of(k.leaf[l].dt);
    const index_t osize = size_of(k.out.dt), ostep = lanes * e.nest.istride[0] * osize;
    for (index_t j = j0 + lane; j < j1; j += R * lanes) {
      const index_t left = (j1 - j + lanes - 1) / lanes;  // this lane's elements from j on
      const int m = left < R ? static_cast<int>(left) : R;
      for (int l = 0; l < k.n_leaves; ++l) leafp[l] = k.leaf[l].p + (start[l + 1] + j * e.nest.istride[l + 1]) * size_of(k.leaf[l].dt);
      alignas(8) std::byte v[R][8];
      e.values_at<R>(leafp, lstep, m, v);
      std::byte* out = k.out.p + (start[0] + j * e.nest.istride[0]) * osize;
      visit_bits_dtype(k.out.dt, [&](auto bd) {
        using E = element_t<decltype(bd)::value>;
        for (int t = 0; t < R; ++t)
          if (t < m) std::memcpy(out + t * ostep, v[t], sizeof(E));
      });
    }
  }
};

// Elements [j0, j1) of a nest of one row (every operand collapsed into one run): the kernel with
// each operand's pointer moved to element j0, and the nest shortened to j1 - j0.
inline void narrow_row(fused_operands& k, fused_nest& nest, index_t j0, index_t j1) {
  k.out.p += j0 * nest.istride[0] * size_of(k.out.dt);
  for (int l = 0; l < k.n_leaves; ++l) k.leaf[l].p += j0 * nest.istride[l + 1] * size_of(k.leaf[l].dt);
  nest.inner = j1 - j0;
}

// On the OMP backend: part(kernel, nest, first row, end row) per thread, over its share of the
// rows, or, when the nest is one row (a dense group), over its share of that row (a row shorter
// than 8,192 elements stays on one thread). False: nothing ran (another backend, or too small).
// K: fused_kernel, or fused_operands for a typed kernel.
template <class K, class Part>
bool split_for_threads(const device_ctx& ctx, const K& k, const fused_nest& nest, Part&& part) {
#if defined(_OPENMP)
  if (ctx.where != backend::omp || (nest.rows == 1 && nest.inner < 8192)) return false;
  if (nest.rows > 1) {
#pragma omp parallel
    {
      const index_t t = omp_get_thread_num(), T = omp_get_num_threads();
      part(k, nest, nest.rows * t / T, nest.rows * (t + 1) / T);
    }
    return true;
  }
#pragma omp parallel
  {
    const index_t t = omp_get_thread_num(), T = omp_get_num_threads();
    K kt = k;
    fused_nest nt = nest;
    narrow_row(kt, nt, nest.inner * t / T, nest.inner * (t + 1) / T);
    if (nt.inner > 0) part(kt, nt, 0, 1);
  }
  return true;
#else
  (void)ctx;
  (void)k;
  (void)nest;
  (void)part;
  return false;
#endif
}

// Runs the group on the context's backend, over `nest` (make_nest(k): a plan without symbols makes
// it once, when the plan is made; a CUDA thread finds its element's offsets from its own copy).
inline void run_fused(const device_ctx& ctx, const fused_kernel& k, const fused_nest& nest) {
  const index_t n = k.out.numel();
  if (n == 0) return;
  if constexpr (device_kernels_compiled) {
    if (runs_device_kernels(ctx)) {
      parallel_rows(ctx, nest.rows, nest.inner, fused_row_fn{fused_elem_fn{k, nest}});
      return;
    }
  }
  auto part = [](const fused_kernel& kt, const fused_nest& nt, index_t r0, index_t r1) { run_fused_rows(kt, nt, r0, r1); };
  if (!split_for_threads(ctx, k, nest, part)) run_fused_rows(k, nest, 0, nest.rows);
}
inline void run_fused(const device_ctx& ctx, const fused_kernel& k) {
  if (k.out.numel() == 0) return;
  run_fused(ctx, k, make_nest(k));
}

// A binary op outside any group (a list op's element: _foreach_add, _foreach_mul) as a group of one
// op: a op b, or a op scalar, computed in out's compute type. binary_op resolves it from dtypes
// known at run time; binary_op_typed from dtypes known where it is compiled, naming its chunk
// loops directly (resolve's tables hold one loop per op and type).
inline fused_op binary_op(op_kind k, dtype out, dtype a, const dtype* b, scalar_value scalar) {
  fused_op o;
  o.k = k;
  o.out = o.cdt = out;
  o.a = leaf_ref(0);
  if (b) o.b = leaf_ref(1);
  else { o.has_scalar = true; o.scalar = scalar; }
  resolve(o, a, b ? *b : out);
  return o;
}
template <op_kind K, dtype O, dtype A, dtype B, bool Scalar>
fused_op binary_op_typed(scalar_value scalar) {
  static_assert(is_binary(K) && !yields_bool(K), "ctfx: binary_op_typed computes in its result's type");
  using C = compute_t<O>;
  fused_op o;
  o.k = K;
  o.out = o.cdt = O;
  o.a = leaf_ref(0);
  if constexpr (Scalar) { o.has_scalar = true; o.scalar = scalar; }
  else o.b = leaf_ref(1);
  o.cidx = static_cast<std::int8_t>(compute_index_of(o, A));
  if constexpr (!stores_as<C>(A)) o.load_a = &load_chunk<A, C>;
  if constexpr (!Scalar && !stores_as<C>(B)) o.load_b = &load_chunk<B, C>;
  if constexpr (Scalar) o.fn = &binary_scalar_chunk<K, C>;
  else o.fn = &binary_chunk<K, C>;
  if constexpr (!stores_as<C>(O)) o.store = &store_chunk<O, C>;
  return o;
}
// Runs such an op into out (a and b broadcast to out's extents; b null with a scalar).
inline void run_binary(const device_ctx& ctx, const fused_op& o, const strided& out, const strided& a, const strided* b) {
  fused_kernel k;
  k.ops[0] = o;
  k.n_ops = 1;
  k.out = out;
  k.n_leaves = b ? 2 : 1;
  k.leaf[0] = a.broadcast_to(out.rank, out.size);
  k.leaf_dt[0] = a.dt;
  if (b) {
    k.leaf[1] = b->broadcast_to(out.rank, out.size);
    k.leaf_dt[1] = b->dt;
  }
  run_fused(ctx, k);
}

}  // namespace ctfx::kernels
#include "../core/diagnostics_pop.hpp"
