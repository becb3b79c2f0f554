#!/usr/bin/env bash
# Open MPI 4.1.4 (Debian openmpi-bin, netpipe-openmpi) over the braid
# libfabric provider (pml cm, mtl ofi) against the same binaries over
# Open MPI's TCP BTL (pml ob1, btl tcp,self), 2 ranks on loopback, and
# braid-perf's own ping-pong at the same sizes. Prints NetPIPE's 8 B,
# 64 KiB and 1 MiB lines of each (NetPIPE times are one-way: half a
# round trip; in us, with Mbit/s) and
# braid-perf's one-way figures.
#
#   bench/mpi_fi_ab.sh --perf PATH/braid-perf --provider-dir DIR
set -euo pipefail

PERF=""
DIR=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --perf) PERF="$2"; shift 2 ;;
    --provider-dir) DIR="$2"; shift 2 ;;
    *) echo "unknown flag $1" >&2; exit 2 ;;
  esac
done
[[ -x "$PERF" && -d "$DIR" ]] || {
  echo "usage: mpi_fi_ab.sh --perf PATH/braid-perf --provider-dir DIR" >&2
  exit 2
}
for t in mpirun.openmpi NPopenmpi; do
  command -v "$t" >/dev/null || { echo "$t missing (apt-get install openmpi-bin netpipe-openmpi)" >&2; exit 2; }
done
tmp=$(mktemp -d)
SRV=""
cleanup() { [[ -n "$SRV" ]] && kill "$SRV" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
MPI=(mpirun.openmpi --allow-run-as-root --oversubscribe -np 2)

pick() {  # NetPIPE output file: the lines of 8 B, 64 KiB, 1 MiB
  awk '$1 == 8 || $1 == 65536 || $1 == 1048576 {
         printf "  %8d B  %9.2f us one-way  %9.1f Mbit/s\n", $1, $3 * 1e6, $2
       }' "$1"
}

echo "Open MPI, pml cm + mtl ofi, provider braid:"
FI_PROVIDER_PATH=$DIR timeout 300 "${MPI[@]}" --mca pml cm --mca mtl ofi \
  --mca mtl_ofi_provider_include braid -x FI_PROVIDER_PATH \
  NPopenmpi -u 1048576 -o "$tmp/braid.np" >/dev/null 2>&1
pick "$tmp/braid.np"
echo "Open MPI, pml ob1 + btl tcp,self:"
timeout 300 "${MPI[@]}" --mca pml ob1 --mca btl tcp,self \
  NPopenmpi -u 1048576 -o "$tmp/tcp.np" >/dev/null 2>&1
pick "$tmp/tcp.np"
# NetPIPE reports the best of its repeats; braid-perf the median (p50) and
# the mean (1 / (2 x round trips/s)) of its one-way times.
echo "braid-perf --test lat (one-way p50, and mean):"
port=$(( 22000 + RANDOM % 20000 ))
# As many round trips as NetPIPE makes of each size, at least: a short run's
# median is its warm-up (1,000 pings of 16 B gave a 50 us p50 where 20,000
# give 6 us on the same quiet machine).
for s in 16 65536 1048576; do
  case $s in 16) n=20000 ;; 65536) n=5000 ;; *) n=1000 ;; esac
  port=$((port + 1))
  timeout 120 "$PERF" --server --bind "127.0.0.1:$port" >/dev/null 2>&1 &
  SRV=$!
  sleep 0.2
  timeout 120 "$PERF" --client "127.0.0.1:$port" --test lat -s "$s" \
    -n "$n" --no-verify | tail -1 |
    awk '{ow = 1e6 / (2 * $5)
          printf "  %8d B  %9.2f us one-way p50 (mean %.2f)  %9.1f Mbit/s at p50\n", $2, $6, ow, $2 * 8 / $6}'
  wait "$SRV" 2>/dev/null || true
  SRV=""
done
