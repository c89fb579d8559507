#!/usr/bin/env bash
# Installs, only where missing, what ctfx needs from Debian's archive (Open MPI included: the
# 4-rank tests run in CI; OpenBLAS: the host's matrix products, ctfx::blas); idempotent, and quick (no
# apt-get at all) when everything is present. CTFX_BOOTSTRAP_OPTIONAL=1 adds the optional ones:
# clang-14 (the cross-compiler checks), libomp-dev (CTFX_HOST_SYSTEM=OMP with clang), gnuplot-nox
# (benchmark plots). The CUDA toolkit (nvcc, CCCL) comes with the machine, not from here.
set -euo pipefail
pkgs=(cmake ninja-build g++ libboost-dev doctest-dev python3 doxygen libopenmpi-dev openmpi-bin libopenblas-dev)
if [ "${CTFX_BOOTSTRAP_OPTIONAL:-0}" = 1 ]; then
  pkgs+=(clang-14 libomp-dev gnuplot-nox)
fi
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
need=()
for p in "${pkgs[@]}"; do
  have_pkg "$p" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "bootstrap: installing ${need[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
cccl_found=0
for d in "${CUDA_HOME:-/nonexistent}/include/cccl" /usr/local/cuda/include/cccl \
         /usr/local/cuda/targets/x86_64-linux/include/cccl; do
  [ -n "$d" ] && [ -e "$d/thrust/version.h" ] && cccl_found=1 && break
done
if [ "$cccl_found" = 0 ]; then
  echo "bootstrap: the CUDA toolkit's CCCL headers (thrust/version.h) were not found under /usr/local/cuda;" \
       "pass -DCTFX_CCCL_INCLUDE_DIR=<toolkit>/include/cccl" >&2
fi
