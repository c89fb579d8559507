// One LLM decode step: write this token's keys into a [B, H, S, D] cache at position `pos`.
// The graph is functional, as PyTorch traces it (index_put, then the copy_ epilogue into the input);
// ctfx checks it in the compiler and prints it with its memory plan.
#include <ctfx.hpp>
#include <ctfx/plan/listing.hpp>
#include <cstdio>

constexpr auto kv_step = ctfx::graph([](ctfx::builder& g) {
  auto cache = g.input("cache", ctfx::f16, {8, 32, 4096, 128});  // 512 MiB
  auto k = g.input("k", ctfx::f16, {8, 32, 1, 128});
  auto pos = g.input("pos", ctfx::i64, {1});
  auto next = ctfx::index_put(cache, {ctfx::none, ctfx::none, pos}, k);  // functional, as traced
  g.update(cache, next);                                                 // epilogue: cache.copy_(next)
});
static_assert(kv_step.diag.ok());

int main() {
  auto g = kv_step.get();
  std::puts(ctfx::to_text(g).c_str());
  auto life = ctfx::compute_liveness(g);
  std::puts(ctfx::listing(g, life, ctfx::plan_reuse(life)).c_str());
  return 0;
}
