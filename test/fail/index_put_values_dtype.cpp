// expect-error: node .'index_put.' \(index_put\) at index_put_values_dtype\.cpp:9: values dtype bf16 differs from the destination.'s f16 \[rule dtype-mismatch\]
// index_put values of another dtype than the destination (a KV-cache update with bf16 keys).
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto cache = b.input("cache", ctfx::f16, {2, 4, 16, 8});
  auto k = b.input("k", ctfx::bf16, {2, 4, 1, 8});
  auto pos = b.input("pos", ctfx::i64, {1});
  b.update(cache, ctfx::index_put(cache, {ctfx::none, ctfx::none, pos}, k));
});
