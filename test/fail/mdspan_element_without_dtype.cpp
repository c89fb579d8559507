// expect-error: rule 'buffer-dtype' is broken; fix: make the mdspan's element type bool, std::int8_t
// An mdspan of std::uint16_t (f16 bits) has no dtype: ctfx::ref cannot describe it.
#include <cstdint>
#include <vector>
#include <ctfx/exec/mdspan.hpp>

int main() {
  std::vector<std::uint16_t> h(8);
  cuda::std::mdspan<std::uint16_t, cuda::std::dextents<int, 1>> m(h.data(), 8);
  return ctfx::ref(m).rank;
}
