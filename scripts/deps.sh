#!/usr/bin/env bash
# Installs the Debian 12 packages braid needs to build, test and demo.
# As root it installs what is missing; otherwise it prints the exact command.
set -euo pipefail

PKGS=(cmake ninja-build g++ pkg-config ccache
      libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev
      libibverbs-dev ibverbs-utils perftest libfabric-dev libfabric-bin
      openmpi-bin netpipe-openmpi
      ucx-utils libopenmpi-dev mpich libmpich-dev
      nlohmann-json3-dev
      libgloo-dev
      libdpdk-dev libssl-dev
      iproute2 procps nftables libnetfilter-queue-dev gnuplot-nox python3
      ethtool clang libbpf-dev)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    echo "deps: installing ${missing[*]} (through sudo)" >&2
    sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends "${missing[@]}" >/dev/null
    exit 0
  fi
  echo "braid needs these Debian packages; install them (as root) with:" >&2
  echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
