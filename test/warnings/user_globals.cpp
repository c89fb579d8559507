// A user's file compiled with -Wshadow -Werror (test/CMakeLists.txt: warnings.user_globals.<cc>):
// its globals, declared after ctfx's headers, carry the names the library's locals have (one
// letter, `out`, `first`, a kernel's extents), and it instantiates both executors on graphs that
// reach every kernel family: a stencil with a copy_ back, reductions, index_put at a run-time
// position, with a mask and with accumulate, strided copies run together, slice_scatters, a clone
// and a symbolic extent. It must compile without one warning; the same file with
// CTFX_LIBRARY_WARNINGS (warnings.user_globals_library.gxx) must not, which shows that the
// collisions are there and that core/diagnostics_push.hpp is what keeps them out of a user's build.
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <vector>

[[maybe_unused]] static long a = 1, b = 1, c = 1, d = 1, e = 1, f = 1, g = 1, h = 1, i = 1, j = 1, k = 1, l = 1;
[[maybe_unused]] static long m = 1, n = 1, o = 1, p = 1, q = 1, r = 1, s = 1, t = 1, u = 1, v = 1, w = 1, x = 1;
[[maybe_unused]] static long y = 1, z = 1, A = 1, B = 1, C = 1, D = 1, E = 1, F = 1, G = 1, H = 1, I = 1, J = 1;
[[maybe_unused]] static long K = 1, L = 1, M = 1, N = 1, O = 1, P = 1, Q = 1, R = 1, S = 1, T = 1, U = 1, V = 1;
[[maybe_unused]] static long W = 1, X = 1, Y = 1, Z = 1, in = 1, out = 1, src = 1, dst = 1, idx = 1, pos = 1, ax = 1;
[[maybe_unused]] static long sz = 1, size = 1, stride = 1, off = 1, offset = 1, ext = 1, dim = 1, dims = 1, rank = 1;
[[maybe_unused]] static long meta = 1, node = 1, nodes = 1, step = 1, steps = 1, plan = 1, run = 1, tmp = 1, val = 1;
[[maybe_unused]] static long value = 1, values = 1, lo = 1, hi = 1, len = 1, count = 1, first = 1, last = 1, next = 1;
[[maybe_unused]] static long prev = 1, begin = 1, end = 1, row = 1, rows = 1, col = 1, cols = 1, grid = 1, buf = 1;
[[maybe_unused]] static long data = 1, ptr = 1, mask = 1, sum = 1, total = 1, acc = 1, res = 1, result = 1, kind = 1;
[[maybe_unused]] static long op = 1, ops = 1, arg = 1, args = 1, id = 1, ids = 1, ctx = 1, st = 1, sym = 1, syms = 1;
[[maybe_unused]] static long bytes = 1, place = 1, part = 1, group = 1, groups = 1, chunk = 1, lane = 1, lanes = 1;
[[maybe_unused]] static long level = 1, bits = 1, out_view = 1, in_view = 1, view = 1, views = 1, lhs = 1, rhs = 1;
[[maybe_unused]] static long a0 = 1, a1 = 1, ctx2 = 1, NN = 1, ND = 1, SN = 1, SD = 1, MN = 1, MD = 1, RB = 1, RH = 1;
[[maybe_unused]] static long RS = 1, RD = 1, KS = 1, HG = 1, CR = 1, CC = 1, AN = 1, AB = 1, CE = 1;

constexpr long GRID = 34;
constexpr auto g_stencil = ctfx::graph([](ctfx::builder& bb) {
  auto gr = bb.input("grid", ctfx::f32, {GRID, GRID});
  auto up = gr.slice(0, 0, GRID - 2).slice(1, 1, GRID - 1), down = gr.slice(0, 2, GRID).slice(1, 1, GRID - 1);
  auto left = gr.slice(0, 1, GRID - 1).slice(1, 0, GRID - 2), right = gr.slice(0, 1, GRID - 1).slice(1, 2, GRID);
  auto mid = gr.slice(0, 1, GRID - 1).slice(1, 1, GRID - 1);
  bb.update(gr, ctfx::slice_scatter(gr, ctfx::slice_scatter(gr.slice(0, 1, GRID - 1), (up + down + left + right - mid * 4.0f) * 0.25f, 1, 1, GRID - 1), 0, 1, GRID - 1));
});
constexpr auto g_softmax = ctfx::graph([](ctfx::builder& bb) {
  auto xx = bb.input("x", ctfx::f32, {16, 64});
  auto ee = ctfx::exp(xx - xx.amax({1}, true));
  bb.output(ee / ee.sum({1}, true));
});
constexpr auto g_ring = ctfx::graph([](ctfx::builder& bb) {
  auto bf = bb.input("buf", ctfx::f32, {8, 64});
  auto rw = bb.input("row", ctfx::f32, {1, 64});
  auto ps = bb.input("pos", ctfx::i64, {1});
  auto nb = ctfx::index_put(bf, {ps}, rw);
  bb.update(bf, nb);
  bb.output(nb.sum({0}));
});
constexpr auto g_rope = ctfx::graph([](ctfx::builder& bb) {
  auto cache = bb.input("cache", ctfx::f32, {2, 4, 16, 32});
  auto kk = bb.input("k", ctfx::f32, {2, 4, 1, 32});
  auto cs = bb.input("cos", ctfx::f32, {16});
  auto sn = bb.input("sin", ctfx::f32, {16});
  auto ps = bb.input("pos", ctfx::i64, {1});
  auto k1 = kk.slice(3, 0, 16), k2 = kk.slice(3, 16, 32);
  bb.update(cache, ctfx::index_put(cache, {ctfx::none, ctfx::none, ps}, ctfx::cat({k1 * cs - k2 * sn, k2 * cs + k1 * sn}, 3)));
});
constexpr auto g_masked = ctfx::graph([](ctfx::builder& bb) {
  auto xx = bb.input("x", ctfx::f32, {16, 64});
  auto mm = bb.input("m", ctfx::f32, {16, 64});
  auto vv = bb.input("v", ctfx::f32, {1});
  bb.update(xx, ctfx::index_put(xx, {ctfx::gt(mm, 0.5)}, vv));
});
constexpr auto g_scatter_add = ctfx::graph([](ctfx::builder& bb) {
  auto hh = bb.input("h", ctfx::f32, {32});
  auto ii = bb.input("i", ctfx::i64, {200});
  auto vv = bb.input("v", ctfx::f32, {200});
  bb.update(hh, ctfx::index_put(hh, {ii}, vv, true));
});
constexpr auto g_halo = ctfx::graph([](ctfx::builder& bb) {
  auto gr = bb.input("grid", ctfx::f32, {GRID, GRID});
  auto we = bb.input("w", ctfx::f32, {GRID - 2});
  auto ea = bb.input("e", ctfx::f32, {GRID - 2});
  auto gg = ctfx::select_scatter(gr, ctfx::slice_scatter(gr.select(1, 0), we, 0, 1, GRID - 1), 1, 0);
  gg = ctfx::select_scatter(gg, ctfx::slice_scatter(gg.select(1, GRID - 1), ea, 0, 1, GRID - 1), 1, GRID - 1);
  bb.update(gr, gg);
});
constexpr auto g_rows = ctfx::graph([](ctfx::builder& bb) {
  auto xx = bb.input("x", ctfx::f32, {8, 64});
  auto sr = bb.input("src", ctfx::f32, {8, 64});
  auto yy = xx;
  for (long rr = 0; rr < 8; ++rr) yy = ctfx::slice_scatter(yy, sr.slice(0, (rr * 3) % 8, (rr * 3) % 8 + 1), 0, rr, rr + 1);
  bb.update(xx, yy);
});
constexpr auto g_clone = ctfx::graph([](ctfx::builder& bb) { bb.output(bb.input("x", ctfx::f32, {256}).clone()); });
constexpr auto g_symbolic = ctfx::graph([](ctfx::builder& bb) {
  auto xx = bb.input("x", ctfx::f32, {bb.sym("n"), 64});
  auto ww = bb.input("w", ctfx::f32, {64});
  bb.output(xx * ctfx::rsqrt((xx * xx).mean({1}, true) + 1e-6f) * ww);
});

// Instantiates compiled<Gr>'s run and a runtime_plan of the same graph (never called: this file
// is compiled, not run).
template <const auto& Gr>
void instantiate() {
  using plan_type = ctfx::compiled<std::remove_reference_t<decltype(Gr)>>;
  (void)plan_type::run({}, {});
  ctfx::runtime_plan rt(std::remove_cvref_t<decltype(Gr)>::build());
  (void)rt.run({}, {});
}

int main(int argc, char**) {
  if (argc > 0) return 0;
  instantiate<g_stencil>();
  instantiate<g_softmax>();
  instantiate<g_ring>();
  instantiate<g_rope>();
  instantiate<g_masked>();
  instantiate<g_scatter_add>();
  instantiate<g_halo>();
  instantiate<g_rows>();
  instantiate<g_clone>();
  instantiate<g_symbolic>();
}
