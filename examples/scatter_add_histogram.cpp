// A scatter-add histogram: counts[bins[i]] += weights[i] — index_put with accumulate and many
// duplicate indices, into a histogram the caller owns (`counts.index_put_(..., accumulate=True)`
// traced functionally, with its copy_ epilogue). The plan accumulates in place, in a fixed order:
// the same bits on every run and every backend. Out-of-range bins are refused before any write.
#include <cstdio>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/plan/listing.hpp>

constexpr long bins = 64, samples = 100000;

constexpr auto histogram = ctfx::graph([](ctfx::builder& b) {
  auto counts = b.input("counts", ctfx::f32, {bins});
  auto bin = b.input("bin", ctfx::i64, {samples});
  auto w = b.input("weight", ctfx::f32, {samples});
  b.update(counts, ctfx::index_put(counts, {bin}, w, /*accumulate=*/true));
  b.output(w.sum({0}));
});
using plan = ctfx::compiled<decltype(histogram)>;
static_assert(plan::report.all_inplace(), "the histogram must accumulate in place");

int main() {
  std::puts("== what reinplacing decided\n");
  std::puts(ctfx::to_text(plan::report).c_str());
  std::puts("== the plan\n");
  std::puts(ctfx::listing<plan>().c_str());  // its kernels, reuse lines and rows run together

  std::vector<float> counts(bins, 0.0f), w(samples), total(1), ref_total(1);
  std::vector<std::int64_t> bin(samples);
  std::uint64_t x = 12345;
  for (long i = 0; i < samples; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    bin[static_cast<std::size_t>(i)] = static_cast<std::int64_t>((x >> 33) % bins);
    w[static_cast<std::size_t>(i)] = 0.5f + static_cast<float>((x >> 20) % 7) * 0.25f;
  }
  auto ref_counts = counts;
  auto inputs = [&](std::vector<float>& c) {
    return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(c.data(), {bins}),
                                         ctfx::tensor_ref::contiguous(bin.data(), {samples}),
                                         ctfx::tensor_ref::contiguous(w.data(), {samples})};
  };
  std::vector<ctfx::tensor_ref> o = {ctfx::tensor_ref::contiguous(total.data(), {})};
  std::vector<ctfx::tensor_ref> ro = {ctfx::tensor_ref::contiguous(ref_total.data(), {})};
  auto st = plan::run(inputs(counts), o);
  if (!st) { std::printf("run failed: %s\n", st.message.c_str()); return 1; }
  if (!ctfx::reference_run(histogram.get(), inputs(ref_counts), ro)) return 1;
  const bool same = counts == ref_counts && total == ref_total;
  std::printf("== run on the host: counts[0..3] = %g %g %g %g (total weight %g); equal to the reference: %s\n",
              static_cast<double>(counts[0]), static_cast<double>(counts[1]), static_cast<double>(counts[2]),
              static_cast<double>(counts[3]), static_cast<double>(total[0]), same ? "yes" : "NO");
  // A bin out of range: refused, and the histogram is untouched.
  bin[500] = bins;
  const auto before = counts;
  st = plan::run(inputs(counts), o);
  std::printf("== a bin out of range: %s; histogram untouched: %s\n", st.message.c_str(), counts == before ? "yes" : "NO");
  return same && !st.ok && counts == before ? 0 : 1;
}
