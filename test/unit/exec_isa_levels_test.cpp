// The host's hot loops at each instruction-set level (core/isa.hpp): the same bits at every level
// this CPU runs, equal to the reference run, on compiled<G> and runtime_plan; the level is capped
// at what the CPU has, and CTFX_ISA is read as documented.
#include <doctest/doctest.h>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/core/isa.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/kernels/index_put.hpp>

namespace {

using ctfx::isa::level;

// The loops on_host_isa dispatches: a group's row loop (exp(x - max), the division), a fused sum
// folded straight into lanes (the row sums), an f32 maximum by keys over runs (amax), and a
// reduction over rows of outputs (the column sum over dimension 0, x + y not fused into it).
constexpr long R = 96, C = 700;  // rows longer than a 32-lane round and not a multiple of one
constexpr auto levels_graph = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {R, C});
  auto y = b.input("y", ctfx::f32, {C});
  auto e = ctfx::exp(x - x.amax({1}, true));
  auto softmax = e / e.sum({1}, true);
  auto col = (x + y).sum({0});
  auto sq = (x * x - y).sum({1});
  b.output(softmax, col, sq);
});
using levels_plan = ctfx::compiled<decltype(levels_graph)>;

std::vector<float> values(std::size_t n, unsigned seed) {
  std::vector<float> v(n);
  unsigned s = seed;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(static_cast<int>(s >> 9) % 20000) * 1e-3f - 10.0f;
  }
  return v;
}

struct outputs {
  std::vector<float> softmax = std::vector<float>(R * C), col = std::vector<float>(C), sq = std::vector<float>(R);
  std::vector<ctfx::tensor_ref> refs() {
    return {ctfx::tensor_ref(softmax.data(), ctfx::tensor_desc::contiguous(ctfx::f32, {R, C})),
            ctfx::tensor_ref(col.data(), ctfx::tensor_desc::contiguous(ctfx::f32, {C})),
            ctfx::tensor_ref(sq.data(), ctfx::tensor_desc::contiguous(ctfx::f32, {R}))};
  }
  bool operator==(const outputs& o) const {
    auto same = [](const std::vector<float>& a, const std::vector<float>& b) {
      return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
    };
    return same(softmax, o.softmax) && same(col, o.col) && same(sq, o.sq);
  }
};

// Restores the level a test found.
struct level_guard {
  level saved = ctfx::isa::current();
  ~level_guard() { ctfx::isa::use(saved); }
};

}  // namespace

TEST_CASE("host ISA levels: every level this CPU runs computes the reference's bits") {
  level_guard guard;
  std::vector<float> x = values(R * C, 7), y = values(C, 11);
  const std::vector<float> x0 = x, y0 = y;
  auto in = [&] {
    return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(x.data(), ctfx::tensor_desc::contiguous(ctfx::f32, {R, C})),
                                         ctfx::tensor_ref(y.data(), ctfx::tensor_desc::contiguous(ctfx::f32, {C}))};
  };
  outputs ref;
  REQUIRE(ctfx::reference_run(levels_graph.get(), in(), ref.refs()).ok);
  ctfx::runtime_plan rp(levels_graph.get());
  REQUIRE(rp.error().ok());
  int ran = 0;
  for (level l : {level::baseline, level::avx2, level::avx512}) {
    if (static_cast<int>(l) > static_cast<int>(ctfx::isa::supported())) continue;
    ctfx::isa::use(l);
    REQUIRE(ctfx::isa::current() == l);
    for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
      const ctfx::device_ctx ctx{where};
      outputs a, b;
      const auto sa = levels_plan::run(in(), a.refs(), ctx);
      REQUIRE_MESSAGE(sa.ok, sa.message);
      const auto sb = rp.run(in(), b.refs(), ctx);
      REQUIRE_MESSAGE(sb.ok, sb.message);
      CHECK_MESSAGE(a == ref, "compiled<G> at " << ctfx::isa::name(l));
      CHECK_MESSAGE(b == ref, "runtime_plan at " << ctfx::isa::name(l));
      CHECK(x == x0);
      CHECK(y == y0);
    }
    ++ran;
  }
  CHECK(ran >= 1);
#if CTFX_HOST_ISA_LEVELS && !defined(__AVX2__)
  // An x86-64 CPU without AVX2 is rare in CI; where it has it, the AVX2 level ran above.
  if (__builtin_cpu_supports("avx2")) CHECK(ran >= 2);
  if (__builtin_cpu_supports("avx512f")) CHECK(ran == 3);
#endif
}

TEST_CASE("host ISA levels: use() caps at what the CPU supports and returns the level it replaced") {
  level_guard guard;
  const level top = ctfx::isa::supported();
  ctfx::isa::use(level::baseline);
  CHECK(ctfx::isa::current() == level::baseline);
  CHECK(ctfx::isa::use(level::avx512) == level::baseline);
  CHECK(ctfx::isa::current() == top);
#if !CTFX_HOST_ISA_LEVELS
  CHECK(top == level::baseline);  // no levels compiled: only the build's own
#endif
  std::ostringstream os;
  os << level::avx2 << ' ' << level::baseline << ' ' << level::avx512;
  CHECK(os.str() == "avx2 baseline avx512");
}

TEST_CASE("host ISA levels: CTFX_ISA names a level, capped at what the CPU supports, an unknown name keeps it") {
  const char* before = std::getenv("CTFX_ISA");
  const std::string saved = before ? before : "";
  const level top = ctfx::isa::supported();
  ::setenv("CTFX_ISA", "baseline", 1);
  CHECK(ctfx::isa::detail::from_environment() == level::baseline);
  ::setenv("CTFX_ISA", "avx512", 1);
  CHECK(ctfx::isa::detail::from_environment() == top);
  ::setenv("CTFX_ISA", "sse9", 1);
  CHECK(ctfx::isa::detail::from_environment() == top);
  ::unsetenv("CTFX_ISA");
  CHECK(ctfx::isa::detail::from_environment() == top);
  if (before) ::setenv("CTFX_ISA", saved.c_str(), 1);
}

TEST_CASE("host ISA levels: rows copied in vector blocks (an in-place put's rows) at every level, of every size") {
  // kernels::copy_rows_host: the sizes a KV cache's rows have in constant-size blocks, any other
  // size by memcpy; rows 3 apart in the destination and 2 apart in the source (in rows of the
  // widest), bytes between the rows left as they were.
  level_guard guard;
  for (level l : {level::baseline, level::avx2, level::avx512}) {
    if (static_cast<int>(l) > static_cast<int>(ctfx::isa::supported())) continue;
    ctfx::isa::use(l);
    for (std::size_t bytes : {64u, 128u, 256u, 512u, 96u, 1088u}) {
      INFO("level " << ctfx::isa::name(l) << ", rows of " << bytes << " bytes");
      constexpr long rows = 5;
      const long ds = 3 * 1088 + 7, ss = 2 * 1088 + 5;  // odd strides: blocks at any alignment
      std::vector<std::byte> dst(static_cast<std::size_t>(rows * ds), std::byte{0xee}), src(static_cast<std::size_t>(rows * ss));
      for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::byte>(i * 131 % 251);
      std::vector<std::byte> want = dst;
      for (long r = 0; r < rows; ++r) std::memcpy(want.data() + r * ds, src.data() + r * ss, bytes);
      ctfx::kernels::copy_rows_host(dst.data(), ds, src.data(), ss, rows, bytes);
      CHECK(dst == want);
    }
  }
}
