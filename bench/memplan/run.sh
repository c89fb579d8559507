#!/usr/bin/env bash
# bench/memplan/run.sh [DIR] — plans every CSV trace of DIR (default: ../shared/data/memplan next to
# the repository) with ctfx_plan (arena planner) and with its --first-fit baseline (Inductor-like:
# blocks in start order, first fit), and prints a markdown table. Every plan is checked by ctfx_plan.
# CTFX_PLAN=path/to/ctfx_plan uses that binary; otherwise it is built with g++ -O2 into a temp dir.
# BUDGET_MS (default 1000) is the planner's wall-clock budget per instance.
set -euo pipefail
root="$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
dir="${1:-$root/../shared/data/memplan}"
budget="${BUDGET_MS:-1000}"
bin="${CTFX_PLAN:-}"
if [[ -z "$bin" ]]; then
  bin="$(mktemp -d)/ctfx_plan"
  "${CXX:-g++-12}" -std=c++20 -O2 -I"$root/include" "$root/tools/ctfx_plan/ctfx_plan.cpp" -o "$bin"
fi
field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" <<<"$2" | tail -1; }
echo "| instance | blocks | lower bound | first fit | ctfx | first fit / LB | ctfx / LB | ctfx seconds |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for f in "$dir"/*.csv; do
  name="$(basename "$f" .csv)"
  ff="$("$bin" "$f" --first-fit)"
  cx="$("$bin" "$f" --budget-ms "$budget")"
  printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$(field blocks "$cx")" "$(field lower_bound "$cx")" \
    "$(field plan "$ff")" "$(field plan "$cx")" "$(field ratio "$ff")" "$(field ratio "$cx")" "$(field seconds "$cx")"
done
