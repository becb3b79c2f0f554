#!/usr/bin/env bash
# Same-run comparison of 64 KiB goodput: ib_write_bw over braid0 (the
# unmodified perftest binary, LD_PRELOAD=libbraid-verbs.so on both sides)
# against braid-perf's bw test on the raw endpoint, alternated back to back
# on loopback. With BASE_LIB set, a second libbraid-verbs.so (e.g. one built
# from an older commit) is measured in the same rounds, for an A/B.
#
# Prints per round the braid0/braid-perf goodput ratio (perftest's MB/s is
# 2^20 bytes/s, converted to Gbit/s) and at the end the medians of both
# figures and of the per-round ratios (the target: >= 0.8).
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
cleanup() { local q; for q in "${pids[@]}"; do kill "$q" 2>/dev/null; wait "$q" 2>/dev/null; done; pids=(); }
trap cleanup EXIT INT TERM

wait_tcp() {  # perftest's server listens on TCP $1
  for _ in $(seq 1 200); do
    ss -ltnH "sport = :$1" 2>/dev/null | grep -q . && return 0
    sleep 0.05
  done
  return 1
}

last=""  # the figure of the last run (Gbit/s), empty on failure
ratios=(); perf_gbps=(); verbs_gbps=(); base_ratios=()

median() {  # numbers as arguments
  printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {
    if (NR == 0) {print "n/a"; exit}
    if (NR % 2) print a[(NR+1)/2]; else printf "%.4f\n", (a[NR/2]+a[NR/2+1])/2}'
}

run_ib_write_bw() {  # <lib> <label>
  last=""
  PORT=$((PORT + 1))
  LD_PRELOAD=$1 timeout 300 ib_write_bw -d braid0 -p "$PORT" -s "$SIZE" -n "$ITERS" >/dev/null 2>&1 &
  pids+=($!)
  wait_tcp "$PORT" || { echo "$2: server did not start"; cleanup; return; }
  local line
  line=$(LD_PRELOAD=$1 timeout 300 ib_write_bw -d braid0 -p "$PORT" -s "$SIZE" -n "$ITERS" 127.0.0.1 2>&1 |
         awk -v s="$SIZE" '$1 == s {print}')
  cleanup
  echo "$2: ib_write_bw -s $SIZE -n $ITERS: ${line:-failed}  (#bytes #iters peak avg[MB/s] Mpps)"
  last=$(awk '{printf "%.4f", $4 * 1048576 * 8 / 1e9}' <<<"$line")
}

run_braid_perf() {
  PORT=$((PORT + 1))
  timeout 300 "$PERF" --server --bind "127.0.0.1:$PORT" >/dev/null 2>&1 &
  pids+=($!)
  sleep 0.5
  echo "braid-perf --test bw -s $SIZE -n $ITERS:"
  local out
  out=$(timeout 300 "$PERF" --client "127.0.0.1:$PORT" --test bw -s "$SIZE" -n "$ITERS" 2>&1)
  sed 's/^/  /' <<<"$out"
  cleanup
  last=$(awk '$1 == "bw" {print $4}' <<<"$out")
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a > 0 && b > 0) printf "%.3f", a / b}'; }

for r_ in $(seq 1 "$ROUNDS"); do
  echo "== round $r_ (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  run_braid_perf
  p=$last
  run_ib_write_bw "$LIB" "braid0"
  v=$last
  r=$(ratio "$v" "$p")
  echo "round $r_: braid0 ${v:-failed} Gbit/s / braid-perf ${p:-failed} Gbit/s = ${r:-n/a}x"
  [[ -n "$p" ]] && perf_gbps+=("$p")
  [[ -n "$v" ]] && verbs_gbps+=("$v")
  [[ -n "$r" ]] && ratios+=("$r")
  if [[ -n "${BASE_LIB:-}" ]]; then
    run_ib_write_bw "$BASE_LIB" "braid0 (BASE_LIB)"
    b=$(ratio "$last" "$p")
    echo "round $r_: braid0 (BASE_LIB) ${last:-failed} Gbit/s = ${b:-n/a}x"
    [[ -n "$b" ]] && base_ratios+=("$b")
  fi
done
echo "== medians over $ROUNDS rounds (load now: $(cut -d' ' -f1-3 /proc/loadavg))"
echo "braid-perf $(median "${perf_gbps[@]}") Gbit/s, braid0 $(median "${verbs_gbps[@]}") Gbit/s," \
     "ratio median $(median "${ratios[@]}")x (per round: ${ratios[*]:-none}; target >= 0.8)"
if [[ -n "${BASE_LIB:-}" ]]; then
  echo "BASE_LIB ratio median $(median "${base_ratios[@]}")x (per round: ${base_ratios[*]:-none})"
fi
