// ctfx/io/npy.hpp — NumPy .npy files in and out of host memory, for tools and tests that exchange
// tensors with PyTorch (tools/ctfx_opt, tools/fx_capture). ctfx: host-only
//
//   ctfx::npy_read r = ctfx::read_npy("x.npy");          // r.ok, r.message, r.array
//   ctfx::tensor_ref x = r.array.ref();                   // contiguous, owned by r.array
//   ctfx::npy_status s = ctfx::write_npy("y.npy", y);     // any strides; written in C order
//
// Format: versions 1.0, 2.0 and 3.0 of the header, little-endian data, C order or Fortran order (read
// into C order: a Fortran array's elements are reordered as it is read), rank <= ctfx::max_rank. dtypes: '<f8' '<f4' '<f2' '<i8' '<i4' '|i1' '|b1' (ctfx's
// f64 f32 f16 i64 i32 i8 b8). bfloat16 has no NumPy dtype ('<V2' would lose the type), so a bf16
// tensor is refused on write with a message saying so; convert it to f32 first.
//
// Writing never leaves a partial file: the bytes go to a temporary file in the target directory,
// which is renamed over the target only when complete. npy_batch does the same for several files
// at once: nothing appears until commit(), and a batch dropped without commit() removes its
// temporaries.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstddef>
#include <cstdint>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>
#include "../exec/tensor.hpp"

namespace ctfx {

// A tensor that owns its bytes (contiguous, C order).
struct host_array {
  tensor_desc desc{};
  std::vector<std::byte> bytes;

  tensor_ref ref() { return {bytes.data(), desc}; }
  /// The same elements laid out with `stride` (one per dimension, in elements, >= 0, no two
  /// elements at one place): what a caller passes to a graph whose input PyTorch printed with those
  /// strides. Empty `message` on success.
  static host_array laid_out(const host_array& a, const index_t* stride, std::string& message);
  static host_array zeros(const tensor_desc& d) {
    host_array a;
    a.desc = d;
    a.desc.set_contiguous();
    a.bytes.resize(static_cast<std::size_t>(d.numel()) * static_cast<std::size_t>(size_of(d.dt)));
    return a;
  }
};

struct npy_status {
  bool ok = true;
  std::string message;  // on failure: the file and what is wrong with it
  explicit operator bool() const { return ok; }
};

struct npy_read {
  bool ok = false;
  std::string message;
  host_array array;
  explicit operator bool() const { return ok; }
};

namespace npy {

inline constexpr char magic[] = "\x93NUMPY";

// NumPy's descr for a ctfx dtype ("" for bf16, which has none).
constexpr std::string_view descr_of(dtype d) {
  switch (d) {
    case dtype::f64: return "<f8";
    case dtype::f32: return "<f4";
    case dtype::f16: return "<f2";
    case dtype::i64: return "<i8";
    case dtype::i32: return "<i4";
    case dtype::i8: return "|i1";
    case dtype::b8: return "|b1";
    case dtype::bf16: return "";
  }
  return "";
}
constexpr bool dtype_of(std::string_view descr, dtype& d) {
  constexpr dtype all[] = {dtype::f64, dtype::f32, dtype::f16, dtype::i64, dtype::i32, dtype::i8, dtype::b8};
  for (dtype x : all)
    if (descr_of(x) == descr) { d = x; return true; }
  return false;
}

// The Python-literal header dict, just enough of it: 'key': value, with value a quoted string,
// True/False, or a tuple of integers.
class header_reader {
 public:
  explicit header_reader(std::string_view s) : s_(s) {}

  bool parse(std::string& descr, bool& fortran, std::vector<index_t>& shape, std::string& err) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    skip();
    if (!eat('{')) return fail(err, "expected '{' at the start of the header");
    for (;;) {
      skip();
      if (eat('}')) break;
      std::string key;
      if (!quoted(key)) return fail(err, "expected a quoted key");
      skip();
      if (!eat(':')) return fail(err, "expected ':' after '" + key + "'");
      skip();
      if (key == "descr") {
        if (!quoted(descr)) return fail(err, "'descr' is not a string");
        have_descr = true;
      } else if (key == "fortran_order") {
        if (s_.substr(i_, 4) == "True") { fortran = true; i_ += 4; }
        else if (s_.substr(i_, 5) == "False") { fortran = false; i_ += 5; }
        else return fail(err, "'fortran_order' is neither True nor False");
        have_fortran = true;
      } else if (key == "shape") {
        if (!tuple(shape, err)) return false;
        have_shape = true;
      } else {
        return fail(err, "unknown key '" + key + "'");
      }
      skip();
      if (eat(',')) continue;
      skip();
      if (eat('}')) break;
      return fail(err, "expected ',' or '}' after '" + key + "'");
    }
    if (!have_descr || !have_fortran || !have_shape)
      return fail(err, std::string("missing key '") + (!have_descr ? "descr" : !have_fortran ? "fortran_order" : "shape") + "'");
    return true;
  }

 private:
  std::string_view s_;
  std::size_t i_ = 0;
  static bool fail(std::string& err, std::string m) { err = static_cast<std::string&&>(m); return false; }
  void skip() { while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n')) ++i_; }
  bool eat(char c) {
    if (i_ < s_.size() && s_[i_] == c) { ++i_; return true; }
    return false;
  }
  bool quoted(std::string& out) {
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) return false;
    const char q = s_[i_++];
    const std::size_t e = s_.find(q, i_);
    if (e == std::string_view::npos) return false;
    out.assign(s_.substr(i_, e - i_));
    i_ = e + 1;
    return true;
  }
  bool tuple(std::vector<index_t>& shape, std::string& err) {
    if (!eat('(')) return fail(err, "'shape' is not a tuple");
    for (;;) {
      skip();
      if (eat(')')) return true;
      if (i_ >= s_.size() || s_[i_] < '0' || s_[i_] > '9') return fail(err, "'shape' holds something other than a non-negative integer");
      index_t v = 0;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
        if (v > (INT64_MAX - 9) / 10) return fail(err, "a dimension of 'shape' is too large");
        v = v * 10 + (s_[i_++] - '0');
      }
      if (i_ < s_.size() && s_[i_] == 'L') ++i_;  // Python 2 longs
      shape.push_back(v);
      skip();
      if (eat(',')) continue;
      skip();
      if (eat(')')) return true;
      return fail(err, "expected ',' or ')' in 'shape'");
    }
  }
};

inline std::uint32_t load_le(const std::byte* p, int n) {
  std::uint32_t v = 0;
  for (int k = n - 1; k >= 0; --k) v = (v << 8) | static_cast<std::uint32_t>(p[k]);
  return v;
}

// Visits the elements of `t` in C order, in runs of contiguous elements (a run is the innermost
// dimension when its stride is 1, else one element).
template <class F>
void for_each_run(const tensor_desc& t, F&& f) {
  if (t.numel() == 0) return;
  const int r = t.rank;
  const bool inner_dense = r > 0 && t.stride[r - 1] == 1;
  const index_t run = inner_dense ? t.size[r - 1] : 1;
  const int outer = inner_dense ? r - 1 : r;
  index_t idx[max_rank]{};
  for (;;) {
    index_t off = 0;
    for (int d = 0; d < outer; ++d) off += idx[d] * t.stride[d];
    f(off, run);
    int d = outer - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < t.size[d]) break;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace npy

inline host_array host_array::laid_out(const host_array& a, const index_t* stride, std::string& message) {
  host_array r;
  r.desc = a.desc;
  const int n = a.desc.rank;
  // Non-overlapping: visited by increasing stride, each dimension must step over all before it.
  int order[max_rank]{};
  for (int d = 0; d < n; ++d) order[d] = d;
  for (int k = 1; k < n; ++k)  // insertion sort of at most max_rank dimensions
    for (int j = k; j > 0 && stride[order[j]] < stride[order[j - 1]]; --j) std::swap(order[j], order[j - 1]);
  index_t span = 1;  // elements covered by the dimensions so far
  for (int k = 0; k < n; ++k) {
    const int d = order[k];
    if (stride[d] < 0) { message = "a negative stride is not a layout an input can have"; return r; }
    if (a.desc.size[d] > 1 && stride[d] < span) {
      message = "strides (" + std::to_string(stride[0]);
      for (int e = 1; e < n; ++e) message += ", " + std::to_string(stride[e]);
      message += ") place two elements at one address: give each dimension a stride past the ones inside it";
      return r;
    }
    if (a.desc.size[d] > 1) span = stride[d] * (a.desc.size[d] - 1) + span;
  }
  for (int d = 0; d < n; ++d) r.desc.stride[d] = stride[d];
  const auto item = static_cast<std::size_t>(size_of(a.desc.dt));
  r.bytes.assign(a.desc.numel() == 0 ? 0 : static_cast<std::size_t>(span) * item, std::byte{0});
  // a is C-order contiguous: its elements in order, placed at their offsets under the new strides.
  tensor_desc dst = r.desc;
  std::size_t src = 0;
  npy::for_each_run(dst, [&](index_t off, index_t len) {  // runs of C-order elements
    std::memcpy(r.bytes.data() + static_cast<std::size_t>(off) * item, a.bytes.data() + src * item, static_cast<std::size_t>(len) * item);
    src += static_cast<std::size_t>(len);
  });
  return r;
}


// A .npy file's bytes (header and data) for a tensor of any strides; the data in C order.
inline npy_status encode_npy(const tensor_ref& t, std::vector<std::byte>& out) {
  const std::string_view descr = npy::descr_of(t.dt);
  if (descr.empty())
    return {false, "bfloat16 has no NumPy dtype: convert the tensor to float32 before writing it as .npy"};
  if (t.rank < 0 || t.rank > max_rank) return {false, "rank " + std::to_string(t.rank) + " is out of range"};
  if (t.numel() > 0 && t.data == nullptr) return {false, "the tensor has no data"};
  std::string dict = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (";
  for (int d = 0; d < t.rank; ++d) dict += std::to_string(t.size[d]) + (t.rank == 1 ? "," : d + 1 < t.rank ? ", " : "");
  dict += "), }";
  // Padded as np.save pads (so the bytes are NumPy's): room for the first dimension to grow to 21
  // digits, then spaces and a newline up to a multiple of 64 bytes; version 1.0 unless the header
  // needs more than 65535 bytes.
  if (t.rank > 0) dict.append(21 - std::min<std::size_t>(21, std::to_string(t.size[0]).size()), ' ');
  const bool v2 = dict.size() + 1 + 10 > 65535;
  const std::size_t prefix = v2 ? 12 : 10;
  std::size_t total = prefix + dict.size() + 1;
  total = (total + 63) / 64 * 64;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict += '\n';
  const std::size_t item = static_cast<std::size_t>(size_of(t.dt));
  out.clear();
  out.reserve(total + static_cast<std::size_t>(t.numel()) * item);
  for (int k = 0; k < 6; ++k) out.push_back(static_cast<std::byte>(npy::magic[k]));
  out.push_back(std::byte{static_cast<unsigned char>(v2 ? 2 : 1)});
  out.push_back(std::byte{0});
  const std::size_t hl = dict.size();
  for (std::size_t k = 0; k < (v2 ? 4u : 2u); ++k) out.push_back(static_cast<std::byte>((hl >> (8 * k)) & 0xff));
  for (char c : dict) out.push_back(static_cast<std::byte>(c));
  const auto* base = static_cast<const std::byte*>(t.data);
  npy::for_each_run(t, [&](index_t off, index_t n) {
    const std::byte* p = base + off * static_cast<index_t>(item);
    out.insert(out.end(), p, p + static_cast<std::size_t>(n) * item);
  });
  return {};
}

// Parses a .npy file's bytes; `what` names the source in messages.
inline npy_read decode_npy(std::span<const std::byte> b, std::string_view what = "npy data") {
  npy_read r;
  auto fail = [&](const std::string& m) {
    r.ok = false;
    r.message = std::string(what) + ": " + m;
    return static_cast<npy_read&&>(r);
  };
  if (b.size() < 10 || std::memcmp(b.data(), npy::magic, 6) != 0) return fail("not a .npy file (no \\x93NUMPY magic)");
  const int major = static_cast<int>(b[6]);
  if (major < 1 || major > 3)
    return fail("unsupported .npy version " + std::to_string(major) + "." + std::to_string(static_cast<int>(b[7])));
  const std::size_t prefix = major == 1 ? 10 : 12;
  if (b.size() < prefix) return fail("truncated header");
  const std::size_t hl = npy::load_le(b.data() + 8, major == 1 ? 2 : 4);
  if (b.size() < prefix + hl) return fail("truncated header: it says " + std::to_string(hl) + " bytes");
  std::string_view text(reinterpret_cast<const char*>(b.data() + prefix), hl);
  std::string descr, err;
  bool fortran = false;
  std::vector<index_t> shape;
  if (!npy::header_reader(text).parse(descr, fortran, shape, err)) return fail("malformed header: " + err);
  dtype dt{};
  if (!npy::dtype_of(descr, dt)) {
    if (!descr.empty() && descr[0] == '>') return fail("big-endian dtype '" + descr + "' is not supported");
    return fail("unsupported dtype '" + descr + "' (supported: <f8 <f4 <f2 <i8 <i4 |i1 |b1; bfloat16 has no NumPy dtype)");
  }
  if (static_cast<int>(shape.size()) > max_rank)
    return fail("rank " + std::to_string(shape.size()) + " exceeds ctfx's maximum rank " + std::to_string(max_rank));
  tensor_desc d;
  d.dt = dt;
  d.rank = static_cast<int>(shape.size());
  std::size_t numel = 1;
  for (int k = 0; k < d.rank; ++k) {
    d.size[k] = shape[static_cast<std::size_t>(k)];
    if (d.size[k] != 0 && numel > SIZE_MAX / static_cast<std::size_t>(d.size[k])) return fail("shape too large");
    numel *= static_cast<std::size_t>(d.size[k]);
  }
  d.set_contiguous();
  const std::size_t want = numel * static_cast<std::size_t>(size_of(dt));
  const std::size_t have = b.size() - prefix - hl;
  if (have != want)
    return fail("data is " + std::to_string(have) + " bytes, the header says " + std::to_string(want) + " (" +
                std::to_string(numel) + " x " + descr + ")");
  r.array.desc = d;
  r.array.bytes.assign(b.begin() + static_cast<std::ptrdiff_t>(prefix + hl), b.end());
  if (fortran && d.rank > 1) {  // column-major data: element (i0, ..., ik) at sum(i_d * prod(size[<d]))
    const std::vector<std::byte> f = r.array.bytes;
    const auto es = static_cast<std::size_t>(size_of(dt));
    index_t idx[max_rank]{};
    std::size_t fo = 0;  // the element's offset in the Fortran data
    std::size_t fstride[max_rank];
    for (int k = 0, acc = 1; k < d.rank; ++k) {
      fstride[k] = static_cast<std::size_t>(acc);
      acc *= static_cast<int>(d.size[k]);
    }
    for (std::size_t e = 0; e < numel; ++e) {  // C order: the last index fastest
      std::memcpy(r.array.bytes.data() + e * es, f.data() + fo * es, es);
      for (int k = d.rank - 1; k >= 0; --k) {
        fo += fstride[k];
        if (++idx[k] < d.size[k]) break;
        fo -= fstride[k] * static_cast<std::size_t>(d.size[k]);
        idx[k] = 0;
      }
    }
  }
  r.ok = true;
  return r;
}

inline npy_read read_npy(const std::filesystem::path& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    npy_read r;
    r.message = path.string() + ": cannot open: " + std::strerror(errno);
    return r;
  }
  std::vector<std::byte> b;
  std::byte buf[1 << 16];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) b.insert(b.end(), buf, buf + n);
  const bool bad = std::ferror(f) != 0;
  std::fclose(f);
  if (bad) {
    npy_read r;
    r.message = path.string() + ": read error";
    return r;
  }
  return decode_npy(b, path.string());
}

// Several files written together: each goes to a temporary file beside its target, and commit()
// renames them all. Without commit(), the destructor removes the temporaries, so a failure on the
// way leaves no file at all.
class npy_batch {
 public:
  npy_batch() = default;
  npy_batch(const npy_batch&) = delete;
  npy_batch& operator=(const npy_batch&) = delete;
  ~npy_batch() { discard(); }

  npy_status add(const std::filesystem::path& target, const tensor_ref& t) {
    std::vector<std::byte> bytes;
    npy_status s = encode_npy(t, bytes);
    if (!s) { s.message = target.string() + ": " + s.message; return s; }
    // A name no other writer uses: this batch's address, a counter, and exclusive creation.
    for (int attempt = 0; attempt < 100; ++attempt) {
      std::filesystem::path tmp = target;
      tmp += ".tmp-" + std::to_string(reinterpret_cast<std::uintptr_t>(this) % 1000003) + "-" +
             std::to_string(pending_.size()) + "-" + std::to_string(attempt);
      std::FILE* f = std::fopen(tmp.c_str(), "wbx");
      if (!f) {
        if (errno == EEXIST) continue;
        return {false, tmp.string() + ": cannot create: " + std::strerror(errno)};
      }
      pending_.emplace_back(tmp, target);
      const bool wrote = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
      const bool closed = std::fclose(f) == 0;
      if (!wrote || !closed) return {false, tmp.string() + ": write failed: " + std::strerror(errno)};
      return {};
    }
    return {false, target.string() + ": no free temporary name"};
  }

  npy_status commit() {
    for (std::size_t k = 0; k < pending_.size(); ++k) {
      std::error_code ec;
      std::filesystem::rename(pending_[k].first, pending_[k].second, ec);
      if (ec) {
        pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(k));
        return {false, pending_.front().second.string() + ": cannot rename into place: " + ec.message()};
      }
    }
    pending_.clear();
    return {};
  }

  void discard() {
    for (auto& p : pending_) {
      std::error_code ec;
      std::filesystem::remove(p.first, ec);
    }
    pending_.clear();
  }

 private:
  std::vector<std::pair<std::filesystem::path, std::filesystem::path>> pending_;
};

// Writes one tensor (any strides) as a C-order .npy file, through a temporary file and a rename.
inline npy_status write_npy(const std::filesystem::path& path, const tensor_ref& t) {
  npy_batch b;
  if (npy_status s = b.add(path, t); !s) return s;
  return b.commit();
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
