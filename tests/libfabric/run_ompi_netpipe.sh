#!/usr/bin/env bash
# Open MPI's ofi MTL over the braid provider: Debian's unmodified
# NetPIPE (netpipe-openmpi) between 2 ranks on loopback with
# --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include braid, sizes
# up to 16 KiB (powers of two, -p 0). Usage: run_ompi_netpipe.sh PROVIDER_DIR
# Exit 77 (skipped) when mpirun.openmpi or NPopenmpi is not installed
# (Open MPI by name: with MPICH installed too, plain mpirun is whichever
# the alternatives system picked).
set -euo pipefail

dir=${1:?usage: run_ompi_netpipe.sh PROVIDER_DIR}
for tool in mpirun.openmpi NPopenmpi; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIP: $tool not installed (Debian: apt-get install openmpi-bin netpipe-openmpi)"
    exit 77
  fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export FI_PROVIDER_PATH=$dir
if ! timeout 100 mpirun.openmpi --allow-run-as-root --oversubscribe -np 2 \
       --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include braid \
       -x FI_PROVIDER_PATH -x FI_LOG_LEVEL=info -x FI_LOG_PROV=braid \
       NPopenmpi -p 0 -u 16384 -o "$tmp/np.out" >"$tmp/log.txt" 2>&1; then
  echo "FAIL: mpirun.openmpi NPopenmpi over the braid provider"
  grep -v "fi_param_get\|fi_getinfo" "$tmp/log.txt" | tail -40
  exit 1
fi
# Both ranks opened braid endpoints, and NetPIPE reached 16 KiB.
opened=$(grep -c "braid:ep_ctrl:Close.* closing: " "$tmp/log.txt" || true)
if [ "$opened" -ne 2 ] || ! awk '$1 == 16384 {found = 1} END {exit !found}' "$tmp/np.out"; then
  echo "FAIL: expected 2 braid endpoints and a 16 KiB NetPIPE line"
  cat "$tmp/np.out"
  exit 1
fi
awk '$1 == 8 || $1 == 16384 {printf "NetPIPE over braid: %d B %.2f us one-way, %.1f Mbit/s\n", $1, $3 * 1e6, $2}' "$tmp/np.out"
