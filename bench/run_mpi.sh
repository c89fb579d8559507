#!/usr/bin/env bash
# Runs the MPI benchmark (bench/mpi/mpi_bench.cpp) on 4 ranks: the halo exchange, a 64 MiB
# all_reduce and a Jacobi step, each against hand-written MPI. Builds it in ./build
# (CTFX_BUILD_DIR overrides); needs MPI (scripts/bootstrap.sh installs Open MPI). Extra arguments go
# to the benchmark (the number of repetitions).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CTFX_BUILD_DIR:-$root/build}
[ -f "$build/CMakeCache.txt" ] || bash "$root/scripts/configure.sh"
cmake --build "$build" -j "$(nproc)" --target ctfx_mpi_bench
# Open MPI refuses root unless told (containers); --oversubscribe lets fewer than 4 cores run 4 ranks.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
flags=()
mpirun --version 2>/dev/null | grep -q "Open MPI" && flags+=(--oversubscribe)
echo "== MPI, 4 ranks on $(nproc) cores (bench/mpi)"
mpirun "${flags[@]}" -np 4 "$build/bench/mpi/ctfx_mpi_bench" "$@"
