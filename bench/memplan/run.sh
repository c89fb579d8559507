#!/usr/bin/env bash
# bench/memplan/run.sh [DIR] — plans every CSV trace of DIR (default: ../shared/data/memplan next to
# the repository) and generated exact packings (ctfx_plan --generate SEED: 400 blocks tiling
# 2,000 steps x 1 MiB, optimum 1 MiB) with ctfx_plan, and prints a markdown table: the lower bound,
# greedy by size (TFLite, the planner's floor: ctfx_plan --greedy), ctfx (the default budget, in
# work: the same plan on any machine; whether it is proven optimal), first fit (Inductor-like: --first-fit), and MiniMalloc's
# target on its own instances (it is run at a capacity of 1 MiB: scripts/run-challenging.sh). Every
# plan is checked by ctfx_plan (overlap-free, and never larger than greedy by size).
# CTFX_PLAN=path/to/ctfx_plan uses that binary; otherwise it is built with g++ -O2 into a temp dir.
# WORK sets the budget (--work); SEEDS the generated instances (default: 1-6 and 1001-1010, looked
# at while developing the search, then 3001-3010, which were not).
set -euo pipefail
root="$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
dir="${1:-$root/../shared/data/memplan}"
seeds="${SEEDS:-1 2 3 4 5 6 $(seq -s ' ' 1001 1010) $(seq -s ' ' 3001 3010)}"
bin="${CTFX_PLAN:-}"
tmp="$(mktemp -d)"
if [[ -z "$bin" ]]; then
  bin="$tmp/ctfx_plan"
  "${CXX:-g++-12}" -std=c++20 -O2 -I"$root/include" "$root/tools/ctfx_plan/ctfx_plan.cpp" -o "$bin"
fi
work=()
[[ -n "${WORK:-}" ]] && work=(--work "$WORK")
files=("$dir"/*.csv)
for s in $seeds; do "$bin" --generate "$s" > "$tmp/exact_$s.csv"; files+=("$tmp/exact_$s.csv"); done
field() { sed -n "s/.*[ ^]$1=\([^ ]*\).*/\1/p; s/^$1=\([^ ]*\).*/\1/p" <<<"$2" | head -1; }
echo "| instance | blocks | lower bound | greedy by size / LB | ctfx / LB | proven optimal | ctfx seconds (CPU) | ctfx seconds (wall) | ctfx work | first fit / LB | MiniMalloc target / LB |"
echo "|---|---:|---:|---:|---:|:-:|---:|---:|---:|---:|---:|"
for f in "${files[@]}"; do
  name="$(basename "$f" .csv)"
  cx="$("$bin" "$f" "${work[@]}")"
  ff="$("$bin" "$f" --first-fit)"
  lb="$(field lower_bound "$cx")"
  mm="—"
  [[ "$name" == minimalloc_* ]] && mm="$(awk -v lb="$lb" 'BEGIN { printf "%.4f", 1048576 / lb }')"
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$(field blocks "$cx")" "$lb" "$(field greedy_ratio "$cx")" \
    "$(field ratio "$cx")" "$(field optimal "$cx")" "$(field cpu_seconds "$cx")" "$(field seconds "$cx")" "$(field work "$cx")" "$(field ratio "$ff")" "$mm"
done
rm -rf "$tmp"
