#!/usr/bin/env bash
# Installs, only where missing, what ctfx needs from Debian's archive. Idempotent and quick when
# everything is present. The CUDA toolkit (nvcc, CCCL) comes with this machine kind.
set -euo pipefail
need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in cmake ninja-build g++ libboost-dev doctest-dev python3; do
  have_pkg "$p" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "bootstrap: installing ${need[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
if [ ! -e /usr/local/cuda/include/cccl/thrust/version.h ] && [ ! -e /usr/local/cuda/targets/x86_64-linux/include/cccl/thrust/version.h ]; then
  echo "bootstrap: the CUDA toolkit's CCCL headers were not found under /usr/local/cuda (set CTFX_CCCL_INCLUDE_DIR)" >&2
fi
