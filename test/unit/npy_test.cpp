// Tests of io/npy.hpp: every supported dtype round-trips through a file; strided tensors are written
// in C order; the bytes written are those np.save writes (the files that tools/fx_capture saved
// with NumPy re-encode to themselves); malformed files are refused with a message saying why.
#include <doctest/doctest.h>
#include <algorithm>

#include <ctfx/io/npy.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// A fresh directory per test case, removed at the end.
struct temp_dir {
  fs::path path;
  temp_dir() {
    path = fs::temp_directory_path() / ("ctfx_npy_test_" + std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::vector<std::string> files() const {
    std::vector<std::string> v;
    for (auto& e : fs::directory_iterator(path)) v.push_back(e.path().filename().string());
    return v;
  }
};

std::vector<std::byte> bytes_of(std::string_view s) {
  std::vector<std::byte> b;
  for (char c : s) b.push_back(static_cast<std::byte>(c));
  return b;
}

// A .npy file's bytes from a header dict and raw data, version 1.0, without NumPy's padding.
std::vector<std::byte> npy_file(std::string_view dict, std::size_t data_bytes, int major = 1) {
  std::string s = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  const std::size_t hl = dict.size();
  s += static_cast<char>(hl & 0xff);
  s += static_cast<char>((hl >> 8) & 0xff);
  if (major > 1) s += std::string(2, '\0');
  s += dict;
  s += std::string(data_bytes, '\0');
  return bytes_of(s);
}

std::string data_dir() {
  std::string f = __FILE__;
  return f.substr(0, f.rfind('/')) + "/../data/fx/";
}

}  // namespace

TEST_CASE("npy: every dtype round-trips through a file, bit for bit") {
  temp_dir d;
  const ctfx::dtype all[] = {ctfx::f64, ctfx::f32, ctfx::f16, ctfx::i64, ctfx::i32, ctfx::i8, ctfx::b8};
  for (ctfx::dtype dt : all) {
    CAPTURE(ctfx::name_of(dt));
    ctfx::host_array a = ctfx::host_array::zeros(ctfx::tensor_desc::contiguous(dt, {3, 5}));
    for (std::size_t k = 0; k < a.bytes.size(); ++k)
      a.bytes[k] = static_cast<std::byte>(dt == ctfx::b8 ? k % 2 : (k * 37 + 11) & 0xff);
    const fs::path p = d.path / (std::string(ctfx::name_of(dt)) + ".npy");
    REQUIRE(ctfx::write_npy(p, a.ref()).ok);
    ctfx::npy_read r = ctfx::read_npy(p);
    REQUIRE_MESSAGE(r.ok, r.message);
    CHECK(r.array.desc == a.desc);
    CHECK(r.array.desc.rank == 2);
    CHECK(r.array.desc.stride[0] == 5);
    CHECK(r.array.bytes == a.bytes);
  }
  // Rank 0 (a scalar) and an empty tensor.
  double pi = 3.141592653589793;
  REQUIRE(ctfx::write_npy(d.path / "s.npy", ctfx::tensor_ref{&pi, ctfx::tensor_desc::contiguous(ctfx::f64, {})}).ok);
  ctfx::npy_read s = ctfx::read_npy(d.path / "s.npy");
  REQUIRE(s.ok);
  CHECK(s.array.desc.rank == 0);
  REQUIRE(s.array.bytes.size() == 8);
  CHECK(std::memcmp(s.array.bytes.data(), &pi, 8) == 0);
  REQUIRE(ctfx::write_npy(d.path / "e.npy", ctfx::tensor_ref{nullptr, ctfx::tensor_desc::contiguous(ctfx::i32, {0, 4})}).ok);
  ctfx::npy_read e = ctfx::read_npy(d.path / "e.npy");
  REQUIRE(e.ok);
  CHECK(e.array.desc.size[0] == 0);
  CHECK(e.array.desc.size[1] == 4);
  CHECK(e.array.bytes.empty());
  // Only the targets remain: no temporary file is left beside them.
  CHECK(d.files().size() == 9);
}

TEST_CASE("npy: the header is NumPy's, byte for byte") {
  float x[6] = {0, 1, 2, 3, 4, 5};
  std::vector<std::byte> b;
  REQUIRE(ctfx::encode_npy(ctfx::tensor_ref::contiguous(x, ctfx::f32, {2, 3}), b).ok);
  // What np.save(np.arange(6, dtype='<f4').reshape(2, 3)) writes (NumPy 2.4).
  const std::string header = std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                             "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" + std::string(58, ' ') + "\n";
  REQUIRE(b.size() == header.size() + sizeof x);
  CHECK(std::string(reinterpret_cast<const char*>(b.data()), header.size()) == header);
  CHECK(std::memcmp(b.data() + header.size(), x, sizeof x) == 0);

  // Files that NumPy saved (tools/fx_capture) decode, and re-encode to the same bytes.
  int seen = 0, fortran = 0;
  for (auto& entry : fs::directory_iterator(data_dir())) {
    if (entry.path().extension() != ".npy") continue;
    CAPTURE(entry.path().string());
    std::ifstream in(entry.path(), std::ios::binary);
    std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::byte> file(raw.size());
    std::memcpy(file.data(), raw.data(), raw.size());
    ctfx::npy_read r = ctfx::decode_npy(file, entry.path().string());
    REQUIRE_MESSAGE(r.ok, r.message);
    std::vector<std::byte> again;
    REQUIRE(ctfx::encode_npy(r.array.ref(), again).ok);
    // ctfx writes C order; a file NumPy saved in Fortran order re-encodes to the bytes NumPy writes
    // for the same array in C order: the same header but for the flag, the elements reordered.
    const std::string_view head(reinterpret_cast<const char*>(file.data()), std::min<std::size_t>(file.size(), 128));
    if (head.find("'fortran_order': True") != std::string_view::npos) {
      ctfx::npy_read back = ctfx::decode_npy(again, "re-encoded");
      REQUIRE(back.ok);
      CHECK(back.array.bytes == r.array.bytes);
      ++fortran;
      continue;
    }
    CHECK(again == file);
    ++seen;
  }
  CHECK(seen >= 20);
  CHECK(fortran >= 1);
}

TEST_CASE("npy: a strided tensor is written in C order") {
  temp_dir d;
  // A 3x4 row-major buffer; write its transpose (strides 1, 4) and a stride-2 column slice.
  std::int32_t buf[12];
  for (int k = 0; k < 12; ++k) buf[k] = k;
  ctfx::tensor_desc t;
  t.dt = ctfx::i32;
  t.rank = 2;
  t.size[0] = 4; t.size[1] = 3;
  t.stride[0] = 1; t.stride[1] = 4;
  REQUIRE(ctfx::write_npy(d.path / "t.npy", ctfx::tensor_ref{buf, t}).ok);
  ctfx::npy_read r = ctfx::read_npy(d.path / "t.npy");
  REQUIRE(r.ok);
  CHECK(r.array.desc.stride[0] == 3);
  CHECK(r.array.desc.stride[1] == 1);
  std::vector<std::int32_t> got(12);
  std::memcpy(got.data(), r.array.bytes.data(), 48);
  CHECK(got == std::vector<std::int32_t>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});

  ctfx::tensor_desc c;  // buf[:, 1::2] : sizes (3, 2), strides (4, 2), starting at element 1
  c.dt = ctfx::i32;
  c.rank = 2;
  c.size[0] = 3; c.size[1] = 2;
  c.stride[0] = 4; c.stride[1] = 2;
  REQUIRE(ctfx::write_npy(d.path / "c.npy", ctfx::tensor_ref{buf + 1, c}).ok);
  ctfx::npy_read rc = ctfx::read_npy(d.path / "c.npy");
  REQUIRE(rc.ok);
  std::vector<std::int32_t> col(6);
  std::memcpy(col.data(), rc.array.bytes.data(), 24);
  CHECK(col == std::vector<std::int32_t>{1, 3, 5, 7, 9, 11});

  ctfx::tensor_desc bc;  // a broadcast row (stride 0)
  bc.dt = ctfx::i32;
  bc.rank = 2;
  bc.size[0] = 2; bc.size[1] = 3;
  bc.stride[0] = 0; bc.stride[1] = 1;
  REQUIRE(ctfx::write_npy(d.path / "b.npy", ctfx::tensor_ref{buf, bc}).ok);
  ctfx::npy_read rb = ctfx::read_npy(d.path / "b.npy");
  REQUIRE(rb.ok);
  std::vector<std::int32_t> row(6);
  std::memcpy(row.data(), rb.array.bytes.data(), 24);
  CHECK(row == std::vector<std::int32_t>{0, 1, 2, 0, 1, 2});
}

TEST_CASE("npy: malformed files and unsupported types are refused with a message") {
  auto msg = [](const std::vector<std::byte>& b) {
    ctfx::npy_read r = ctfx::decode_npy(b, "x.npy");
    CHECK_FALSE(r.ok);
    return r.message;
  };
  CHECK(msg(bytes_of("PK\x03\x04 not numpy at all")) == "x.npy: not a .npy file (no \\x93NUMPY magic)");
  CHECK(msg(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8, 4)) ==
        "x.npy: unsupported .npy version 4.0");
  CHECK(msg(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 4)) ==
        "x.npy: data is 4 bytes, the header says 8 (2 x <f4)");
  CHECK(msg(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 12)) ==
        "x.npy: data is 12 bytes, the header says 8 (2 x <f4)");
  CHECK(msg(npy_file("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8)) ==
        "x.npy: big-endian dtype '>f4' is not supported");
  CHECK(msg(npy_file("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 16)).find("unsupported dtype '<c8'") !=
        std::string::npos);
  CHECK(msg(npy_file("{'descr': '<f4', 'shape': (2,), }", 8)) == "x.npy: malformed header: missing key 'fortran_order'");
  CHECK(msg(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }", 8)) ==
        "x.npy: malformed header: 'shape' holds something other than a non-negative integer");
  CHECK(msg(npy_file("{'descr': '<f4', 'fortran_order': False 'shape': (2,), }", 8)) ==
        "x.npy: malformed header: expected ',' or '}' after 'fortran_order'");
  CHECK(msg(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1), }", 4))
            .find("rank 7 exceeds") != std::string::npos);
  // A header longer than the file.
  std::vector<std::byte> cut = npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8);
  cut.resize(30);
  CHECK(msg(cut).find("truncated header") != std::string::npos);
  // Version 2.0 headers (4-byte length) are read.
  ctfx::npy_read v2 = ctfx::decode_npy(npy_file("{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", 24, 2));
  CHECK_MESSAGE(v2.ok, v2.message);
  CHECK(v2.array.desc.dt == ctfx::i64);

  // A missing file names the path; bf16 has no NumPy dtype and is refused before any file exists.
  temp_dir d;
  CHECK(ctfx::read_npy(d.path / "none.npy").message.find("none.npy: cannot open") != std::string::npos);
  std::uint16_t h[2] = {0x3f80, 0x4000};
  ctfx::npy_status s = ctfx::write_npy(d.path / "bf.npy", ctfx::tensor_ref::contiguous(static_cast<void*>(h), ctfx::bf16, {2}));
  CHECK_FALSE(s.ok);
  CHECK(s.message.find("bfloat16 has no NumPy dtype") != std::string::npos);
  CHECK(d.files().empty());
}

TEST_CASE("npy: a batch writes nothing until commit, and nothing at all if dropped") {
  temp_dir d;
  float x[2] = {1, 2};
  {
    ctfx::npy_batch b;
    REQUIRE(b.add(d.path / "a.npy", ctfx::tensor_ref::contiguous(x, ctfx::f32, {2})).ok);
    REQUIRE(b.add(d.path / "b.npy", ctfx::tensor_ref::contiguous(x, ctfx::f32, {2})).ok);
    CHECK_FALSE(fs::exists(d.path / "a.npy"));
  }  // dropped: the temporaries go
  CHECK(d.files().empty());
  ctfx::npy_batch b;
  REQUIRE(b.add(d.path / "a.npy", ctfx::tensor_ref::contiguous(x, ctfx::f32, {2})).ok);
  REQUIRE(b.commit().ok);
  CHECK(d.files() == std::vector<std::string>{"a.npy"});
  // An existing file is replaced whole.
  float y[3] = {7, 8, 9};
  REQUIRE(ctfx::write_npy(d.path / "a.npy", ctfx::tensor_ref::contiguous(y, ctfx::f32, {3})).ok);
  ctfx::npy_read r = ctfx::read_npy(d.path / "a.npy");
  REQUIRE(r.ok);
  CHECK(r.array.desc.size[0] == 3);
  // A directory that does not exist: an error, not a crash.
  CHECK_FALSE(ctfx::write_npy(d.path / "no" / "such" / "dir.npy", ctfx::tensor_ref::contiguous(y, ctfx::f32, {3})).ok);
}

TEST_CASE("npy: a Fortran-order array is read into C order") {
  // np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3)): column-major bytes 0 3 1 4 2 5.
  std::vector<std::byte> b = npy_file("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", 0);
  const std::int32_t col_major[6] = {0, 3, 1, 4, 2, 5};
  const auto* p = reinterpret_cast<const std::byte*>(col_major);
  b.insert(b.end(), p, p + sizeof col_major);
  ctfx::npy_read r = ctfx::decode_npy(b, "f.npy");
  REQUIRE_MESSAGE(r.ok, r.message);
  CHECK(r.array.desc.rank == 2);
  std::vector<std::int32_t> v(6);
  std::memcpy(v.data(), r.array.bytes.data(), 24);
  CHECK(v == std::vector<std::int32_t>{0, 1, 2, 3, 4, 5});
}
