// bench/runtime/buffers.hpp — the benchmarks' host buffers, 64-byte aligned as PyTorch's CPU
// allocator aligns a tensor's storage. A std::vector's large buffer starts 16 bytes into its pages,
// so each 64-byte vector access of ctfx's loops and of the hand loops would cross two cache lines
// where torch's do not (the 8-op chain's hand loop: 4.3-5.1 ms at that offset against 3.4-4.1 ms
// aligned, -march=native, one machine and hour).
#pragma once
#include <cstddef>
#include <new>
#include <vector>

namespace ctfx_bench {

template <class T>
struct aligned_allocator {
  using value_type = T;
  static constexpr std::align_val_t alignment{64};
  aligned_allocator() = default;
  template <class U>
  aligned_allocator(const aligned_allocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), alignment)); }
  void deallocate(T* p, std::size_t n) noexcept { ::operator delete(p, n * sizeof(T), alignment); }
  template <class U>
  bool operator==(const aligned_allocator<U>&) const noexcept { return true; }
};

/// A benchmark's buffer: a std::vector whose data() is 64-byte aligned.
template <class T>
using buffer = std::vector<T, aligned_allocator<T>>;

}  // namespace ctfx_bench
