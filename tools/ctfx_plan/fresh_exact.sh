#!/bin/sh
# fresh_exact.sh CTFX_PLAN [N]: N exact packings from seeds drawn at each run (CTFX_SEEDS="S ..."
# replays given ones), each planned by ctfx_plan, which checks the plan (overlap-free, aligned, never
# above greedy by size). The optimum is the rectangle's height, 1 MiB: the lower bound must say so,
# the search must never prove it impossible, and optimal=yes must mean a plan at 1 MiB.
set -eu
bin=$1
n=${2:-3}
seeds=${CTFX_SEEDS:-}
if [ -z "$seeds" ]; then
  i=0
  while [ "$i" -lt "$n" ]; do seeds="$seeds $(od -An -N4 -tu4 /dev/urandom | tr -d ' ')"; i=$((i + 1)); done
fi
echo "seeds:$seeds (replay: CTFX_SEEDS=\"...\")"
for s in $seeds; do
  "$bin" --generate "$s" > "fresh_exact_$s.csv"
  out=$("$bin" "fresh_exact_$s.csv" --work 150000000) || { echo "seed $s: ctfx_plan failed"; exit 1; }
  echo "seed $s: $(echo "$out" | tr '\n' ' ')"
  rm -f "fresh_exact_$s.csv"
  case "$out" in *"lower_bound=1048576 "*) ;; *) echo "seed $s: the lower bound is not the optimum, 1 MiB"; exit 1 ;; esac
  case "$out" in *"proven_bound=1048576 "*) ;; *) echo "seed $s: the search proved the optimum impossible"; exit 1 ;; esac
  case "$out" in
    *"plan=1048576 "*"optimal=yes "*) ;;
    *"optimal=yes "*) echo "seed $s: optimal=yes above the optimum"; exit 1 ;;
    *"plan=1048576 "*) echo "seed $s: a plan at the optimum not reported optimal"; exit 1 ;;
  esac
done
