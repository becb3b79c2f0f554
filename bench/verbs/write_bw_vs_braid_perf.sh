#!/usr/bin/env bash
# Same-run comparison of 64 KiB goodput: ib_write_bw over braid0 (the
# unmodified perftest binary, LD_PRELOAD=libbraid-verbs.so on both sides)
# against braid-perf's bw test on the raw endpoint, alternated back to back
# on loopback. With BASE_LIB set, a second libbraid-verbs.so (e.g. one built
# from an older commit) is measured in the same rounds, for an A/B.
#
# usage: write_bw_vs_braid_perf.sh <build-dir> [rounds]
# env:   SIZE (65536)  ITERS (5000)  BASE_LIB (unset)  PORT (19700)
set -u
BUILD=$(readlink -f "${1:?usage: write_bw_vs_braid_perf.sh <build-dir> [rounds]}")
ROUNDS=${2:-2}
SIZE=${SIZE:-65536}
ITERS=${ITERS:-5000}
PORT=${PORT:-19700}
LIB=$BUILD/src/verbs_compat/libbraid-verbs.so
PERF=$BUILD/tools/braid_perf/braid-perf
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; pids=(); }
trap cleanup EXIT INT TERM

wait_tcp() {  # perftest's server listens on TCP $1
  for _ in $(seq 1 200); do
    ss -ltnH "sport = :$1" 2>/dev/null | grep -q . && return 0
    sleep 0.05
  done
  return 1
}

run_ib_write_bw() {  # <lib> <label>
  PORT=$((PORT + 1))
  LD_PRELOAD=$1 timeout 300 ib_write_bw -d braid0 -p "$PORT" -s "$SIZE" -n "$ITERS" >/dev/null 2>&1 &
  pids+=($!)
  wait_tcp "$PORT" || { echo "$2: server did not start"; cleanup; return; }
  local line
  line=$(LD_PRELOAD=$1 timeout 300 ib_write_bw -d braid0 -p "$PORT" -s "$SIZE" -n "$ITERS" 127.0.0.1 2>&1 |
         awk -v s="$SIZE" '$1 == s {print}')
  cleanup
  echo "$2: ib_write_bw -s $SIZE -n $ITERS: ${line:-failed}  (#bytes #iters peak avg[MB/s] Mpps)"
}

run_braid_perf() {
  PORT=$((PORT + 1))
  timeout 300 "$PERF" --server --bind "127.0.0.1:$PORT" >/dev/null 2>&1 &
  pids+=($!)
  sleep 0.5
  echo "braid-perf --test bw -s $SIZE -n $ITERS:"
  timeout 300 "$PERF" --client "127.0.0.1:$PORT" --test bw -s "$SIZE" -n "$ITERS" 2>&1 | sed 's/^/  /'
  cleanup
}

for r in $(seq 1 "$ROUNDS"); do
  echo "== round $r (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  run_braid_perf
  run_ib_write_bw "$LIB" "braid0"
  if [[ -n "${BASE_LIB:-}" ]]; then run_ib_write_bw "$BASE_LIB" "braid0 (BASE_LIB)"; fi
done
