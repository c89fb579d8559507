// ctfx/detail/cvec.hpp — a vector for the graph and the passes' working arrays, cheap in constant
// evaluation.
//
// The passes run in the compiler, where every call and every loop iteration of library code is
// interpreted. libstdc++'s std::vector pays there for what costs nothing at run time: push_back of
// an rvalue goes through emplace_back and back() (twice push_back(const T&)), and destroying or
// reallocating n trivially destructible elements still makes n destroy_at calls. Measured with
// g++ 12 on 200,000 ints (bench/RESULTS.md §1): push_back 31% and resize 40% cheaper than
// std::vector's. cvec keeps std::vector's names for the part of its interface the passes and the
// graph's users need (size, data, iteration, indexing, push_back, resize), so the graph's own
// pools (ir::nodes, args, params, ...) are cvecs too.
//
// Under g++ a trivially copyable element is written by plain assignment in constant evaluation
// (CTFX_CVEC_ASSIGN_INIT): g++ accepts an assignment to allocated storage whose lifetime
// construct_at has not begun (libstdc++'s own constexpr fill_n and uninitialized_value_construct_n
// rely on it), and there a construct_at is a call, ~4x dearer than the assignment (g++ 12, copying
// 200,000 nodes: 8.7 us vs 2 us each; bench/RESULTS.md §1). clang and nvcc's front end reject that
// assignment, and at run time it would begin no lifetime: both keep construct_at.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include "../core/config.hpp"

#define CTFX_CVEC_ASSIGN_INIT CTFX_GXX_FRONTEND

namespace ctfx::detail {

template <class T>
class cvec {
 public:
  using value_type = T;
  using size_type = std::size_t;
  using iterator = T*;
  using const_iterator = const T*;

  constexpr cvec() = default;
  constexpr explicit cvec(std::size_t n) { resize(n); }
  constexpr cvec(std::size_t n, const T& v) { assign(n, v); }
  constexpr cvec(std::initializer_list<T> l) : cvec(l.begin(), l.end()) {}
  template <class It, class = decltype(*std::declval<It&>()), class = decltype(++std::declval<It&>())>
  constexpr cvec(It first, It last) {
    std::size_t m = 0;
    if constexpr (std::is_pointer_v<It>) m = static_cast<std::size_t>(last - first);
    else for (It i = first; i != last; ++i) ++m;
    reserve_exact(m);
    if constexpr (std::is_pointer_v<It>) {
      put_range(p_, p_, first, m);
      n_ = m;
    } else {
      for (It i = first; i != last; ++i) std::construct_at(p_ + n_++, *i);
    }
  }
  constexpr cvec(const cvec& o) : cvec(o.begin(), o.end()) {}
  constexpr cvec(cvec&& o) noexcept : p_(o.p_), n_(o.n_), cap_(o.cap_) { o.p_ = nullptr; o.n_ = o.cap_ = 0; }
  constexpr cvec& operator=(const cvec& o) {
    if (this != &o) {
      clear();
      reserve(o.n_);
      put_range(p_, p_, o.p_, o.n_);
      n_ = o.n_;
    }
    return *this;
  }
  constexpr cvec& operator=(cvec&& o) noexcept {
    if (this != &o) {
      release();
      p_ = o.p_; n_ = o.n_; cap_ = o.cap_;
      o.p_ = nullptr; o.n_ = o.cap_ = 0;
    }
    return *this;
  }
  constexpr ~cvec() { release(); }

  constexpr std::size_t size() const { return n_; }
  constexpr bool empty() const { return n_ == 0; }
  constexpr std::size_t capacity() const { return cap_; }
  constexpr T* data() { return p_; }
  constexpr const T* data() const { return p_; }
  constexpr T* begin() { return p_; }
  constexpr T* end() { return p_ + n_; }
  constexpr const T* begin() const { return p_; }
  constexpr const T* end() const { return p_ + n_; }
  constexpr T& operator[](std::size_t i) { return p_[i]; }
  constexpr const T& operator[](std::size_t i) const { return p_[i]; }
  constexpr T& front() { return p_[0]; }
  constexpr T& back() { return p_[n_ - 1]; }
  constexpr const T& back() const { return p_[n_ - 1]; }

  // One overload for lvalues and temporaries alike (the cheap path of std::vector::push_back).
  constexpr void push_back(const T& x) {
    if (n_ == cap_) {
      const T keep = x;  // x may be an element of this vector
      grow(n_ + 1);
      put_range(p_, p_ + n_, &keep, 1);
    } else {
      if constexpr (assign_init) {
        if (__builtin_is_constant_evaluated() && n_ > 0) {  // see put_range
          p_[n_++] = x;
          return;
        }
      }
      std::construct_at(p_ + n_, x);
    }
    ++n_;
  }
  // Appends [first, last) (not a range of this vector): one capacity check for all of them.
  constexpr void append(const T* first, const T* last) {
    const auto m = static_cast<std::size_t>(last - first);
    if (n_ + m > cap_) grow(n_ + m);
    put_range(p_, p_ + n_, first, m);
    n_ += m;
  }
  constexpr void pop_back() { destroy_range(n_ - 1, n_); --n_; }
  constexpr void clear() { destroy_range(0, n_); n_ = 0; }
  constexpr void reserve(std::size_t c) { if (c > cap_) reserve_exact(c); }
  constexpr void resize(std::size_t m) {
    if (m < n_) { destroy_range(m, n_); n_ = m; return; }
    reserve(m);
    if constexpr (assign_init) {
      if (__builtin_is_constant_evaluated() && m > n_) {
        const T v{};
        put_fill(p_, p_ + n_, v, m - n_);
        n_ = m;
        return;
      }
    }
    for (std::size_t i = n_; i < m; ++i) std::construct_at(p_ + i);
    n_ = m;
  }
  constexpr void resize(std::size_t m, const T& v) {
    if (m < n_) { destroy_range(m, n_); n_ = m; return; }
    const T keep = v;
    reserve(m);
    put_fill(p_, p_ + n_, keep, m - n_);
    n_ = m;
  }
  constexpr void assign(std::size_t m, const T& v) {
    const T keep = v;
    clear();
    resize(m, keep);
  }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0, cap_ = 0;

  static constexpr bool assign_init = CTFX_CVEC_ASSIGN_INIT != 0 && std::is_trivially_copyable_v<T>;
  // Begins the lifetimes of to[0, m) with the values from[0, m) (not overlapping); `start` is the
  // beginning of to's allocation. Under g++'s constant evaluation (assign_init) by assignment,
  // after a construct_at of the allocation's first element (when to is start), as libstdc++'s
  // fill_n does; otherwise construct_at.
  static constexpr void put_range(T* start, T* to, const T* from, std::size_t m) {
    if constexpr (assign_init) {
      if (__builtin_is_constant_evaluated() && m > 0) {
        std::size_t i = 0;
        if (to == start) { std::construct_at(to, from[0]); i = 1; }
        for (; i < m; ++i) to[i] = from[i];
        return;
      }
    }
    for (std::size_t i = 0; i < m; ++i) std::construct_at(to + i, from[i]);
  }
  static constexpr void put_fill(T* start, T* to, const T& v, std::size_t m) {
    if constexpr (assign_init) {
      if (__builtin_is_constant_evaluated() && m > 0) {
        std::size_t i = 0;
        if (to == start) { std::construct_at(to, v); i = 1; }
        for (; i < m; ++i) to[i] = v;
        return;
      }
    }
    for (std::size_t i = 0; i < m; ++i) std::construct_at(to + i, v);
  }

  constexpr void grow(std::size_t need) {
    std::size_t c = cap_ ? 2 * cap_ : 8;
    if (c < need) c = need;
    reserve_exact(c);
  }
  constexpr void reserve_exact(std::size_t c) {
    if (c == 0) return;
    T* q = std::allocator<T>{}.allocate(c);
    if constexpr (std::is_trivially_copyable_v<T>) {
      put_range(q, q, p_, n_);
    } else {
      for (std::size_t i = 0; i < n_; ++i) std::construct_at(q + i, static_cast<T&&>(p_[i]));
    }
    release();
    p_ = q;
    cap_ = c;
  }
  // Trivially destructible elements need no destroy_at: their lifetime ends with the storage.
  constexpr void destroy_range(std::size_t from, std::size_t to) {
    if constexpr (!std::is_trivially_destructible_v<T>)
      for (std::size_t i = from; i < to; ++i) std::destroy_at(p_ + i);
  }
  constexpr void release() {
    if (!p_) return;
    destroy_range(0, n_);
    std::allocator<T>{}.deallocate(p_, cap_);
    p_ = nullptr;
    cap_ = 0;
  }
};

}  // namespace ctfx::detail
#include "../core/diagnostics_pop.hpp"
