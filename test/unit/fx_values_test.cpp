// Captured PyTorch programs run with their captured inputs (test/data/fx/<name>.input<i>.npy, made by
// tools/fx_capture/capture.py from torch eager on CPU): the run-time plan (sequential and OpenMP) and
// the reference executor must give PyTorch's outputs and mutated inputs bit for bit.
#include <doctest/doctest.h>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_parse.hpp>
#include <ctfx/io/npy.hpp>

namespace {

std::string data_dir() {
  std::string f = __FILE__;
  return f.substr(0, f.rfind('/')) + "/../data/fx/";
}

// The files <name>.<kind><i>.npy for i = 0, 1, ... (stops at the first missing one; mutated files
// are sparse, so those are looked up by index).
std::vector<ctfx::host_array> read_all(const std::string& name, const char* kind, int count = -1) {
  std::vector<ctfx::host_array> r;
  for (int i = 0; count < 0 || i < count; ++i) {
    const std::string p = data_dir() + name + "." + kind + std::to_string(i) + ".npy";
    if (!std::filesystem::exists(p)) {
      if (count < 0) break;
      r.emplace_back();
      continue;
    }
    ctfx::npy_read f = ctfx::read_npy(p);
    REQUIRE_MESSAGE(f.ok, f.message);
    r.push_back(std::move(f.array));
  }
  return r;
}

bool same_bytes(const ctfx::host_array& a, const ctfx::host_array& b) {
  return a.desc.dt == b.desc.dt && a.bytes.size() == b.bytes.size() &&
         std::memcmp(a.bytes.data(), b.bytes.data(), a.bytes.size()) == 0;
}

// Runs `name` through `run` (the plan or the reference) and compares with PyTorch's results.
template <class Run>
void check_program(const std::string& name, Run&& run) {
  CAPTURE(name);
  auto inputs = read_all(name, "input");
  const auto expected = read_all(name, "output");
  const auto mutated = read_all(name, "mutated", static_cast<int>(inputs.size()));
  std::vector<ctfx::host_array> outputs;
  for (const auto& e : expected) outputs.push_back(ctfx::host_array::zeros(e.desc));
  std::vector<ctfx::tensor_ref> in, out;
  for (auto& a : inputs) in.push_back(a.ref());
  for (auto& a : outputs) out.push_back(a.ref());
  const ctfx::run_status st = run(in, out);
  REQUIRE_MESSAGE(st.ok, st.message);
  for (std::size_t j = 0; j < expected.size(); ++j) {
    CAPTURE(j);
    CHECK(same_bytes(outputs[j], expected[j]));
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (mutated[i].bytes.empty() && mutated[i].desc.rank == 0 && mutated[i].desc.dt == ctfx::tensor_desc{}.dt) continue;
    CAPTURE(i);
    CHECK(same_bytes(inputs[i], mutated[i]));
  }
}

}  // namespace

TEST_CASE("fx values: captured programs give PyTorch eager's outputs bit for bit (run-time plan on host and OMP, reference)") {
  // Every captured program but those calling the test's user ops (their kernels are Python).
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(data_dir()))
    if (e.path().extension() == ".txt") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  int checked = 0;
  for (const auto& name : names) {
    CAPTURE(name);
    const auto r = ctfx::parse_fx_file(data_dir() + name + ".txt");
    if (!r.ok() && ctfx::to_string(r.error).find("torch.ops.ctfx_test.") != std::string::npos) continue;
    REQUIRE_MESSAGE(r.ok(), ctfx::to_string(r.error));
    CHECK(ctfx::verify(r.graph).ok());
    const ctfx::runtime_plan plan(r.graph);
    check_program(name, [&](auto in, auto out) { return plan.run(in, out); });
    check_program(name, [&](auto in, auto out) { return plan.run(in, out, ctfx::device_ctx{ctfx::backend::omp}); });
    check_program(name, [&](auto in, auto out) { return ctfx::reference_run(r.graph, in, out); });
    ++checked;
  }
  CHECK(checked >= 30);
  // The programs of the comparison, logical, where, clamp, mean, index and bool-mask index_put ops
  // are among them.
  for (const char* n : {"compare_ops", "logical_ops", "where_ops", "clamp_ops", "maximum_minimum_full", "mean_dims", "masked_fill_put",
                        "compare_promotion", "index_gather", "masked_put_value", "masked_put_rows", "masked_put_accumulate", "masked_index_put"})
    CHECK(std::find(names.begin(), names.end(), n) != names.end());
}
