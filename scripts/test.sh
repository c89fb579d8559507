#!/usr/bin/env bash
# THE test command (the README quotes it; .ci/run execs it): install what is missing, configure,
# build everything, run every test. CTFX_BUILD_DIR overrides ./build; extra arguments go to cmake,
# e.g. scripts/test.sh -DCMAKE_CXX_COMPILER=clang++-14 -DCTFX_CUDA=OFF.
# The tests build in Release (CTFX_BUILD_TYPE overrides) with warnings as errors (CTFX_WERROR=ON).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CTFX_BUILD_DIR:-$root/build}
jobs=$(nproc)
export CTFX_BUILD_TYPE=${CTFX_BUILD_TYPE:-Release}
start=$SECONDS
step() { printf '\n== test.sh [%d/4, %dm%02ds] %s\n' "$1" $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60)) "$2"; }
# The whole suite compiles ~310 targets and runs ~1,390 tests: 33 minutes on a clean 2-core
# machine (a fresh clone, 2026-12-07: 29 min of build, 4 of tests; 60 CPU-minutes in all; up to
# 6 GB of memory), more on a loaded one. The unit tests, the fuzzer's variants, the sanitizer
# builds, the docs' programs and the header self-test compile at -O0, which checks the same values
# at a third of the compile time; without a GPU, so does the CUDA tests' host code (and their device
# code where no test reads its PTX). The benchmarks are only checked to compile (-fsyntax-only).
est=$((66 / jobs)); [ "$est" -lt 5 ] && est=5
echo "test.sh: building and running every test takes about $est minutes with $jobs cores" \
     "(33 measured on 2 idle cores; more when the machine is loaded). Build tree: $build"
step 1 "dependencies (scripts/bootstrap.sh)"
bash "$root/scripts/bootstrap.sh"
step 2 "configure ($CTFX_BUILD_TYPE, CTFX_WERROR=ON)"
bash "$root/scripts/configure.sh" -DCTFX_WERROR=ON "$@"
step 3 "build: every test, example and tool (-j $jobs; the longest step; benchmarks: bench/run_host.sh)"
cmake --build "$build" -j "$jobs"
step 4 "run the tests (CTest, -j $jobs)"
ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout "${CTFX_TEST_TIMEOUT:-900}"
step 4 "done: every test passed"
