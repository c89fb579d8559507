// ctfx/comm/agreement.hpp — what ranks compare when they agree before a run's first write: every
// collective the run is about to post (kind, element count as bound, dtype, reduce op, root, group
// or halo grid) and a hash of the graph. Ranks that would post different collectives would hang or
// exchange garbage; compared here, every rank returns the same error instead, before any byte moves.
//
// The comparison rides on the agreement's one reduction: each field is a 64-bit word, reduced with
// its complement by an unsigned maximum, so that a field is the same on every rank exactly when
// max(w) == ~max(~w) (min and max in one operation). Only when they differ do ranks exchange their
// descriptions, to name the first rank that differs from rank 0 and the field.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>
#include "../core/dtype.hpp"
#include "../core/name.hpp"
#include "types.hpp"

namespace ctfx {

/// The fields ranks compare, in the order a disagreement is reported.
enum class digest_field : std::uint8_t { kind, count, dtype, op, root, group, graph };
/// The number of digest_field values.
inline constexpr std::size_t digest_fields = 7;

/// "element count", "dtype", ...: a field as messages name it.
constexpr const char* name_of(digest_field f) {
  constexpr const char* names[] = {"collectives (their number or kinds)", "element count", "dtype", "reduce op",
                                   "root (source rank)", "group size or halo grid", "graph"};
  return names[static_cast<std::size_t>(f)];
}

/// One collective as a rank is about to post it (its numbers bound for this call).
struct collective_record {
  std::int32_t node = -1;  ///< its node on this rank
  name_t name{};           ///< its node's name
  std::string_view kind;   ///< its op's name (all_reduce, halo_exchange, ...)
  std::int64_t count = 0;  ///< the elements it communicates (its argument's)
  std::int64_t grid[2]{};  ///< a halo exchange's grid extents (rows, columns; its edges' lengths)
  dtype dt = dtype::f32;   ///< their dtype
  std::int32_t op = -1;    ///< the reduce op (-1: none)
  std::int32_t root = -1;  ///< the source rank (-1: none)
  std::int64_t group[4]{};  ///< group size; or halo width, px, py, periodic bits
};

/// A run's digest: a word per field, and the collectives it was made from.
struct run_digest {
  std::uint64_t word[digest_fields]{};          ///< per digest_field: its hash over the collectives
  std::vector<collective_record> collectives;  ///< the collectives, in the order the run posts them

  /// The digest of `records` in a graph hashed `graph_hash`.
  static run_digest of(std::uint64_t graph_hash, std::vector<collective_record> records) {
    run_digest d;
    auto fold = [&](digest_field f, std::uint64_t v) {
      std::uint64_t& h = d.word[static_cast<std::size_t>(f)];
      h = (h ^ v) * 1099511628211ull;
      h ^= h >> 29;
    };
    for (std::uint64_t& w : d.word) w = 1469598103934665603ull;
    fold(digest_field::kind, records.size());
    for (const collective_record& c : records) {
      std::uint64_t k = 0;
      for (char ch : c.kind) k = k * 131 + static_cast<unsigned char>(ch);
      fold(digest_field::kind, k);
      fold(digest_field::count, static_cast<std::uint64_t>(c.count));
      fold(digest_field::count, static_cast<std::uint64_t>(c.grid[0]));
      fold(digest_field::count, static_cast<std::uint64_t>(c.grid[1]));
      fold(digest_field::dtype, static_cast<std::uint64_t>(c.dt));
      fold(digest_field::op, static_cast<std::uint64_t>(c.op + 1));
      fold(digest_field::root, static_cast<std::uint64_t>(c.root + 1));
      for (std::int64_t g : c.group) fold(digest_field::group, static_cast<std::uint64_t>(g));
    }
    d.word[static_cast<std::size_t>(digest_field::graph)] = graph_hash;
    d.collectives = static_cast<std::vector<collective_record>&&>(records);
    return d;
  }
};

namespace detail {
// A collective in words: "all_reduce 'g' of 16 elements of f32 (sum)". (Built by appending: g++ 12
// warns, falsely, about `"text" + std::to_string(...)` at -O3, -Wrestrict.)
inline std::string describe(const collective_record& c) {
  std::string t(c.kind);
  t += " '";
  t += c.name.view();
  t += "' of ";
  t += std::to_string(c.count);
  t += " elements of ";
  t += name_of(c.dt);
  if (c.grid[0] > 0) {
    t += " ([";
    t += std::to_string(c.grid[0]);
    t += ", ";
    t += std::to_string(c.grid[1]);
    t += "] grid)";
  }
  if (c.op >= 0) {
    t += " (";
    t += name_of(static_cast<reduce_op>(c.op));
    t += ")";
  }
  if (c.root >= 0) {
    t += " from rank ";
    t += std::to_string(c.root);
  }
  if (c.group[1] > 0) {
    t += ", halo ";
    t += std::to_string(c.group[0]);
    t += " over ";
    t += std::to_string(c.group[1]);
    t += " x ";
    t += std::to_string(c.group[2]);
    t += " ranks";
    if (c.group[3] & 1) t += ", periodic in x";
    if (c.group[3] & 2) t += ", periodic in y";
  } else if (c.group[0] > 0) {
    t += ", in ";
    t += std::to_string(c.group[0]);
    t += " blocks";
  }
  return t;
}

// A digest as text (what a rank shares when ranks disagree): the words in hex, then one line per
// collective: its node, then each field's text (tab-separated, in digest_field order), then its
// description.
inline std::string digest_text(const run_digest& d) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string t;
  for (std::uint64_t w : d.word)
    for (int s = 60; s >= 0; s -= 4) t += hex[(w >> s) & 15];
  for (const collective_record& c : d.collectives) {
    const std::string fields[] = {std::to_string(c.node),
                                  std::string(c.kind),
                                  std::to_string(c.count) + "/" + std::to_string(c.grid[0]) + "x" + std::to_string(c.grid[1]),
                                  std::string(name_of(c.dt)),
                                  std::to_string(c.op),
                                  std::to_string(c.root),
                                  std::to_string(c.group[0]) + "," + std::to_string(c.group[1]) + "," + std::to_string(c.group[2]) +
                                      "," + std::to_string(c.group[3]),
                                  describe(c)};
    t += '\n';
    for (std::size_t k = 0; k < 8; ++k) {
      if (k > 0) t += '\t';
      t += fields[k];
    }
  }
  return t;
}

inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts(1);
  for (char ch : s) {
    if (ch == sep) parts.emplace_back();
    else parts.back() += ch;
  }
  return parts;
}

// The message every rank returns when rank `bad`'s digest (text `theirs`) differs from rank 0's
// (`first`), and the node it names (rank 0's node of the first collective that differs, or -1).
inline std::string disagreement(int bad, int world, const std::string& first, const std::string& theirs, std::int32_t& node) {
  const std::string head = "rank " + std::to_string(bad) + " of " + std::to_string(world) + ": rule comm-agree: ";
  const std::string fix = "; every rank must run the same graph, with the same extents, dtypes and collectives, so that "
                          "each collective meets its peers (nothing was sent or written)";
  node = -1;
  const std::vector<std::string> a = split(first, '\n'), b = split(theirs, '\n');
  // The first differing field, and the first collective that differs in it.
  for (std::size_t f = 0; f < digest_fields; ++f) {
    if (a[0].substr(16 * f, 16) == b[0].substr(16 * f, 16)) continue;
    const auto field = static_cast<digest_field>(f);
    if (field == digest_field::graph)
      return head + "rank " + std::to_string(bad) + " runs another graph than rank 0 (its hash differs)" + fix;
    if (field == digest_field::kind && a.size() != b.size()) {
      const auto posts = [](std::size_t n) {
        return n == 0 ? std::string("no collective") : std::to_string(n) + (n == 1 ? " collective" : " collectives");
      };
      std::string t = head + "rank " + std::to_string(bad) + " posts " + posts(b.size() - 1) + ", rank 0 posts " + posts(a.size() - 1);
      if (b.size() > 1) t += "; rank " + std::to_string(bad) + "'s first: " + split(b[1], '\t').back();
      if (a.size() > 1) t += "; rank 0's first: " + split(a[1], '\t').back();
      return t + fix;
    }
    for (std::size_t k = 1; k < a.size() && k < b.size(); ++k) {
      const std::vector<std::string> x = split(a[k], '\t'), y = split(b[k], '\t');
      const std::size_t col = f + 1;  // after the node: kind, count, dtype, op, root, group
      if (x.size() < 8 || y.size() < 8 || x[col] == y[col]) continue;
      node = static_cast<std::int32_t>(std::stol(x[0]));
      return head + "the " + name_of(field) + " of collective " + std::to_string(k - 1) + " differs from rank 0's: " +
             y.back() + " on rank " + std::to_string(bad) + ", " + x.back() + " on rank 0" + fix;
    }
    return head + "the " + name_of(field) + " of its collectives differs from rank 0's" + fix;
  }
  return head + "its run differs from rank 0's" + fix;
}
}  // namespace detail

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
