// expect-error: rule 'buffer-dtype' is broken; fix: point at bool, std::int8_t
// A buffer of std::uint16_t (f16 bits) has no dtype: name the element type, or pass a void*.
#include <cstdint>
#include <vector>
#include <ctfx/exec/tensor.hpp>

int main() {
  std::vector<std::uint16_t> h(8);
  const ctfx::tensor_ref r = ctfx::tensor_ref::contiguous(h.data(), {8});
  return r.rank;
}
