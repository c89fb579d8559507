// bench/runtime/workloads.hpp — the benchmark workloads as graphs, shared by the host benchmark
// (runtime_bench.cpp) and the CUDA one (bench/cuda/cuda_bench.cu) so both time the same programs.
// Each workload: the graph, its input and output descriptors, host-side input contents, and the
// bytes the update must write (for the copy bound).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/runtime.hpp>
#include "../../test/common/halo.hpp"

namespace ctfx_bench {

struct workload {
  std::string name;
  ctfx::ir graph;
  std::vector<ctfx::tensor_desc> in_desc, out_desc;
  std::vector<std::vector<std::byte>> inputs;  // host contents of the inputs
  std::size_t written = 0;                     // bytes the update must write
};

// Small finite floats in every 4-byte word (and in every f16 half), deterministic.
inline std::vector<std::byte> filled(std::size_t bytes) {
  std::vector<std::byte> v(bytes);
  for (std::size_t i = 0; i < bytes; ++i) v[i] = static_cast<std::byte>((i * 131) & 0x3f);
  return v;
}

// The workloads' programs, added to the graph being built (also as compiled<G> graphs with their
// sizes in bench/runtime/inplace_workloads.hpp).
// 1. One f16 token at position pos (an input) into a [8, 32, S, 128] cache.
constexpr void kv_cache_update(ctfx::builder& b, long S) {
  auto cache = b.input("cache", ctfx::f16, {8, 32, S, 128});
  auto k = b.input("k", ctfx::f16, {8, 32, 1, 128});
  auto pos = b.input("pos", ctfx::i64, {1});
  b.update(cache, ctfx::index_put(cache, {ctfx::none, ctfx::none, pos}, k));
}
// 3. R slice_scatters into one [R, C] f32 buffer: row i takes source row (7 i) mod R.
constexpr void row_scatters(ctfx::builder& b, long R, long C) {
  auto x = b.input("x", ctfx::f32, {R, C});
  auto src = b.input("src", ctfx::f32, {R, C});
  auto y = x;
  for (long i = 0; i < R; ++i) y = ctfx::slice_scatter(y, src.slice(0, (i * 7) % R, (i * 7) % R + 1), 0, i, i + 1);
  b.update(x, y);
}
// 4. index_put with accumulate: N f32 values into B bins.
constexpr void scatter_add_into(ctfx::builder& b, long N, long B) {
  auto h = b.input("h", ctfx::f32, {B});
  auto i = b.input("i", ctfx::i64, {N});
  auto v = b.input("v", ctfx::f32, {N});
  b.update(h, ctfx::index_put(h, {i}, v, true));
}
// 5. A clone of E f32 values into the caller's output buffer.
constexpr void clone_of(ctfx::builder& b, long E) { b.output(b.input("x", ctfx::f32, {E}).clone()); }

// 1. LLM KV-cache update: one token at position S / 2 into a [8, 32, S, 128] f16 cache.
inline workload kv_cache(long S) {
  workload w;
  w.name = "kv-cache update, 1 token";
  w.graph = ctfx::build_checked([S](ctfx::builder& b) { kv_cache_update(b, S); });
  w.in_desc = {ctfx::tensor_desc::contiguous(ctfx::f16, {8, 32, S, 128}), ctfx::tensor_desc::contiguous(ctfx::f16, {8, 32, 1, 128}),
               ctfx::tensor_desc::contiguous(ctfx::i64, {1})};
  w.inputs = {filled(w.in_desc[0].span_bytes()), filled(w.in_desc[1].span_bytes()), std::vector<std::byte>(8)};
  const std::int64_t pos = S / 2;
  std::memcpy(w.inputs[2].data(), &pos, 8);
  w.written = 8 * 32 * 128 * 2;
  return w;
}

// 2. Halo exchange: the four edges (rows 0 and G-1, columns 0 and G-1, without corners) of a
//    G x G f32 grid, each from its own buffer.
inline workload halo(long G) {
  workload w;
  w.name = "halo exchange, 4 edges";
  w.graph = ctfx::build_checked([G](ctfx::builder& b) { ctfx_test::halo_edges(b, G); });
  w.in_desc = {ctfx::tensor_desc::contiguous(ctfx::f32, {G, G})};
  for (int k = 0; k < 4; ++k) w.in_desc.push_back(ctfx::tensor_desc::contiguous(ctfx::f32, {G - 2}));
  for (const auto& d : w.in_desc) w.inputs.push_back(filled(d.span_bytes()));
  w.written = 4 * static_cast<std::size_t>(G - 2) * 4;
  return w;
}

// 3. A chain of R slice_scatters into one [R, C] f32 buffer: row i takes source row (7 i) mod R.
inline workload scatter_chain(long R, long C) {
  workload w;
  w.name = "64 slice_scatters, 4 MiB";
  w.graph = ctfx::build_checked([R, C](ctfx::builder& b) { row_scatters(b, R, C); });
  w.in_desc = {ctfx::tensor_desc::contiguous(ctfx::f32, {R, C}), ctfx::tensor_desc::contiguous(ctfx::f32, {R, C})};
  for (const auto& d : w.in_desc) w.inputs.push_back(filled(d.span_bytes()));
  w.written = static_cast<std::size_t>(R * C) * 4;
  return w;
}

// 4. index_put with accumulate: N f32 values into B bins, index k -> (k * 2654435761) mod B.
inline workload scatter_add(long N, long B) {
  workload w;
  w.name = "index_put accumulate, 1M -> 1024";
  w.graph = ctfx::build_checked([N, B](ctfx::builder& b) { scatter_add_into(b, N, B); });
  w.in_desc = {ctfx::tensor_desc::contiguous(ctfx::f32, {B}), ctfx::tensor_desc::contiguous(ctfx::i64, {N}),
               ctfx::tensor_desc::contiguous(ctfx::f32, {N})};
  w.inputs = {std::vector<std::byte>(static_cast<std::size_t>(B) * 4), std::vector<std::byte>(static_cast<std::size_t>(N) * 8),
              filled(static_cast<std::size_t>(N) * 4)};
  auto* idx = reinterpret_cast<std::int64_t*>(w.inputs[1].data());
  for (long k = 0; k < N; ++k) idx[k] = (k * 2654435761L) % B;
  w.written = static_cast<std::size_t>(N) * 4;  // every value is added once (read-modify-write of a bin)
  return w;
}

// 5. A plain clone of E f32 values into the caller's output buffer.
inline workload clone(long E) {
  workload w;
  w.name = "clone, " + std::to_string(E * 4 >> 20) + " MiB";
  w.graph = ctfx::build_checked([E](ctfx::builder& b) { clone_of(b, E); });
  w.in_desc = {ctfx::tensor_desc::contiguous(ctfx::f32, {E})};
  w.out_desc = {ctfx::tensor_desc::contiguous(ctfx::f32, {E})};
  w.inputs = {filled(static_cast<std::size_t>(E) * 4)};
  w.written = static_cast<std::size_t>(E) * 4;
  return w;
}

}  // namespace ctfx_bench
