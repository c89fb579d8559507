// test/fuzz/buffers.hpp — a fuzz case's caller buffers: the inputs' bytes (copied, so that two
// runs start from the same state) and output buffers of the bound shapes.
#pragma once
#include <vector>
#include <ctfx/exec/tensor.hpp>
#include "generator.hpp"

namespace {

struct buffers {
  std::vector<std::vector<std::byte>> in, out;
  std::vector<ctfx::tensor_ref> in_refs, out_refs;
};

buffers make_buffers(const ctfx_fuzz::fuzz_case& c, const std::vector<ctfx::tensor_desc>& outs) {
  buffers b;
  for (const auto& i : c.inputs) b.in.push_back(i.bytes);
  for (const auto& o : outs) b.out.emplace_back(o.span_bytes(), std::byte{0x5a});
  for (std::size_t k = 0; k < c.inputs.size(); ++k) b.in_refs.emplace_back(b.in[k].data(), c.inputs[k].desc);
  for (std::size_t k = 0; k < outs.size(); ++k) b.out_refs.emplace_back(b.out[k].data(), outs[k]);
  return b;
}

}  // namespace
