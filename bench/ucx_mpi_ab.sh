#!/usr/bin/env bash
# MPI over UCX over braid0 against braid-perf, and against the same MPI
# binary over TCP, 2 ranks on loopback. The MPI binary is
# tests/ucx/mpi_pingpong.c (built here with mpicc.openmpi and mpicc.mpich);
# its figure is the median half round trip of a ping-pong (8 B: --iters
# round trips, 1 MiB: a tenth of them). braid-perf's is its one-way
# latency (--test lat, p50 of round trip / 2) at 16 B (its smallest
# message) and 1 MiB, unpinned and with its two processes on CPUs 0 and 1
# (as Open MPI, and MPICH with -bind-to core, place the ranks); the ratios
# use the better of the two. Each round runs every row once, interleaved; the
# table shows the median of the rounds.
#
#   bench/ucx_mpi_ab.sh --perf build/tools/braid_perf/braid-perf \
#     --lib build/src/verbs_compat/libbraid-verbs.so [--rounds 3] [--iters 1000]
#
# Rows: braid-perf; Open MPI pml ucx over braid0 (UCX_TLS=rc_verbs,ud_verbs,
# self); Open MPI's TCP BTL (pml ob1, btl tcp,self); Open MPI pml ucx over
# UCX's tcp; MPICH (ch4:ucx, -bind-to core, MPIR_CVAR_NOLOCAL=1) over braid0
# and over UCX's tcp. Needs the device node (scripts/braid0-node.sh; made and
# removed here when run as root).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PERF=""
LIB=""
ROUNDS=3
ITERS=1000
while [[ $# -gt 0 ]]; do
  case "$1" in
    --perf) PERF=$2; shift 2 ;;
    --lib) LIB=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --iters) ITERS=$2; shift 2 ;;
    *) echo "ucx_mpi_ab: unknown flag $1" >&2; exit 2 ;;
  esac
done
[[ -x $PERF && -f $LIB ]] || {
  echo "usage: ucx_mpi_ab.sh --perf PATH/braid-perf --lib PATH/libbraid-verbs.so [--rounds N] [--iters N]" >&2
  exit 2
}
PERF=$(readlink -f "$PERF")
source "$HERE/../tests/ucx/lib.sh"
ucx_require mpirun.openmpi mpicc.openmpi mpirun.mpich mpicc.mpich ss
ucx_setup "$LIB" "$HERE/../scripts/braid0-node.sh"
[[ $NODE_MADE -eq 1 ]] && echo "(made /dev/infiniband/uverbs-braid0 for this run)"
BIG_ITERS=$(((ITERS + 9) / 10))

for m in openmpi mpich; do
  "mpicc.$m" -O2 -o "$WORK/pp_$m" "$HERE/../tests/ucx/mpi_pingpong.c" || exit 1
done

BRAID_UCX=(UCX_TLS=rc_verbs,ud_verbs,self UCX_NET_DEVICES=braid0:1)
TCP_UCX=(UCX_TLS=tcp,self UCX_NET_DEVICES=lo)
OMPI=(mpirun.openmpi --allow-run-as-root --oversubscribe -np 2)
MPICH=(mpirun.mpich -n 2 -bind-to core -genv MPIR_CVAR_NOLOCAL 1)

# launch ROW: fills CMD with the launcher of that row.
launch() {
  local v
  case $1 in
    ompi_braid0)
      CMD=("${OMPI[@]}" --mca pml ucx --mca btl self -x "LD_PRELOAD=$PRELOAD")
      for v in "${BRAID_UCX[@]}"; do CMD+=(-x "$v"); done
      CMD+=("$WORK/pp_openmpi") ;;
    ompi_tcp_btl)
      CMD=("${OMPI[@]}" --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo
        "$WORK/pp_openmpi") ;;
    ompi_ucx_tcp)
      CMD=("${OMPI[@]}" --mca pml ucx --mca btl self --mca pml_ucx_tls any
        --mca pml_ucx_devices any)
      for v in "${TCP_UCX[@]}"; do CMD+=(-x "$v"); done
      CMD+=("$WORK/pp_openmpi") ;;
    mpich_braid0)
      CMD=("${MPICH[@]}" -genv LD_PRELOAD "$PRELOAD")
      for v in "${BRAID_UCX[@]}"; do CMD+=(-genv "${v%%=*}" "${v#*=}"); done
      CMD+=("$WORK/pp_mpich") ;;
    mpich_ucx_tcp)
      CMD=("${MPICH[@]}")
      for v in "${TCP_UCX[@]}"; do CMD+=(-genv "${v%%=*}" "${v#*=}"); done
      CMD+=("$WORK/pp_mpich") ;;
  esac
}

# mpi_row ROW: appends "ROW SIZE MEDIAN_US" lines to $WORK/results.
mpi_row() {
  local row=$1 iters size
  launch "$row"
  for size in 8 1048576; do
    iters=$ITERS
    [[ $size -gt 8 ]] && iters=$BIG_ITERS
    # 3: correct, then stuck in MPI_Finalize (see ucx_run_mpi): figures stand.
    ucx_run_mpi "$WORK/$row.log" 300 "${CMD[@]}" "$iters" "$size"
    local rc=$?
    if [[ $rc -ne 0 && $rc -ne 3 ]]; then
      echo "ucx_mpi_ab: $row at $size B failed (exit $rc):" >&2
      grep -vE "UCX +(DIAG|INFO)" "$WORK/$row.log" | tail -5 >&2
      continue
    fi
    awk -v r="$row" '/^pingpong/ {print r, $2, $10}' "$WORK/$row.log" >>"$WORK/results"
  done
}

# perf_row NAME PIN_SERVER PIN_CLIENT: braid-perf's one-way p50 at 16 B and
# 1 MiB, its two processes on the CPUs given (taskset; "" = unpinned).
perf_row() {
  local name=$1 size iters port pid
  local srv_pin=() cli_pin=()
  [[ -n $2 ]] && srv_pin=(taskset -c "$2")
  [[ -n $3 ]] && cli_pin=(taskset -c "$3")
  port=$(ucx_free_port) || return
  "${srv_pin[@]}" timeout -k 3 600 "$PERF" --server --persistent \
    --bind "127.0.0.1:$port" >"$WORK/perf_server.log" 2>&1 &
  pid=$!
  ucx_track "$pid"
  ucx_wait_listen "$port" "$pid" || sleep 0.5
  for size in 16 1048576; do
    iters=$ITERS
    [[ $size -gt 16 ]] && iters=$BIG_ITERS
    "${cli_pin[@]}" timeout 300 "$PERF" --client "127.0.0.1:$port" --test lat \
      -s "$size" -n "$iters" --no-verify 2>&1 | tail -1 |
      awk -v r="$name" '$1 == "lat" {print r, $2, $6}' >>"$WORK/results"
  done
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}

: >"$WORK/results"
for r in $(seq 1 "$ROUNDS"); do
  echo "round $r of $ROUNDS (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  perf_row braid_perf "" ""
  perf_row braid_perf_pinned 0 1
  for row in ompi_braid0 ompi_tcp_btl ompi_ucx_tcp mpich_braid0 mpich_ucx_tcp; do
    mpi_row "$row"
  done
done

# Medians of the rounds; ratios of the braid0 rows to braid-perf.
python3 - "$WORK/results" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    row, size, us = line.split()
    rows.setdefault(row, {}).setdefault("small" if int(size) <= 16 else "big", []).append(float(us))
def med(row, k):
    v = rows.get(row, {}).get(k)
    return statistics.median(v) if v else float("nan")
names = {
    "braid_perf": "braid-perf --test lat (16 B), one-way p50",
    "braid_perf_pinned": "  the same, taskset -c 0 / -c 1",
    "ompi_braid0": "Open MPI pml ucx, braid0 (rc_verbs)",
    "ompi_tcp_btl": "Open MPI pml ob1, TCP BTL",
    "ompi_ucx_tcp": "Open MPI pml ucx, UCX tcp",
    "mpich_braid0": "MPICH ch4:ucx, braid0 (rc_verbs)",
    "mpich_ucx_tcp": "MPICH ch4:ucx, UCX tcp",
}
print(f"{'':44} {'8 B half RTT':>14} {'1 MiB half RTT':>16} {'1 MiB MB/s':>11}")
for row, name in names.items():
    s, b = med(row, "small"), med(row, "big")
    print(f"{name:44} {s:11.2f} us {b:13.1f} us {1048576 / b:11.0f}")
# braid-perf's best: its lower median of the two placements, per size.
ps = min(med("braid_perf", "small"), med("braid_perf_pinned", "small"))
pb = min(med("braid_perf", "big"), med("braid_perf_pinned", "big"))
for row in ("ompi_braid0", "mpich_braid0"):
    print(f"{names[row]}: 8 B {med(row, 'small') / ps:.2f}x braid-perf "
          f"(target <= 2x), 1 MiB {med(row, 'big') / pb:.2f}x (target <= 1.3x) "
          f"of braid-perf's better placement")
EOF
