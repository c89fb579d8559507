// ctfx/exec/kernel_table.hpp — the kernels of user ops, by name. A graph stores only a user op's
// schema (ops/custom.hpp); whoever runs it says which function implements it:
//
//   ctfx::kernel_table k;
//   k.add("my_sin", [](const ctfx::custom_call& c) { ... c.args[1] ... });
//   k.add<my_sin>();   // the same, for a user op type with `static void run(const ctfx::custom_call&)`
//
// A kernel receives its tensor arguments (a mutated argument points at the memory it must write:
// the caller's tensor, or a clone when the op runs functionally) and its fresh results.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>
#include "../kernels/launch.hpp"
#include "tensor.hpp"

namespace ctfx {

/// What a user op's kernel receives.
struct custom_call {
  std::span<const tensor_ref> args;  ///< the op's tensor arguments, in schema order (a mutated one points at the memory to write)
  std::span<const tensor_ref> results;  ///< the op's fresh results, allocated by the plan
  device_ctx ctx;  ///< where to run: backend and CUDA stream
};

/// A user op's kernel: called with the op's arguments, fresh results and device (ctfx::custom_call).
using custom_kernel = std::function<void(const custom_call&)>;

/// The kernels of user ops, by name, that a run is given (`run(..., &table)`).
class kernel_table {
 public:
  /// Adds (or replaces) the kernel of the user op `name`.
  kernel_table& add(std::string_view name, custom_kernel k) {
    for (auto& e : entries_)
      if (e.first == name) { e.second = static_cast<custom_kernel&&>(k); return *this; }
    entries_.emplace_back(std::string(name), static_cast<custom_kernel&&>(k));
    return *this;
  }
  /// A user op type with `static void run(const ctfx::custom_call&)`.
  template <class Op>
  kernel_table& add() { return add(Op::name, [](const custom_call& c) { Op::run(c); }); }
  /// The kernel of `name`, or nullptr.
  const custom_kernel* find(std::string_view name) const {
    for (auto& e : entries_)
      if (e.first == name) return &e.second;
    return nullptr;
  }

 private:
  std::vector<std::pair<std::string, custom_kernel>> entries_;
};

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
