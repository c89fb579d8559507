// A user program: a graph defined at compile time, checked by the compiler, printed at run time.
#include <ctfx.hpp>
#include <cstdio>

constexpr auto step = ctfx::graph([](ctfx::builder& g) {
  auto cache = g.input("cache", ctfx::f32, {4, 16});
  auto row = g.input("row", ctfx::f32, {1, 16});
  g.update(cache, ctfx::slice_scatter(cache, row, 0, 2, 3));
});
static_assert(step.diag.ok());

int main(int, char** argv) {
  auto g = step.get();
  std::printf("consumer ok: %s, %d nodes\n", argv[0], static_cast<int>(g.size()));
  return g.size() == 5 ? 0 : 1;
}
