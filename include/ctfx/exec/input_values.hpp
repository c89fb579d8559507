// ctfx/exec/input_values.hpp — binding the values a graph reads from its inputs with item()
// (graph/data_dependent.hpp): each such unbacked symbol takes the value of its one-element input
// when a call binds, with the symbols of the input shapes, so that every check on it (slice and
// select bounds, assertions) runs before anything is written. A bind that has only the inputs'
// shapes cannot take them: it refuses, naming the symbol and the input.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstring>
#include <span>
#include <string>
#include <vector>
#include "../graph/data_dependent.hpp"
#include "run_checks.hpp"
#include "tensor.hpp"

namespace ctfx {

/// A value the graph computes and reads with item(), computed for this call
/// (exec/computed_values.hpp): symbol `sym` has value `value`.
struct computed_value {
  std::size_t sym = 0;  ///< the symbol
  index_t value = 0;    ///< its value for this call
};

/// Whether the graph reads a value with item() (from an input or a tensor it computes).
inline bool reads_input_values(const ir& g) {
  for (const symbol& s : g.syms)
    if (is_read_value(s)) return true;
  return false;
}

/// Binds each symbol the graph reads from an input with item() from `data` (the caller's inputs,
/// in host memory, in graph-input order; `inputs`: their placeholders; empty data: only shapes are
/// known, and a graph that reads values is refused, rule unbacked-symbol); and each value the graph
/// computes from `computed` (absent: refused, naming the symbol and the node).
inline run_status bind_input_values(const ir& g, const std::vector<std::int32_t>& inputs, std::span<const tensor_ref> data,
                                    std::vector<index_t>& values, std::span<const computed_value> computed = {}) {
  for (std::size_t s = 0; s < g.syms.size(); ++s) {
    const symbol& y = g.syms[s];
    if (is_computed_value(y)) {
      bool found = false;
      for (const computed_value& c : computed)
        if (c.sym == s) { values[s] = c.value; found = true; }
      if (!found)
        return run_status::failure(-1, "rule unbacked-symbol: symbol '" + std::string(y.name.view()) +
                                           "' is a value the graph computes and reads with item(); runtime_plan::run (on every "
                                           "backend) and bind_values compute it ahead from the inputs on the host; this bind (shapes only, "
                                           "or compiled<G>'s plan) cannot: use runtime_plan, or pass the value as an input");
      continue;
    }
    if (!is_input_value(y)) continue;
    const std::string what = "rule unbacked-symbol: symbol '" + std::string(y.name.view()) + "' is the value of input " +
                             std::to_string(y.input) + " (item())";
    if (data.empty())
      return run_status::failure(-1, what + "; a bind with the inputs' shapes only cannot size the call: bind with their values "
                                            "(runtime_plan::bind_values) or run()");
    const auto k = static_cast<std::size_t>(y.input);
    if (k >= data.size()) return run_status::failure(-1, what + ", and the call passes " + std::to_string(data.size()) + " inputs");
    const tensor_ref& t = data[k];
    // The element sits `dim` elements past the input's first one, in the strides the graph was
    // made for (static: data_dependent.hpp): read it only where the caller's layout is that one.
    const tensor_meta& m = g.meta(inputs[k]);
    index_t last = 0;
    bool same = t.rank == m.rank;
    for (int d = 0; same && d < m.rank; ++d) {
      same = t.size[d] <= 1 || m.stride[d].eval(values) == t.stride[d];
      if (t.size[d] == 0) return run_status::failure(-1, what + ", and the input is empty");
      last += (t.size[d] - 1) * t.stride[d];
    }
    if (t.data == nullptr || !same || y.dim < 0 || y.dim > last)
      return run_status::failure(-1, what + ": pass the input with a buffer, in the strides the graph was made for");
    const std::byte* at = static_cast<const std::byte*>(t.data) + static_cast<std::size_t>(y.dim) * size_of(t.dt);
    index_t v = 0;
    switch (t.dt) {
      case dtype::i64: { std::int64_t x; std::memcpy(&x, at, sizeof x); v = x; break; }
      case dtype::i32: { std::int32_t x; std::memcpy(&x, at, sizeof x); v = x; break; }
      case dtype::i8: { std::int8_t x; std::memcpy(&x, at, sizeof x); v = x; break; }
      case dtype::b8: { bool x; std::memcpy(&x, at, sizeof x); v = x ? 1 : 0; break; }
      default: return run_status::failure(-1, what + ": its dtype must be i64, i32, i8 or b8");
    }
    values[s] = v;
  }
  return {};
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
