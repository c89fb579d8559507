// What a user's file costs to compile for a paged KV cache [512, 16, 64] f32 (pages of 16 rows)
// whose new row goes to the slot a page table gives for the token's position, run by compiled<G>.
// The put's index is computed in the graph (a gather from the table): the static plan checks it
// once gathered, before the put writes the caller's cache, so the file compiles no executor.
// Timed by bench/compile/user_files.sh.
#include <cstdint>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>

constexpr long P = 512, T = 16, D = 64, S = 1024;
constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto cache = b.input("cache", ctfx::f32, {P, T, D});
  auto k = b.input("k", ctfx::f32, {1, D});
  auto table = b.input("page_of", ctfx::i64, {S});  // position -> page
  auto pos = b.input("pos", ctfx::i64, {1});
  auto slot = b.input("slot", ctfx::i64, {1});      // the row within the page
  b.update(cache, ctfx::index_put(cache, {ctfx::index(table, {pos}), slot}, k));
});

int main() {
  std::vector<float> cache(P * T * D), k(D);
  std::vector<std::int64_t> table(S), pos{37}, slot{5};
  for (long i = 0; i < S; ++i) table[static_cast<std::size_t>(i)] = (i * 7) % P;
  auto st = ctfx::compiled<decltype(g)>::run({ctfx::tensor_ref::contiguous(cache.data(), ctfx::f32, {P, T, D}),
                                              ctfx::tensor_ref::contiguous(k.data(), ctfx::f32, {1, D}),
                                              ctfx::tensor_ref::contiguous(table.data(), ctfx::i64, {S}),
                                              ctfx::tensor_ref::contiguous(pos.data(), ctfx::i64, {1}),
                                              ctfx::tensor_ref::contiguous(slot.data(), ctfx::i64, {1})},
                                             {});
  return st.ok ? 0 : 1;
}
