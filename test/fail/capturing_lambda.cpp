// expect-error: ctfx::graph\(f\): f must be a captureless lambda
// A graph is identified by its lambda's type; a lambda that captures cannot be rebuilt by the compiler.
#include <ctfx.hpp>

int main() {
  int n = 4;
  auto g = ctfx::graph([&](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {n});
    b.output(x);
  });
  (void)g;
}
