#!/usr/bin/env bash
# What a user waits for: g++ CPU time (user) to compile a file that defines a graph and runs it with
# compiled<G>::run (or, user_runtime_plan.cpp, runs a graph it is given with runtime_plan), at -O2
# with the ctfx::ctfx flags, header-only and with ctfx::runtime
# (CTFX_SEPARATE_RUNTIME: the executor compiled once elsewhere). The files are compiled in turns,
# ROUNDS times (default 5), so that a shared machine's slow and fast minutes fall on all of them;
# prints each file's median.
#   bash bench/compile/user_files.sh [ROUNDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=${1:-5}
flags=(-std=c++20 -O2 -I"$root/include" -isystem /usr/local/cuda/targets/x86_64-linux/include/cccl
       -DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CPP -DCTFX_MEMO_META=1 -ffp-contract=off
       -fconstexpr-ops-limit=4294967295 -fconstexpr-cache-depth=64)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
files=(user_one_node user_stencil user_ring user_paged user_masked user_symbolic user_runtime_plan)
for ((r = 0; r < rounds; ++r)); do
  for f in "${files[@]}"; do
    for mode in header-only runtime; do
      extra=()
      [ "$mode" = runtime ] && extra=(-DCTFX_SEPARATE_RUNTIME=1)
      /usr/bin/time -f "%U" -o "$work/t" g++ "${flags[@]}" "${extra[@]}" -c "$here/$f.cpp" -o "$work/o.o"
      cat "$work/t" >> "$work/$f.$mode"
    done
  done
done
echo "| file | header-only (s) | with ctfx::runtime (s) |"
echo "|---|---:|---:|"
median() { sort -g "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for f in "${files[@]}"; do
  echo "| bench/compile/$f.cpp | $(median "$work/$f.header-only") | $(median "$work/$f.runtime") |"
done
