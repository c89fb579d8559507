#!/usr/bin/env bash
# Compile-time sweep: bench/compile/run.sh [SIZES] [COMPILERS] [PATTERNS]
# For each pattern, size and compiler: seconds and peak compiler memory above the empty-graph
# baseline, and the growth exponent between consecutive sizes. Prints a markdown table.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
sizes=${1:-"16 64 256 1000 2000"}
compilers=${2:-"g++ clang++-14 nvcc"}
patterns=${3:-"scatter_chain kv_cache halo random"}
cccl=/usr/local/cuda/targets/x86_64-linux/include/cccl
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

compile() {  # compiler file -> "seconds peak_kb" or "FAIL"
  local c=$1 f=$2 out
  case $c in
    nvcc) cmd=(nvcc -std=c++20 -x cu -I"$root/include" -c "$f" -o "$work/o.o") ;;
    clang*) cmd=("$c" -std=c++20 -fconstexpr-steps=1000000000 -I"$root/include" -I"$cccl" -c "$f" -o "$work/o.o") ;;
    *) cmd=("$c" -std=c++20 -fconstexpr-ops-limit=4294967295 -I"$root/include" -I"$cccl" -c "$f" -o "$work/o.o") ;;
  esac
  if /usr/bin/time -o "$work/time" -f "%e %M" "${cmd[@]}" 2>"$work/err" >/dev/null; then
    tail -n1 "$work/time"
  else
    tail -n1 "$work/err" >&2 || true
    echo FAIL
  fi
}

echo "| pattern | nodes | compiler | seconds above baseline | peak MB | growth exponent |"
echo "|---|---|---|---|---|---|"
for c in $compilers; do
  command -v "$c" >/dev/null || { echo "| - | - | $c | not installed | | |"; continue; }
  python3 "$here/gen.py" empty 1 >"$work/empty.cpp"
  read -r base_s base_kb < <(compile "$c" "$work/empty.cpp")
  for p in $patterns; do
    prev_n=""; prev_t=""
    for n in $sizes; do
      python3 "$here/gen.py" "$p" "$n" >"$work/g.cpp"
      r=$(compile "$c" "$work/g.cpp")
      if [ "$r" = FAIL ]; then echo "| $p | $n | $c | FAIL | | |"; continue; fi
      read -r s kb <<<"$r"
      t=$(python3 -c "print(f'{max($s - $base_s, 0.01):.2f}')")
      e=""
      [ -n "$prev_n" ] && e=$(python3 -c "import math; print(f'{math.log($t/$prev_t)/math.log($n/$prev_n):.2f}')")
      echo "| $p | $n | $c | $t | $((kb / 1024)) | $e |"
      prev_n=$n; prev_t=$t
    done
  done
done
