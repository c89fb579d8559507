// expect-error: the_dtype_label_disagrees_with_the_pointers_element_type__fix_drop_the_label_or_pass_a_void_pointer
// A float buffer labelled f16: the label must be the pointer's element type's dtype.
#include <vector>
#include <ctfx/exec/tensor.hpp>

int main() {
  std::vector<float> x(8);
  const ctfx::tensor_ref r = ctfx::tensor_ref::contiguous(x.data(), ctfx::f16, {8});
  return r.rank;
}
