// npy_compare EXPECTED.npy ACTUAL.npy [--ulp N]
//
// Exit 0 when the two arrays have the same dtype and shape and equal elements; 1 otherwise, with
// the first differing element, how many differ and the largest distance on stderr. Integers and
// bools compare exactly. Floats compare bit for bit unless --ulp N is given: then two values within
// N units in the last place (ulp) are equal (+0 and -0 are 1 ulp apart; NaN equals NaN only).
// For ctfx_opt's tests (tools/ctfx_opt/CMakeLists.txt), which compare ctfx's outputs with PyTorch
// eager's; no NumPy is needed.
#include <ctfx/io/npy.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

// Floats as integers whose order is the floats' order, so that ulp distance is a difference.
std::int64_t ordered(std::uint64_t bits, int width) {
  const std::uint64_t sign = 1ull << (width - 1);
  const auto mag = static_cast<std::int64_t>(bits & (sign - 1));
  return (bits & sign) ? -mag - 1 : mag;
}

bool is_nan(std::uint64_t bits, ctfx::dtype dt) {
  switch (dt) {
    case ctfx::dtype::f16: return (bits & 0x7c00u) == 0x7c00u && (bits & 0x3ffu);
    case ctfx::dtype::f32: return (bits & 0x7f800000u) == 0x7f800000u && (bits & 0x7fffffu);
    case ctfx::dtype::f64: return (bits & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (bits & 0xfffffffffffffull);
    default: return false;
  }
}

double value_of(const std::byte* p, ctfx::dtype dt) {
  switch (dt) {
    case ctfx::dtype::f64: { double v; std::memcpy(&v, p, 8); return v; }
    case ctfx::dtype::f32: { float v; std::memcpy(&v, p, 4); return v; }
    case ctfx::dtype::f16: {
      std::uint16_t h;
      std::memcpy(&h, p, 2);
      const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
      double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(1024 + m, e - 25);
      return (h & 0x8000) ? -v : v;
    }
    case ctfx::dtype::i64: { std::int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case ctfx::dtype::i32: { std::int32_t v; std::memcpy(&v, p, 4); return v; }
    case ctfx::dtype::i8: return static_cast<double>(static_cast<std::int8_t>(*p));
    case ctfx::dtype::b8: return static_cast<double>(static_cast<unsigned char>(*p));
    case ctfx::dtype::bf16: break;
  }
  return 0;
}

std::string shape_text(const ctfx::tensor_desc& d) {
  std::string s = std::string(ctfx::name_of(d.dt)) + "[";
  for (int k = 0; k < d.rank; ++k) s += (k ? ", " : "") + std::to_string(d.size[k]);
  return s + "]";
}

// --normwise: the tolerance of programs with matrix products (docs/guide.md), whose BLAS adds in
// its own order: |actual - expected| <= tol * max|expected|, tol 1e-5 for f32, 1e-13 for f64 (NaN
// where the other has NaN).
int compare_normwise(const ctfx::host_array& e, const ctfx::host_array& a, char** argv) {
  const bool f32 = e.desc.dt == ctfx::dtype::f32;
  const std::size_t w = f32 ? 4 : 8, n = e.bytes.size() / w;
  auto at = [&](const ctfx::host_array& x, std::size_t k) {
    if (f32) { float v; std::memcpy(&v, x.bytes.data() + k * 4, 4); return static_cast<double>(v); }
    double v; std::memcpy(&v, x.bytes.data() + k * 8, 8); return v;
  };
  double largest = 0, worst = 0;
  std::size_t nan_at = n;
  for (std::size_t k = 0; k < n; ++k) {
    const double x = at(e, k), y = at(a, k);
    if (std::isnan(x) || std::isnan(y)) { if (std::isnan(x) != std::isnan(y) && nan_at == n) nan_at = k; continue; }
    largest = std::max(largest, std::fabs(x));
    worst = std::max(worst, std::fabs(x - y));
  }
  const double tol = f32 ? 1e-5 : 1e-13;
  if (nan_at == n && worst <= tol * largest) return 0;
  std::fprintf(stderr, "npy_compare: %s vs %s: largest difference %.3g, more than %g * max|expected| = %.3g%s\n", argv[1], argv[2], worst, tol,
               tol * largest, nan_at < n ? " (or a NaN where the other has none)" : "");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const bool normwise = argc == 4 && std::strcmp(argv[3], "--normwise") == 0;
  if (argc != 3 && !normwise && !(argc == 5 && std::strcmp(argv[3], "--ulp") == 0)) {
    std::fprintf(stderr, "usage: npy_compare EXPECTED.npy ACTUAL.npy [--ulp N | --normwise]\n");
    return 1;
  }
  const long long ulp = argc == 5 ? std::atoll(argv[4]) : 0;
  ctfx::npy_read e = ctfx::read_npy(argv[1]), a = ctfx::read_npy(argv[2]);
  if (!e || !a) {
    std::fprintf(stderr, "npy_compare: %s\n", (!e ? e : a).message.c_str());
    return 1;
  }
  if (!(e.array.desc == a.array.desc) || e.array.desc.rank != a.array.desc.rank) {
    std::fprintf(stderr, "npy_compare: %s is %s, %s is %s\n", argv[1], shape_text(e.array.desc).c_str(), argv[2],
                 shape_text(a.array.desc).c_str());
    return 1;
  }
  const ctfx::dtype dt = e.array.desc.dt;
  const int w = ctfx::size_of(dt);
  if (normwise && (dt == ctfx::dtype::f32 || dt == ctfx::dtype::f64)) return compare_normwise(e.array, a.array, argv);
  const bool fp = ctfx::is_floating(dt);
  const std::size_t n = e.array.bytes.size() / static_cast<std::size_t>(w);
  std::size_t differ = 0, first = 0;
  long long worst = 0;
  for (std::size_t k = 0; k < n; ++k) {
    std::uint64_t x = 0, y = 0;
    std::memcpy(&x, e.array.bytes.data() + k * static_cast<std::size_t>(w), static_cast<std::size_t>(w));
    std::memcpy(&y, a.array.bytes.data() + k * static_cast<std::size_t>(w), static_cast<std::size_t>(w));
    if (x == y) continue;
    long long dist = -1;  // -1: unequal at any tolerance
    if (fp && is_nan(x, dt) && is_nan(y, dt)) continue;
    if (fp && !is_nan(x, dt) && !is_nan(y, dt)) dist = std::llabs(ordered(x, 8 * w) - ordered(y, 8 * w));
    if (dist >= 0 && dist <= ulp) { worst = std::max(worst, dist); continue; }
    if (differ++ == 0) first = k;
    worst = dist < 0 ? -1 : (worst < 0 ? worst : std::max(worst, dist));
  }
  if (differ == 0) return 0;
  const std::byte* pe = e.array.bytes.data() + first * static_cast<std::size_t>(w);
  const std::byte* pa = a.array.bytes.data() + first * static_cast<std::size_t>(w);
  std::fprintf(stderr, "npy_compare: %s vs %s: %zu of %zu elements differ%s; first at flat index %zu: expected %.17g, got %.17g",
               argv[1], argv[2], differ, n, ulp ? (" by more than " + std::to_string(ulp) + " ulp").c_str() : "", first,
               value_of(pe, dt), value_of(pa, dt));
  if (fp && worst >= 0) std::fprintf(stderr, " (largest distance %lld ulp)", worst);
  std::fputc('\n', stderr);
  return 1;
}
