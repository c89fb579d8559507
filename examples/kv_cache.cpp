// One LLM decode step: write this token's keys into a [B, H, S, D] cache at position `pos`.
// The graph is functional, as PyTorch traces it (index_put, then the copy_ epilogue into the
// input). ctfx decides in the compiler that the update runs in place in the caller's cache — no
// clone of the cache, no allocation — prints the decision and the plan, and runs it on the host,
// checking the result against the loop the update means. The file compiles only the graph's own
// kernel (no generic executor: the quick start builds it alone, header-only, in seconds).
#include <cstdio>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/plan/listing.hpp>

constexpr long B = 2, H = 8, S = 1024, D = 64;  // 32 MiB of f16 (bench/runtime uses 512 MiB)

constexpr auto kv_step = ctfx::graph([](ctfx::builder& g) {
  auto cache = g.input("cache", ctfx::f16, {B, H, S, D});
  auto k = g.input("k", ctfx::f16, {B, H, 1, D});
  auto pos = g.input("pos", ctfx::i64, {1});
  auto next = ctfx::index_put(cache, {ctfx::none, ctfx::none, pos}, k);  // functional, as traced
  g.update(cache, next);                                                 // epilogue: cache.copy_(next)
});
using plan = ctfx::compiled<decltype(kv_step)>;

// Decided by the compiler: the update runs in place and the plan needs no buffer at all.
static_assert(plan::report.all_inplace(), "the KV-cache update must run in place");
static_assert(plan::static_buffer_bytes() == 0, "the KV-cache update must allocate nothing");
// And the whole run is constant data made by the compiler (a static plan): `pos` is checked against
// the cache's extent before the first write, then one typed put writes the row.
static_assert(plan::run_plan.usable, "the KV-cache update must run as a static plan");

int main() {
  std::puts("== the functional graph\n");
  std::puts(ctfx::to_text(kv_step.get()).c_str());
  std::puts("== what reinplacing decided\n");
  std::puts(ctfx::to_text(plan::report).c_str());
  const ctfx::ir g = plan::graph();
  std::puts("== the plan\n");
  std::puts(ctfx::listing<plan>().c_str());  // its kernels, reuse lines and rows run together
  std::puts("== the run, as the compiler made it (compiled<G>::run_plan)\n");
  std::puts(ctfx::to_text(plan::run_plan.ref(), g).c_str());

  std::vector<ctfx::half_t> cache(B * H * S * D), want, k(B * H * D);
  for (std::size_t i = 0; i < cache.size(); ++i) cache[i] = ctfx::half_t(static_cast<float>(i % 1000) * 0.01f);
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = ctfx::half_t(-static_cast<float>(i % 100));
  std::vector<std::int64_t> pos = {37};
  // What the graph means: cache[:, :, pos] = k, on a copy.
  want = cache;
  for (std::size_t bh = 0; bh < static_cast<std::size_t>(B * H); ++bh)
    for (std::size_t d = 0; d < static_cast<std::size_t>(D); ++d)
      want[(bh * S + static_cast<std::size_t>(pos[0])) * D + d] = k[bh * D + d];
  // Each buffer's dtype is its element type's: half_t is f16, std::int64_t is i64.
  const auto st = plan::run({ctfx::tensor_ref::contiguous(cache.data(), {B, H, S, D}),
                             ctfx::tensor_ref::contiguous(k.data(), {B, H, 1, D}),
                             ctfx::tensor_ref::contiguous(pos.data(), {1})}, {});
  if (!st) { std::printf("run failed: %s\n", st.message.c_str()); return 1; }
  bool same = true;
  for (std::size_t i = 0; i < cache.size(); ++i) same = same && cache[i].bits == want[i].bits;
  std::printf("== run on the host: cache[0, 0, 37, 5] = %g; equal to cache[:, :, pos] = k: %s\n",
              static_cast<double>(static_cast<float>(cache[37 * D + 5])), same ? "yes" : "NO");
  return same ? 0 : 1;
}
