// A user program linked with ctfx::runtime (the executor compiled once, in the package's static
// library): a run-time plan runs on typed buffers and gives the expected values.
#include <ctfx.hpp>
#include <ctfx/exec/runtime.hpp>
#include <cstdio>
#include <vector>

int main() {
  const ctfx::ir g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {2, 3});
    b.output(x * 2.0 + 1.0);
  });
  const ctfx::runtime_plan plan(g);
  std::vector<float> x = {0, 1, 2, 3, 4, 5}, y(6);
  const ctfx::run_status st = plan.run({ctfx::tensor_ref::contiguous(x.data(), {2, 3})},
                                       {ctfx::tensor_ref::contiguous(y.data(), {2, 3})}, ctfx::backend::host);
  if (!st) {
    std::printf("consumer_runtime: %s\n", st.message.c_str());
    return 1;
  }
  std::printf("consumer_runtime ok: y[5] = %g\n", static_cast<double>(y[5]));
  return y == std::vector<float>{1, 3, 5, 7, 9, 11} ? 0 : 1;
}
