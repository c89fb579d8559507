// Strided copies run element by element together (plan/copy_siblings.hpp, kernels/copy_siblings.hpp):
// which copy_ steps of a static plan are grouped (a halo's columns, a periodic stencil's ghost
// columns), which are refused (a copy that reads or writes what another writes), the listing's
// lines, and results bit-identical to the reference run on the host and OMP backends; the same
// groups in runtime_plan, which decides them at run time for a graph without symbols.
#include <doctest/doctest.h>
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/kernels/copy_siblings.hpp>
#include <ctfx/plan/listing.hpp>
#include "../common/halo.hpp"
#include "../common/stencil.hpp"

namespace {

std::vector<float> ramp(std::size_t n, float scale = 0.37f) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 37) % 101) * scale - 9.0f;
  return v;
}

// Each pair (a, next[a]) of a plan's copy groups.
template <class Plan>
std::vector<std::pair<std::int32_t, std::int32_t>> copy_pairs() {
  std::vector<std::pair<std::int32_t, std::int32_t>> r;
  for (std::size_t i = 0; i < Plan::node_count; ++i)
    if (Plan::copy_group.next[i] >= 0) r.emplace_back(static_cast<std::int32_t>(i), Plan::copy_group.next[i]);
  return r;
}

// The plan on host and OMP against the reference run, every input compared bit for bit.
template <class Plan>
void check_against_reference(const ctfx::ir& g, const std::vector<std::vector<float>>& ins, const std::vector<ctfx::tensor_desc>& desc) {
  auto refs = [&](std::vector<std::vector<float>>& v) {
    std::vector<ctfx::tensor_ref> r;
    for (std::size_t k = 0; k < v.size(); ++k) r.emplace_back(v[k].data(), desc[k]);
    return r;
  };
  auto want = ins;
  REQUIRE(ctfx::reference_run(g, refs(want), {}).ok);
  for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
    auto got = ins;
    const ctfx::run_status st = Plan::run(refs(got), {}, ctfx::device_ctx{where});
    REQUIRE_MESSAGE(st.ok, st.message);
    for (std::size_t k = 0; k < ins.size(); ++k) CHECK(std::memcmp(got[k].data(), want[k].data(), want[k].size() * 4) == 0);
    auto got_rt = ins;  // runtime_plan, twice: the second run binds to the layouts the first did
    const ctfx::runtime_plan rp(g);
    for (int r = 0; r < 2; ++r) {
      got_rt = ins;
      const ctfx::run_status rst = rp.run(refs(got_rt), {}, where);
      REQUIRE_MESSAGE(rst.ok, rst.message);
      for (std::size_t k = 0; k < ins.size(); ++k) CHECK(std::memcmp(got_rt[k].data(), want[k].data(), want[k].size() * 4) == 0);
    }
  }
}

constexpr long HG = 9;
constexpr auto halo = ctfx::graph([](ctfx::builder& b) { ctfx_test::halo_edges(b, HG); });
using halo_plan = ctfx::compiled<decltype(halo)>;

constexpr long SG = 8;
constexpr auto stencil = ctfx::graph([](ctfx::builder& b) { ctfx_test::periodic_stencil(b, b.input("x", ctfx::f32, {SG, SG}), SG); });
using stencil_plan = ctfx::compiled<decltype(stencil)>;

// x[:, 1] = w, then x[:, 2] = x[:, 1]: the second copy reads what the first writes.
constexpr auto reads_first = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {6, 7});
  auto w = b.input("w", ctfx::f32, {6, 1});
  auto y = ctfx::slice_scatter(x, w, 1, 1, 2);
  b.update(x, ctfx::slice_scatter(y, y.slice(1, 1, 2), 1, 2, 3));
});
using reads_first_plan = ctfx::compiled<decltype(reads_first)>;

// x[0:5, 0] = w, then x[1:6, 0] = e: the second copy, of the same extents, overwrites most of the
// first's column (run together, element j + 1 of the first would overwrite element j of the second).
constexpr auto overwrites = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {6, 7});
  auto w = b.input("w", ctfx::f32, {5, 1});
  auto e = b.input("e", ctfx::f32, {5, 1});
  auto y = ctfx::slice_scatter(x, ctfx::slice_scatter(x.slice(0, 0, 5), w, 1, 0, 1), 0, 0, 5);
  b.update(x, ctfx::slice_scatter(y, ctfx::slice_scatter(y.slice(0, 1, 6), e, 1, 0, 1), 0, 1, 6));
});
using overwrites_plan = ctfx::compiled<decltype(overwrites)>;

}  // namespace

TEST_CASE("copy siblings: a halo exchange's two column copies run together, with the reference's values") {
  const ctfx::ir g = halo_plan::graph();
  const auto pairs = copy_pairs<halo_plan>();
  REQUIRE(pairs.size() == 1);
  // The pair is the two columns (element stride HG); the rows stay memmoves.
  for (std::int32_t c : {pairs[0].first, pairs[0].second}) {
    REQUIRE(g[c].op == ctfx::op_kind::copy_);
    const ctfx::tensor_meta& dst = g[g.arg(c, 0)].meta;
    CHECK(dst.stride[dst.rank - 1].value() == HG);
  }
  CHECK(halo_plan::copy_group.follows[static_cast<std::size_t>(pairs[0].second)]);
  CHECK(halo_plan::static_buffer_bytes() == 0);
  const std::string s = ctfx::listing<halo_plan>();
  INFO(s);
  const auto head = s.find("    # copy siblings: steps ");
  REQUIRE(head != std::string::npos);
  const std::string first = s.substr(head + 27, s.find('-', head) - head - 27);
  CHECK(s.find(", copied with step " + first + "\n", head) != std::string::npos);
  {  // runtime_plan: the same two copies, the same listing line
    const ctfx::runtime_plan rp(halo.get());
    REQUIRE(rp.error().ok());
    const ctfx::ir& rg = rp.graph();
    const std::vector<std::int32_t>& next = rp.copy_siblings();
    REQUIRE(next.size() == static_cast<std::size_t>(rg.size()));
    std::vector<std::pair<std::int32_t, std::int32_t>> rpairs;
    for (std::int32_t i = 0; i < rg.size(); ++i)
      if (next[static_cast<std::size_t>(i)] >= 0) rpairs.emplace_back(i, next[static_cast<std::size_t>(i)]);
    REQUIRE(rpairs.size() == 1);
    for (std::int32_t c : {rpairs[0].first, rpairs[0].second}) {
      REQUIRE(rg[c].op == ctfx::op_kind::copy_);
      const ctfx::tensor_meta& dst = rg[rg.arg(c, 0)].meta;
      CHECK(dst.stride[dst.rank - 1].value() == HG);
    }
    ctfx::listing_options lo;
    lo.fused = &rp.fused();
    lo.copy_siblings = next.data();
    CHECK(ctfx::listing(rg, rp.life(), rp.memory_plan(), lo).find("    # copy siblings: steps ") != std::string::npos);
  }
  check_against_reference<halo_plan>(halo.get(), {ramp(HG * HG), ramp(HG - 2, 0.1f), ramp(HG - 2, 0.2f), ramp(HG - 2, 0.3f), ramp(HG - 2, 0.4f)},
                                     {ctfx::tensor_desc::contiguous(ctfx::f32, {HG, HG}), ctfx::tensor_desc::contiguous(ctfx::f32, {HG - 2}),
                                      ctfx::tensor_desc::contiguous(ctfx::f32, {HG - 2}), ctfx::tensor_desc::contiguous(ctfx::f32, {HG - 2}),
                                      ctfx::tensor_desc::contiguous(ctfx::f32, {HG - 2})});
}

TEST_CASE("copy siblings: a periodic stencil's ghost columns, read and written in one grid, run together") {
  const ctfx::ir g = stencil_plan::graph();
  const auto pairs = copy_pairs<stencil_plan>();
  REQUIRE(pairs.size() == 1);
  for (std::int32_t c : {pairs[0].first, pairs[0].second}) {
    const ctfx::tensor_meta& dst = g[g.arg(c, 0)].meta;
    CHECK(dst.size[0].value() == SG);
    CHECK(dst.size[1].value() == 1);
  }
  check_against_reference<stencil_plan>(stencil.get(), {ramp(SG * SG)}, {ctfx::tensor_desc::contiguous(ctfx::f32, {SG, SG})});
}

TEST_CASE("copy siblings: a copy that reads, or writes, what the copy before it writes runs after it") {
  CHECK(copy_pairs<reads_first_plan>().empty());
  CHECK(ctfx::listing<reads_first_plan>().find("copy siblings") == std::string::npos);
  check_against_reference<reads_first_plan>(reads_first.get(), {ramp(42), ramp(6, 0.5f)},
                                            {ctfx::tensor_desc::contiguous(ctfx::f32, {6, 7}), ctfx::tensor_desc::contiguous(ctfx::f32, {6, 1})});
  for (const ctfx::ir& g : {reads_first.get(), overwrites.get()}) {
    const ctfx::runtime_plan rp(g);
    CHECK(std::all_of(rp.copy_siblings().begin(), rp.copy_siblings().end(), [](std::int32_t n) { return n < 0; }));
  }
  CHECK(copy_pairs<overwrites_plan>().empty());
  {  // two strided copies of one shape: only their overlap keeps them apart
    const ctfx::ir g = overwrites_plan::graph();
    int copies = 0;
    for (std::int32_t i = 0; i < g.size(); ++i) copies += g[i].op == ctfx::op_kind::copy_ && g[g.arg(i, 0)].meta.size[0].value() == 5;
    CHECK(copies == 2);
  }
  check_against_reference<overwrites_plan>(overwrites.get(), {ramp(42), ramp(5, 0.5f), ramp(5, 0.7f)},
                                           {ctfx::tensor_desc::contiguous(ctfx::f32, {6, 7}), ctfx::tensor_desc::contiguous(ctfx::f32, {5, 1}),
                                            ctfx::tensor_desc::contiguous(ctfx::f32, {5, 1})});
}

TEST_CASE("copy siblings: the kernel walks outer dimensions and broadcasts as copies run one after the other do") {
  // Two members over [3, 4]: the even and the odd columns of a [3, 8] grid (inner stride 2), one
  // source a [3, 4] block, the other a row of 4 broadcast over the 3 rows (stride 0).
  std::vector<float> grid = ramp(24), want = grid, a = ramp(12, 0.5f), row = ramp(4, 0.25f);
  auto view = [](std::vector<float>& v, std::ptrdiff_t off, std::initializer_list<ctfx::index_t> size, std::initializer_list<ctfx::index_t> stride) {
    ctfx::strided s;
    s.p = reinterpret_cast<std::byte*>(v.data() + off);
    s.dt = ctfx::dtype::f32;
    s.rank = static_cast<int>(size.size());
    int d = 0;
    for (auto x : size) s.size[d++] = x;
    d = 0;
    for (auto x : stride) s.stride[d++] = x;
    return s;
  };
  const ctfx::device_ctx host{ctfx::backend::host};
  ctfx::kernels::copy_typed<ctfx::dtype::f32, ctfx::dtype::f32>(host, view(want, 0, {3, 4}, {8, 2}), view(a, 0, {3, 4}, {4, 1}));
  ctfx::kernels::copy_typed<ctfx::dtype::f32, ctfx::dtype::f32>(host, view(want, 1, {3, 4}, {8, 2}), view(row, 0, {3, 4}, {0, 1}));
  const ctfx::strided out[2] = {view(grid, 0, {3, 4}, {8, 2}), view(grid, 1, {3, 4}, {8, 2})};
  const ctfx::strided src[2] = {view(a, 0, {3, 4}, {4, 1}), view(row, 0, {3, 4}, {0, 1})};
  ctfx::kernels::copy_siblings<ctfx::dtype::f32, 2>(host, out, src);
  CHECK(grid == want);
  CHECK(grid[1] == row[0]);
  CHECK(grid[8 * 2 + 6] == a[2 * 4 + 3]);
}
