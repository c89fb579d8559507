// The CUDA backend's row kernels (kernels/rows.hpp), run on the host lane after lane as a block's
// threads run them: a compiled group's typed rows (static_row_fn: vectors where a row's operands
// are aligned for them, elements one by one elsewhere) and a runtime_plan group's interpreted rows
// (fused_row_fn), each against the host's loops, bit for bit, on layouts that take each path.
#include <doctest/doctest.h>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/kernels/fused.hpp>
#include <ctfx/kernels/fused_static.hpp>
#include <ctfx/kernels/rows.hpp>

namespace {

using ctfx::dtype;
using ctfx::index_t;
namespace k = ctfx::kernels;

// out = x * f32(h) + z: x, z f32, h f16, out of dtype O.
template <dtype O>
using xhz = k::op_x<ctfx::op_kind::add, O, O, 0, false,
                    k::op_x<ctfx::op_kind::mul, dtype::f32, dtype::f32, 0, false, k::leaf_x<0, dtype::f32>,
                            k::op_x<ctfx::op_kind::convert, dtype::f32, dtype::f16, 0, false, k::leaf_x<1, dtype::f16>>>,
                    k::leaf_x<2, dtype::f32>>;

std::vector<float> values(std::size_t n, float scale) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 37 + 11) % 101) * scale - 7.0f;
  return v;
}

// Buffers with room before them, so that a layout can start at any element of its 64-byte line.
template <class T>
struct buffer {
  std::vector<T> v;
  explicit buffer(std::size_t n) : v(n + 64) {}
  T* at(std::size_t first) { return v.data() + first; }
};

// The operands of one group: their views, broadcast to the destination's [R, C].
struct layouts {
  ctfx::strided out, x, h, z;
};

// The group run by static_row_fn as the CUDA kernel runs it (segments of `seg` elements, `lanes`
// lanes each, one after the other), into `out`; and each element computed by hand (the group's ops
// in f32, rounded as the unfused graph stores them).
template <dtype O>
void check_rows(const layouts& L, index_t seg, int lanes) {
  k::fused_operands ops;
  ops.out = L.out;
  ops.n_leaves = 3;
  ops.leaf[0] = L.x;
  ops.leaf[1] = L.h;
  ops.leaf[2] = L.z;
  k::static_row_fn<xhz<O>, O, dtype::f32, dtype::f16, dtype::f32> f{};
  f.nest = k::make_nest(ops);
  f.leaf[0] = L.x.p;
  f.leaf[1] = L.h.p;
  f.leaf[2] = L.z.p;
  f.out = L.out.p;
  k::rows_as_on_device(f.nest.rows, f.nest.inner, seg, lanes, f);
  const index_t R = L.out.size[0], C = L.out.size[1];
  int wrong = 0;
  for (index_t i = 0; i < R; ++i)
    for (index_t j = 0; j < C; ++j) {
      auto at = [&](const ctfx::strided& s) { return s.p + (i * s.stride[0] + j * s.stride[1]) * ctfx::size_of(s.dt); };
      float x, z;
      ctfx::half_t h;
      std::memcpy(&x, at(L.x), 4);
      std::memcpy(&h, at(L.h), 2);
      std::memcpy(&z, at(L.z), 4);
      const float want = x * static_cast<float>(h) + z;
      ctfx::element_t<O> e;
      ctfx::store_as<O, float>(&e, want);
      wrong += std::memcmp(at(L.out), &e, sizeof e) != 0;
    }
  CHECK_MESSAGE(wrong == 0, "segments of " << seg << ", lanes " << lanes << ": " << wrong << " of " << R * C << " elements differ");
}

ctfx::strided view2(void* p, dtype dt, index_t R, index_t C, index_t s0, index_t s1) {
  return ctfx::strided{reinterpret_cast<std::byte*>(p), dt, 2, {R, C}, {s0, s1}};
}

}  // namespace

TEST_CASE("rows: a block's lanes per row: enough for the row's vectors, a power of two, at most the block") {
  CHECK(k::row_lanes(1, 4, 256) == 1);
  CHECK(k::row_lanes(64, 4, 256) == 16);  // RoPE's halves: 16 vectors of 4 floats
  CHECK(k::row_lanes(65, 4, 256) == 32);
  CHECK(k::row_lanes(1026, 4, 256) == 256);
  CHECK(k::row_lanes(1 << 24, 1, 256) == 256);
  // A long row is cut into segments of 8 vectors per thread of a block: a dense 16 M floats (one
  // collapsed row) spreads over 2,048 segments; a 64-float row stays whole.
  const k::row_launch dense = k::row_launch_of(index_t{1} << 24, 4, k::row_segment(4));
  CHECK(dense.seg == 8192);
  CHECK(dense.segs_per_row == 2048);
  CHECK(dense.lanes == 256);
  const k::row_launch rope = k::row_launch_of(64, 4, k::row_segment(4));
  CHECK((rope.seg == 64 && rope.segs_per_row == 1 && rope.lanes == 16));
  const k::row_part last = k::segment_of(2 * 3 + 2, 3, 20, 8);  // rows of 20 in segments of 8: row 2's last
  CHECK((last.r == 2 && last.j0 == 16 && last.j1 == 20));
  CHECK(k::static_row_fn<xhz<dtype::f32>, dtype::f32, dtype::f32, dtype::f16, dtype::f32>::width == 4);
  CHECK(k::static_row_fn<xhz<dtype::f16>, dtype::f16, dtype::f32, dtype::f16, dtype::f32>::width == 4);
  using halves = k::op_x<ctfx::op_kind::neg, dtype::f16, dtype::f16, 0, false, k::leaf_x<0, dtype::f16>>;
  CHECK(k::static_row_fn<halves, dtype::f16, dtype::f16>::width == 8);  // 16 bytes of f16
  using doubles = k::op_x<ctfx::op_kind::neg, dtype::f64, dtype::f64, 0, false, k::leaf_x<0, dtype::f64>>;
  CHECK(k::static_row_fn<doubles, dtype::f64, dtype::f64>::width == 2);
}

TEST_CASE("rows: a compiled group's CUDA rows give the host's bits on every path (vectors, broadcasts, strides, misaligned rows)") {
  for (const index_t C : {index_t{64}, index_t{37}, index_t{3}, index_t{1030}}) {
    const index_t R = 9;
    buffer<float> x(R * C), z(R * C), zcol(R), out(R * C);
    buffer<ctfx::half_t> h(R * C), out16(R * C);
    const auto xv = values(x.v.size(), 0.37f), zv = values(z.v.size(), -0.11f);
    std::copy(xv.begin(), xv.end(), x.v.begin());
    std::copy(zv.begin(), zv.end(), z.v.begin());
    std::copy(zv.begin(), zv.begin() + static_cast<long>(zcol.v.size()), zcol.v.begin());
    for (std::size_t i = 0; i < h.v.size(); ++i) h.v[i] = ctfx::half_t(static_cast<float>(i % 13) * 0.25f - 1.0f);
    CAPTURE(C);
    for (const auto& cut : {std::pair<index_t, int>{k::row_segment(4), 1}, {k::row_segment(4), 32}, {k::row_segment(4), 256}, {8, 3}, {12, 2}}) {
      const index_t seg = cut.first;
      const int lanes = cut.second;  // (not structured bindings: clang 14's CAPTURE cannot take them)
      CAPTURE(seg);
      CAPTURE(lanes);
      // dense, aligned: every row in vectors when its length keeps the rows aligned
      layouts dense{view2(out.at(16), dtype::f32, R, C, C, 1), view2(x.at(16), dtype::f32, R, C, C, 1),
                    view2(h.at(32), dtype::f16, R, C, C, 1), view2(z.at(16), dtype::f32, R, C, C, 1)};
      check_rows<dtype::f32>(dense, seg, lanes);
      // z broadcast along the rows (a column [R, 1]), x read transposed from a [C, R] buffer
      layouts bcast{view2(out.at(16), dtype::f32, R, C, C, 1), view2(x.at(16), dtype::f32, R, C, C, 1),
                    view2(h.at(32), dtype::f16, R, C, C, 1), view2(zcol.at(16), dtype::f32, R, C, 1, 0)};
      check_rows<dtype::f32>(bcast, seg, lanes);
      layouts transposed{view2(out.at(16), dtype::f32, R, C, C, 1), view2(x.at(16), dtype::f32, R, C, 1, R),
                         view2(h.at(32), dtype::f16, R, C, C, 1), view2(z.at(16), dtype::f32, R, C, C, 1)};
      check_rows<dtype::f32>(transposed, seg, lanes);
      // an operand one element past its line's start: no row in vectors
      layouts shifted{view2(out.at(16), dtype::f32, R, C, C, 1), view2(x.at(17), dtype::f32, R, C, C, 1),
                      view2(h.at(32), dtype::f16, R, C, C, 1), view2(z.at(16), dtype::f32, R, C, C, 1)};
      check_rows<dtype::f32>(shifted, seg, lanes);
      // an f16 destination (stored 8 bytes at a time)
      layouts halves{view2(out16.at(32), dtype::f16, R, C, C, 1), view2(x.at(16), dtype::f32, R, C, C, 1),
                     view2(h.at(32), dtype::f16, R, C, C, 1), view2(z.at(16), dtype::f32, R, C, C, 1)};
      check_rows<dtype::f16>(halves, seg, lanes);
    }
  }
}

TEST_CASE("rows: which rows a compiled group runs in vectors") {
  const index_t R = 8;
  auto fn = [&](index_t C, index_t xfirst, index_t xs0, index_t xs1, index_t zs0, index_t zs1) {
    static buffer<float> x(8 * 1030), z(8 * 1030), out(8 * 1030);
    static buffer<ctfx::half_t> h(8 * 1030);
    k::fused_operands ops;
    ops.out = view2(out.at(16), dtype::f32, R, C, C, 1);
    ops.n_leaves = 3;
    ops.leaf[0] = view2(x.at(static_cast<std::size_t>(xfirst)), dtype::f32, R, C, xs0, xs1);
    ops.leaf[1] = view2(h.at(32), dtype::f16, R, C, C, 1);
    ops.leaf[2] = view2(z.at(16), dtype::f32, R, C, zs0, zs1);
    k::static_row_fn<xhz<dtype::f32>, dtype::f32, dtype::f32, dtype::f16, dtype::f32> f{};
    f.nest = k::make_nest(ops);
    for (int l = 0; l < 3; ++l) f.leaf[l] = ops.leaf[l].p;
    f.out = ops.out.p;
    std::vector<bool> v;
    for (index_t r = 0; r < f.nest.rows; ++r) v.push_back(f.vector_row(r));
    return v;
  };
  // [8, 64] dense: collapsed into one row of 512, in vectors
  CHECK(fn(64, 16, 64, 1, 64, 1) == std::vector<bool>{true});
  // [8, 64] with z a broadcast column: 8 rows, each in vectors
  CHECK(fn(64, 16, 64, 1, 1, 0) == std::vector<bool>(8, true));
  // [8, 6] with z a broadcast column: rows start 6 floats apart, so every other row is aligned to 16 bytes
  CHECK(fn(6, 16, 6, 1, 1, 0) == std::vector<bool>{true, false, true, false, true, false, true, false});
  // x read transposed: no row at unit stride
  CHECK(fn(64, 16, 1, 8, 1, 0) == std::vector<bool>(8, false));
  // x one float past alignment
  CHECK(fn(64, 17, 64, 1, 64, 1) == std::vector<bool>{false});
}

TEST_CASE("rows: a runtime_plan group's CUDA rows (fused_row_fn) give the host's bits") {
  for (const index_t C : {index_t{64}, index_t{37}, index_t{1}}) {
    const index_t R = 7;
    std::vector<float> x(static_cast<std::size_t>(R * C)), y(static_cast<std::size_t>(C)), o1(x.size()), o2(x.size());
    const auto xv = values(x.size(), 0.41f), yv = values(y.size(), 0.13f);
    std::copy(xv.begin(), xv.end(), x.begin());
    std::copy(yv.begin(), yv.end(), y.begin());
    // exp(x - y) * 0.5 with y broadcast along the rows' first dimension
    k::fused_kernel g;
    g.n_leaves = 2;
    g.leaf_dt[0] = g.leaf_dt[1] = dtype::f32;
    g.leaf[0] = view2(x.data(), dtype::f32, R, C, C, 1);
    g.leaf[1] = view2(y.data(), dtype::f32, R, C, 0, 1);
    g.n_ops = 3;
    g.ops[0] = {ctfx::op_kind::sub, dtype::f32, k::leaf_ref(0), k::leaf_ref(1)};
    g.ops[1] = {ctfx::op_kind::exp, dtype::f32, 0};
    g.ops[2] = {ctfx::op_kind::mul, dtype::f32, 1, -1, true, 0.5};
    for (int j = 0; j < g.n_ops; ++j) k::resolve(g.ops[j], dtype::f32, dtype::f32);
    g.out = view2(o1.data(), dtype::f32, R, C, C, 1);
    k::run_fused(ctfx::device_ctx{}, g);
    for (const int lanes : {1, 5, 64}) {
      std::fill(o2.begin(), o2.end(), -1.0f);
      g.out.p = reinterpret_cast<std::byte*>(o2.data());
      const k::fused_row_fn f{k::fused_elem_fn{g}};
      k::rows_as_on_device(f.e.nest.rows, f.e.nest.inner, 5, lanes, f);  // segments of 5 elements
      CHECK_MESSAGE(std::memcmp(o1.data(), o2.data(), o1.size() * 4) == 0, "C " << C << ", lanes " << lanes);
    }
    g.out.p = reinterpret_cast<std::byte*>(o2.data());
    std::fill(o2.begin(), o2.end(), -1.0f);
    k::parallel_rows(ctfx::device_ctx{}, make_nest(g).rows, make_nest(g).inner, k::fused_row_fn{k::fused_elem_fn{g}});
    CHECK(std::memcmp(o1.data(), o2.data(), o1.size() * 4) == 0);
  }
}

TEST_CASE("rows: CUDA's copy and fill rows give the host's bits (vectors between equal dtypes, conversions, strides, broadcasts)") {
  constexpr index_t R = 6, C = 37;
  std::vector<float> src(R * C + 64);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) * 0.37f - 5.0f;
  std::uint32_t nan_bits = 0x7fa00001u;  // a signalling NaN: a copy moves its bits unchanged
  std::memcpy(&src[13], &nan_bits, 4);
  auto f32r = [&](void* p, index_t s0, index_t s1, index_t rows, index_t cols) { return view2(p, dtype::f32, rows, cols, s0, s1); };
  auto f32 = [&](void* p, index_t s0, index_t s1) { return view2(p, dtype::f32, R, C, s0, s1); };
  for (const int lanes : {1, 4, 32}) {
    CAPTURE(lanes);
    std::vector<float> a(R * C + 64, -1.0f), b(a.size(), -1.0f);
    auto run = [&](auto fn, const ctfx::strided& out_a, const ctfx::strided& out_b, const ctfx::strided& s) {
      std::fill(a.begin(), a.end(), -1.0f);
      std::fill(b.begin(), b.end(), -1.0f);
      ctfx::kernels::copy_typed<dtype::f32, dtype::f32>(ctfx::device_ctx{}, out_a, s);  // the host's
      const index_t inner = out_b.rank == 0 ? 1 : out_b.size[out_b.rank - 1];
      const auto f = fn(out_b, s.broadcast_to(out_b.rank, out_b.size));
      k::rows_as_on_device(out_b.numel() / inner, inner, 8, lanes, f);  // segments of 2 vectors
      return std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
    };
    auto rows_fn = [](const ctfx::strided& o, const ctfx::strided& s) { return k::copy_row_fn<dtype::f32, dtype::f32>{o, s}; };
    // dense rows of 37 floats: vectors where a row's start is aligned in both
    CHECK(run(rows_fn, f32(a.data() + 16, C, 1), f32(b.data() + 16, C, 1), f32(src.data() + 16, C, 1)));
    // rows of 36, both aligned: every row in vectors; the source one float off: none
    CHECK(run(rows_fn, f32r(a.data() + 16, C, 1, R, 36), f32r(b.data() + 16, C, 1, R, 36), f32r(src.data() + 16, C, 1, R, 36)));
    CHECK(run(rows_fn, f32r(a.data() + 16, C, 1, R, 36), f32r(b.data() + 16, C, 1, R, 36), f32r(src.data() + 17, C, 1, R, 36)));
    // a transposed source, a column written, one row broadcast down the rows
    CHECK(run(rows_fn, f32(a.data(), C, 1), f32(b.data(), C, 1), f32(src.data(), 1, R)));
    CHECK(run(rows_fn, f32r(a.data() + 3, C, 1, R, 1), f32r(b.data() + 3, C, 1, R, 1), f32r(src.data(), 1, 0, R, 1)));
    CHECK(run(rows_fn, f32(a.data(), C, 1), f32(b.data(), C, 1), f32(src.data() + 8, 0, 1)));
    CHECK(std::memcmp(&b[5], &nan_bits, 4) == 0);  // the NaN (src[8 + 5], broadcast down the rows) moved bit for bit
  }
  // f32 -> f16 and i32 -> f64 conversions, element by element
  std::vector<ctfx::half_t> h1(R * C), h2(R * C);
  k::copy_typed<dtype::f32, dtype::f16>(ctfx::device_ctx{}, view2(h1.data(), dtype::f16, R, C, C, 1), f32(src.data(), C, 1));
  const k::copy_row_fn<dtype::f32, dtype::f16> fh{view2(h2.data(), dtype::f16, R, C, C, 1), f32(src.data(), C, 1)};
  k::rows_as_on_device(R, C, k::row_segment(4), 8, fh);
  CHECK(std::memcmp(h1.data(), h2.data(), h1.size() * 2) == 0);
  std::vector<std::int32_t> iv(R * C);
  for (std::size_t i = 0; i < iv.size(); ++i) iv[i] = static_cast<std::int32_t>(i * 7919 % 1000) - 500;
  std::vector<double> d1(R * C), d2(R * C);
  k::copy_typed<dtype::i32, dtype::f64>(ctfx::device_ctx{}, view2(d1.data(), dtype::f64, C, R, 1, C), view2(iv.data(), dtype::i32, C, R, R, 1));
  const k::copy_row_fn<dtype::i32, dtype::f64> fd{view2(d2.data(), dtype::f64, C, R, 1, C), view2(iv.data(), dtype::i32, C, R, R, 1)};
  k::rows_as_on_device(C, R, 2, 2, fd);
  CHECK(std::memcmp(d1.data(), d2.data(), d1.size() * 8) == 0);
  // fills: every element of a strided view, nothing else
  std::vector<float> z(R * C, 1.0f);
  const k::fill_row_fn<dtype::f32> fill{f32r(z.data() + 1, C, 2, R, 18), -2.5};
  k::rows_as_on_device(R, 18, 5, 3, fill);
  int filled = 0, kept = 0;
  for (index_t i = 0; i < R; ++i)
    for (index_t j = 0; j < C; ++j) {
      const bool in = j >= 1 && (j - 1) % 2 == 0 && (j - 1) / 2 < 18;
      filled += in && z[static_cast<std::size_t>(i * C + j)] == -2.5f;
      kept += !in && z[static_cast<std::size_t>(i * C + j)] == 1.0f;
    }
  CHECK(filled == R * 18);
  CHECK(kept == R * (C - 18));
}

// Every elementwise kind, in every dtype, through the interpreter's rows (fused_row_fn: each op
// dispatched once for four elements, then the tail) against the host's chunk loops. Each group is
// the op followed by its value converted to f64, so both an operand's read from a leaf and from an
// op's value are covered, and the op's rounding to its own dtype shows in the result.
TEST_CASE("rows: the interpreter, four elements per dispatch, gives the host's bits for every elementwise kind and dtype") {
  using ctfx::op_kind;
  constexpr index_t n = 11;  // two lanes: 6 and 5 elements, a dispatch of four and a tail each
  const double xs[n] = {-2.5, 0.0, -0.0, 1.0, 3.0, __builtin_nan(""), __builtin_inf(), -7.25, 0.5, 2.0, -1.0};
  const double ys[n] = {2.0, -3.0, 0.0, __builtin_nan(""), 0.5, 1.0, -2.0, 4.0, -0.0, 3.0, -1.0};
  auto filled = [](dtype dt, const double* v) {
    std::vector<std::byte> b(static_cast<std::size_t>(n) * 8);
    ctfx::visit_dtype(dt, [&](auto dd) {
      constexpr dtype D = decltype(dd)::value;
      for (index_t i = 0; i < n; ++i) ctfx::store_as<D, double>(b.data() + i * ctfx::size_of(D), v[i]);
    });
    return b;
  };
  auto line = [](void* p, dtype dt) { return ctfx::strided{static_cast<std::byte*>(p), dt, 1, {n}, {1}}; };
  int checked = 0;
  for (const dtype dt : {dtype::f32, dtype::f64, dtype::f16, dtype::bf16, dtype::i32, dtype::i64, dtype::i8, dtype::b8}) {
    auto x = filled(dt, xs), y = filled(dt, ys), cond = filled(dtype::b8, ys);
    // (kind, operands: 1 unary, 2 tensor, 3 scalar, 4 where, 5 conversion from dt, 6 fma(x, y, x))
    std::vector<std::pair<op_kind, int>> cases;
    for (int i = static_cast<int>(op_kind::neg); i <= static_cast<int>(op_kind::logical_not); ++i) cases.emplace_back(static_cast<op_kind>(i), 1);
    for (int i = static_cast<int>(op_kind::add); i <= static_cast<int>(op_kind::logical_or); ++i) {
      cases.emplace_back(static_cast<op_kind>(i), 2);
      cases.emplace_back(static_cast<op_kind>(i), 3);
    }
    cases.emplace_back(op_kind::where, 4);
    cases.emplace_back(op_kind::copy, 5);
    cases.emplace_back(op_kind::fma, 6);
    for (const auto& c : cases) {
      const op_kind kind = c.first;
      const int form = c.second;
      k::fused_kernel g;
      g.n_leaves = form == 2 || form == 6 ? 2 : form == 4 ? 3 : 1;
      g.leaf_dt[0] = g.leaf_dt[1] = dt;
      g.leaf_dt[2] = dtype::b8;
      g.leaf[0] = line(x.data(), dt);
      g.leaf[1] = line(y.data(), dt);
      g.leaf[2] = line(cond.data(), dtype::b8);
      k::fused_op& o = g.ops[0];
      o.k = kind;
      o.out = ctfx::yields_bool(kind) ? dtype::b8 : form == 5 ? (dt == dtype::f32 ? dtype::i32 : dtype::f32) : dt;
      o.cdt = dt;
      o.a = k::leaf_ref(0);
      if (form == 2 || form == 4) o.b = k::leaf_ref(1);
      if (form == 4) o.c = k::leaf_ref(2);
      if (form == 6) {
        o.b = k::leaf_ref(1);
        o.c = k::leaf_ref(0);
      }
      if (form == 3) {
        o.has_scalar = true;
        o.scalar = ctfx::is_floating(dt) ? 0.5 : 2.0;  // exact in every dtype with it
      }
      k::resolve(o, dt, dt, dt);
      k::fused_op& wide = g.ops[1];
      wide.k = op_kind::copy;
      wide.out = wide.cdt = dtype::f64;
      wide.a = 0;
      k::resolve(wide, o.out, o.out);
      g.n_ops = 2;
      std::vector<double> want(n, -1.0), got(n, -1.0);
      g.out = line(want.data(), dtype::f64);
      k::run_fused(ctfx::device_ctx{}, g);
      g.out = line(got.data(), dtype::f64);
      const k::fused_row_fn f{k::fused_elem_fn{g}};
      k::rows_as_on_device(1, n, n, 2, f);
      CHECK_MESSAGE(std::memcmp(want.data(), got.data(), sizeof(double) * n) == 0,
                    ctfx::facts(kind).name << " (form " << form << ") on " << ctfx::name_of(dt));
      ++checked;
    }
  }
  // every unary kind once, every binary kind with a tensor and with a scalar, where and fma, a conversion
  constexpr int unary = static_cast<int>(op_kind::logical_not) - static_cast<int>(op_kind::neg) + 1;
  constexpr int binary = static_cast<int>(op_kind::logical_or) - static_cast<int>(op_kind::add) + 1;
  CHECK(checked == 8 * (unary + 2 * binary + 3));
}
