// bench/runtime/inplace_workloads.hpp — the in-place updates of bench/runtime/workloads.hpp
// (bench/RESULTS.md §2: a KV-cache token, a halo exchange, a chain of slice_scatters, a scatter-add,
// a clone) with their sizes in the graph, so that bench/runtime/compute_bench runs them as
// compiled<G> beside runtime_plan, the hand loops and PyTorch (bench/torch/compute.py), as the
// programs that compute (compute_workloads.hpp).
#pragma once
#include <ctfx.hpp>
#include "workloads.hpp"

namespace ctfx_bench::compute {
// (h) An LLM KV-cache update: one f16 token at a run-time position of a [8, 32, KS, 128] cache.
constexpr long KS = 8192;
constexpr auto kv_cache = ctfx::graph([](ctfx::builder& b) { kv_cache_update(b, KS); });

// (i) A halo exchange: the four edges of a HG x HG f32 grid (rows 0 and HG-1, columns 0 and HG-1,
// without corners), each from its own buffer.
constexpr long HG = 4096;
constexpr auto halo = ctfx::graph([](ctfx::builder& b) { ctfx_test::halo_edges(b, HG); });

// (j) A chain of CR slice_scatters into one [CR, CC] f32 buffer: row i takes source row (7 i) mod CR.
constexpr long CR = 64, CC = 16384;
constexpr auto scatter_chain = ctfx::graph([](ctfx::builder& b) { row_scatters(b, CR, CC); });

// (k) index_put with accumulate: AN f32 values into AB bins (duplicate indices).
constexpr long AN = 1L << 20, AB = 1024;
constexpr auto scatter_add = ctfx::graph([](ctfx::builder& b) { scatter_add_into(b, AN, AB); });

// (l) A clone of CE f32 values (256 MiB) into the caller's output buffer.
constexpr long CE = 64L << 20;
constexpr auto clone_out = ctfx::graph([](ctfx::builder& b) { clone_of(b, CE); });

}  // namespace ctfx_bench::compute
