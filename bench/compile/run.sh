#!/usr/bin/env bash
# Compile-time sweep of the whole reinplacing pipeline and the memory plan:
#
#   bench/compile/run.sh [SIZES] [COMPILERS] [PATTERNS]
#     SIZES      default "16 64 256 1000 2000" (nodes)
#     COMPILERS  default "g++-12 clang++-14 nvcc"
#     PATTERNS   default "scatter_chain kv_cache halo random"
#   env: CTFX_INCLUDE (default: this checkout's include/), CTFX_BENCH_TIMEOUT (seconds per compile,
#        default 900), CTFX_NVCC_LIMITS (extra nvcc flags, default none: nvcc's own limits; to raise
#        them as the build does for g++ and clang: "-Xcudafe --max_cost_constexpr_call=2000000000
#        -Xcompiler -fconstexpr-ops-limit=4294967295")
#
# Each program (bench/compile/gen.py) defines an N-node graph, runs ctfx::pipeline on it (five
# passes, a verify after each, the reinplacing report) and the memory plan (compute_liveness +
# plan_reuse), all at compile time. Prints a markdown table: wall-clock and CPU (user + system)
# seconds above the empty-graph baseline
# (the same translation unit with a one-node graph and no pipeline), the compiler's peak resident
# memory (/usr/bin/time -v "Maximum resident set size") and the growth exponent between
# consecutive sizes (log(t2/t1) / log(n2/n1)). The flags are the build's (cmake/CtfxTesting.cmake).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
sizes=${1:-"16 64 256 1000 2000"}
compilers=${2:-"g++-12 clang++-14 nvcc"}
patterns=${3:-"scatter_chain kv_cache halo random"}
inc=${CTFX_INCLUDE:-$root/include}
limit=${CTFX_BENCH_TIMEOUT:-900}
cccl=/usr/local/cuda/targets/x86_64-linux/include/cccl
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

compile() {  # compiler file -> "wall_seconds cpu_seconds peak_kb", or "FAIL reason"
  local c=$1 f=$2 cmd
  case $c in
    nvcc) cmd=(nvcc -std=c++20 -x cu --expt-relaxed-constexpr --extended-lambda ${CTFX_NVCC_LIMITS:-} -I"$inc" -isystem "$cccl" -c "$f" -o "$work/o.o") ;;
    clang*) cmd=("$c" -std=c++20 -fconstexpr-steps=1000000000 -I"$inc" -I"$cccl" -c "$f" -o "$work/o.o") ;;
    *) cmd=("$c" -std=c++20 -fconstexpr-ops-limit=4294967295 -fconstexpr-cache-depth=64 -DCTFX_MEMO_META=1 -I"$inc" -I"$cccl" -c "$f" -o "$work/o.o") ;;
  esac
  local t0 t1 rc=0
  t0=$(date +%s.%N)
  timeout "$limit" /usr/bin/time -v -o "$work/time" "${cmd[@]}" 2>"$work/err" >/dev/null || rc=$?
  t1=$(date +%s.%N)
  if [ "$rc" = 0 ]; then
    local kb us ss
    kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time")
    us=$(sed -n 's/.*User time (seconds): //p' "$work/time")
    ss=$(sed -n 's/.*System time (seconds): //p' "$work/time")
    echo "$(python3 -c "print(f'{$t1 - $t0:.2f} {$us + $ss:.2f}')") $kb"
  elif [ "$rc" = 124 ]; then
    echo "FAIL timeout after ${limit} s"
  else
    echo "FAIL $(grep -m1 -iE 'error|excessive|killed' "$work/err" | cut -c1-140 | tr '|' '/' || echo "exit $rc")"
  fi
}

echo "| pattern | nodes | compiler | wall s above baseline | CPU s above baseline | peak RSS MB | growth exponent (CPU) |"
echo "|---|---|---|---|---|---|---|"
for c in $compilers; do
  command -v "$c" >/dev/null || { echo "| - | - | $c | not installed | | |"; continue; }
  python3 "$here/gen.py" empty 1 >"$work/empty.cpp"
  read -r base_s base_cpu base_kb < <(compile "$c" "$work/empty.cpp")
  echo "| (empty baseline, absolute) | 1 | $c | $base_s | $base_cpu | $((base_kb / 1024)) | |"
  for p in $patterns; do
    prev_n=""; prev_t=""
    for n in $sizes; do
      python3 "$here/gen.py" "$p" "$n" >"$work/g.cpp"
      r=$(compile "$c" "$work/g.cpp")
      if [[ $r == FAIL* ]]; then echo "| $p | $n | $c | ${r} | | | |"; prev_n=""; continue; fi
      read -r s cpu kb <<<"$r"
      w=$(python3 -c "print(f'{max($s - $base_s, 0.01):.2f}')")
      t=$(python3 -c "print(f'{max($cpu - $base_cpu, 0.01):.2f}')")
      e=""
      [ -n "$prev_n" ] && e=$(python3 -c "import math; print(f'{math.log($t/$prev_t)/math.log($n/$prev_n):.2f}')")
      echo "| $p | $n | $c | $w | $t | $((kb / 1024)) | $e |"
      prev_n=$n; prev_t=$t
    done
  done
done
