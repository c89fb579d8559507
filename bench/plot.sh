#!/usr/bin/env bash
# Draws the PNG plots of bench/RESULTS.md with gnuplot (Debian: gnuplot-nox):
#   bench/runtime_ratios.png   per workload: ctfx / copy bound, ctfx / hand-written, functional / ctfx
#   bench/compile_scaling.png  compile seconds above the empty baseline against nodes, per compiler
# Reads the markdown tables of bench/RESULTS.md (section 2, and the compile-time table: rows
# "| pattern | nodes | compiler | seconds above baseline | ...").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
res=$here/RESULTS.md
command -v gnuplot >/dev/null || { echo "plot.sh: gnuplot is not installed (apt-get install gnuplot-nox)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run time: rows of the table whose header starts "| workload | bytes written |"
awk -F'|' '/^\| workload \| bytes written/ {t=1; next} t && /^\|---/ {next} t && /^\|/ {gsub(/^ +| +$/, "", $2); printf "\"%s\" %s %s %s\n", $2, $8, $10, $9; next} t {t=0}' "$res" > "$work/rt.dat"
if [ -s "$work/rt.dat" ]; then
  gnuplot <<GP
set terminal pngcairo size 1000,520 font ",10" noenhanced
set output "$here/runtime_ratios.png"
set title "ctfx on the host: run-time ratios (bench/runtime, see RESULTS.md section 2)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set ylabel "ratio (log scale)"
set xtics rotate by -20 scale 0
set key outside top center horizontal
plot "$work/rt.dat" using 2:xtic(1) title "ctfx / copy bound", '' using 3 title "ctfx / hand-written", '' using 4 title "functional / ctfx"
GP
  echo "wrote $here/runtime_ratios.png"
fi

# compile time: "| pattern | nodes | compiler | seconds above baseline | peak MB | growth exponent |"
# (CPU seconds, the 6th field; rows of failed compiles have no number there; the first table per
# (pattern, compiler) wins, so later re-measurements of the same points are skipped)
awk -F'|' '/^\| pattern \| nodes \| compiler/ {t=1; next} t && /^\|---/ {next} t && /^\|/ {gsub(/ /, "", $2); gsub(/ /, "", $4); if ($6 ~ /^ *[0-9.]+ *$/ && $2 !~ /baseline/ && !seen[$2 FS $3 FS $4]++) print $2, $3+0, $4, $6+0; next} t {t=0}' "$res" > "$work/ct.dat"
if [ -s "$work/ct.dat" ]; then
  : > "$work/plot.gp"
  series=()
  while read -r p c; do
    awk -v p="$p" -v c="$c" '$1 == p && $3 == c {print $2, $4}' "$work/ct.dat" | sort -n > "$work/ct_${p}_${c}.dat"
    series+=("\"$work/ct_${p}_${c}.dat\" using 1:2 with linespoints title \"$p, $c\"")
  done < <(awk '{print $1, $3}' "$work/ct.dat" | sort -u)
  plots=$(IFS=,; echo "${series[*]}")
  gnuplot <<GP
set terminal pngcairo size 1000,600 font ",10" noenhanced
set output "$here/compile_scaling.png"
set title "compile time of the whole pipeline and memory plan, above an empty graph (bench/compile)"
set logscale xy
set xlabel "nodes"
set ylabel "CPU seconds above the empty baseline"
set key outside right
set grid
plot $plots
GP
  echo "wrote $here/compile_scaling.png"
fi
