// ctfx/plan/trace.hpp — reads a memory-planning trace: CSV with the header `id,lower,upper,size`
// (half-open lifetimes, sizes in bytes), one block per line. Errors name the line (1-based) and say
// what is wrong; nothing is guessed.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>
#include "arena.hpp"

namespace ctfx {

struct trace {
  std::vector<std::int64_t> ids;
  std::vector<arena_block> blocks;
  std::string error;  // empty when the text parsed
  bool ok() const { return error.empty(); }
};

namespace detail {
inline bool parse_i64(std::string_view s, std::int64_t& v) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  if (s.empty()) return false;
  bool neg = false;
  if (s.front() == '-') { neg = true; s.remove_prefix(1); }
  if (s.empty() || s.size() > 18) return false;
  std::int64_t r = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    r = r * 10 + (c - '0');
  }
  v = neg ? -r : r;
  return true;
}
}  // namespace detail

inline trace parse_trace(std::string_view text, std::int64_t align = 1) {
  trace t;
  std::size_t line_no = 0, pos = 0;
  bool header = false;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;  // blank lines
    const std::string where = "line " + std::to_string(line_no) + ": ";
    if (!header) {
      if (line != "id,lower,upper,size") { t.error = where + "expected the header 'id,lower,upper,size', got '" + std::string(line) + "'"; return t; }
      header = true;
      continue;
    }
    std::int64_t f[4] = {};
    std::size_t start = 0;
    for (int k = 0; k < 4; ++k) {
      std::size_t comma = line.find(',', start);
      if ((k < 3) != (comma != std::string_view::npos)) {
        t.error = where + "expected 4 comma-separated integers id,lower,upper,size, got '" + std::string(line) + "'";
        return t;
      }
      std::string_view field = line.substr(start, k < 3 ? comma - start : std::string_view::npos);
      if (!detail::parse_i64(field, f[k])) {
        static constexpr const char* names[] = {"id", "lower", "upper", "size"};
        t.error = where + "field '" + names[k] + "' is not an integer: '" + std::string(field) + "'";
        return t;
      }
      start = comma + 1;
    }
    if (f[1] < 0 || f[2] <= f[1]) { t.error = where + "lifetime [" + std::to_string(f[1]) + ", " + std::to_string(f[2]) + ") is empty or negative (need 0 <= lower < upper)"; return t; }
    if (f[3] < 0) { t.error = where + "negative size " + std::to_string(f[3]); return t; }
    t.ids.push_back(f[0]);
    t.blocks.push_back({f[1], f[2], f[3], align});
  }
  if (!header) t.error = "line 1: empty file (expected the header 'id,lower,upper,size')";
  return t;
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
