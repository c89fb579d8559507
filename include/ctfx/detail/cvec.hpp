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
#pragma once
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <type_traits>

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
    for (It i = first; i != last; ++i) std::construct_at(p_ + n_++, *i);
  }
  constexpr cvec(const cvec& o) : cvec(o.begin(), o.end()) {}
  constexpr cvec(cvec&& o) noexcept : p_(o.p_), n_(o.n_), cap_(o.cap_) { o.p_ = nullptr; o.n_ = o.cap_ = 0; }
  constexpr cvec& operator=(const cvec& o) {
    if (this != &o) {
      clear();
      reserve(o.n_);
      for (std::size_t i = 0; i < o.n_; ++i) std::construct_at(p_ + i, o.p_[i]);
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
      std::construct_at(p_ + n_, keep);
    } else {
      std::construct_at(p_ + n_, x);
    }
    ++n_;
  }
  // Appends [first, last) (not a range of this vector): one capacity check for all of them.
  constexpr void append(const T* first, const T* last) {
    const auto m = static_cast<std::size_t>(last - first);
    if (n_ + m > cap_) grow(n_ + m);
    for (T* q = p_ + n_; first != last; ++first, ++q) std::construct_at(q, *first);
    n_ += m;
  }
  constexpr void pop_back() { destroy_range(n_ - 1, n_); --n_; }
  constexpr void clear() { destroy_range(0, n_); n_ = 0; }
  constexpr void reserve(std::size_t c) { if (c > cap_) reserve_exact(c); }
  constexpr void resize(std::size_t m) {
    if (m < n_) { destroy_range(m, n_); n_ = m; return; }
    reserve(m);
    for (std::size_t i = n_; i < m; ++i) std::construct_at(p_ + i);
    n_ = m;
  }
  constexpr void resize(std::size_t m, const T& v) {
    if (m < n_) { destroy_range(m, n_); n_ = m; return; }
    const T keep = v;
    reserve(m);
    for (std::size_t i = n_; i < m; ++i) std::construct_at(p_ + i, keep);
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

  constexpr void grow(std::size_t need) {
    std::size_t c = cap_ ? 2 * cap_ : 8;
    if (c < need) c = need;
    reserve_exact(c);
  }
  constexpr void reserve_exact(std::size_t c) {
    if (c == 0) return;
    T* q = std::allocator<T>{}.allocate(c);
    for (std::size_t i = 0; i < n_; ++i) std::construct_at(q + i, static_cast<T&&>(p_[i]));
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
