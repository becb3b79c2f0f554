#!/usr/bin/env bash
# Same-run comparison of 64 B one-way latency: ib_send_lat over braid0 (the
# unmodified perftest binary, LD_PRELOAD=libbraid-verbs.so on both sides)
# against braid-perf's ping-pong on the raw endpoint, alternated back to
# back on loopback. Prints per round both medians and their ratio, and at
# the end the medians over the rounds (the target: braid0 <= 1.3x).
#
# Fair counterparts: ib_send_lat (without -e) busy-polls its CQ, and each
# ibv_poll_cq on braid0 drives the endpoint (Poll) inline; braid-perf's
# default --poll busy-polls the endpoint the same way. Both report one-way
# latency as RTT/2; ib_send_lat's t_typical is its median, braid-perf's
# p50 likewise. (--block, sleeping in epoll, would compare busy polling
# against wake-ups and flatter braid0.)
#
# usage: send_lat_vs_braid_perf.sh <build-dir> [rounds]
# env:   SIZE (64)  ITERS (5000)  BASE_LIB (unset)  PORT (19800)
set -u
BUILD=$(readlink -f "${1:?usage: send_lat_vs_braid_perf.sh <build-dir> [rounds]}")
ROUNDS=${2:-3}
SIZE=${SIZE:-64}
ITERS=${ITERS:-5000}
PORT=${PORT:-19800}
LIB=$BUILD/src/verbs_compat/libbraid-verbs.so
PERF=$BUILD/tools/braid_perf/braid-perf
pids=()
cleanup() { local q; for q in "${pids[@]}"; do kill "$q" 2>/dev/null; wait "$q" 2>/dev/null; done; pids=(); }
trap cleanup EXIT INT TERM

last=""  # the figure of the last run (us), empty on failure
ratios=(); perf_us=(); verbs_us=(); base_ratios=()

median() {  # numbers as arguments
  printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {
    if (NR == 0) {print "n/a"; exit}
    if (NR % 2) print a[(NR+1)/2]; else printf "%.4f\n", (a[NR/2]+a[NR/2+1])/2}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a > 0 && b > 0) printf "%.3f", a / b}'; }

wait_tcp() {  # perftest's server listens on TCP $1
  for _ in $(seq 1 200); do
    ss -ltnH "sport = :$1" 2>/dev/null | grep -q . && return 0
    sleep 0.05
  done
  return 1
}

run_ib_send_lat() {  # <lib> <label>
  PORT=$((PORT + 1))
  last=""
  LD_PRELOAD=$1 timeout 300 ib_send_lat -d braid0 -p "$PORT" -s "$SIZE" -n "$ITERS" >/dev/null 2>&1 &
  pids+=($!)
  wait_tcp "$PORT" || { echo "$2: server did not start"; cleanup; return; }
  local line
  line=$(LD_PRELOAD=$1 timeout 300 ib_send_lat -d braid0 -p "$PORT" -s "$SIZE" -n "$ITERS" 127.0.0.1 2>&1 |
         awk -v s="$SIZE" '$1 == s {print}')
  cleanup
  echo "$2: ib_send_lat -s $SIZE -n $ITERS: ${line:-failed}  (#bytes #iters t_min t_max t_typical t_avg t_stdev p99 p99.9 [us])"
  last=$(awk '{print $5}' <<<"$line")
}

run_braid_perf() {
  PORT=$((PORT + 1))
  timeout 300 "$PERF" --server --bind "127.0.0.1:$PORT" >/dev/null 2>&1 &
  pids+=($!)
  sleep 0.5
  echo "braid-perf --test lat -s $SIZE -n $ITERS (--poll):"
  local out
  out=$(timeout 300 "$PERF" --client "127.0.0.1:$PORT" --test lat --poll -s "$SIZE" -n "$ITERS" 2>&1)
  sed 's/^/  /' <<<"$out"
  cleanup
  last=$(awk '$1 == "lat" {print $6}' <<<"$out")
}

for r_ in $(seq 1 "$ROUNDS"); do
  echo "== round $r_ (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  run_braid_perf
  p=$last
  run_ib_send_lat "$LIB" "braid0"
  v=$last
  r=$(ratio "$v" "$p")
  echo "round $r_: braid0 t_typical ${v:-failed} us / braid-perf p50 ${p:-failed} us = ${r:-n/a}x"
  [[ -n "$p" ]] && perf_us+=("$p")
  [[ -n "$v" ]] && verbs_us+=("$v")
  [[ -n "$r" ]] && ratios+=("$r")
  if [[ -n "${BASE_LIB:-}" ]]; then
    run_ib_send_lat "$BASE_LIB" "braid0 (BASE_LIB)"
    b=$(ratio "$last" "$p")
    echo "round $r_: braid0 (BASE_LIB) ${last:-failed} us = ${b:-n/a}x"
    [[ -n "$b" ]] && base_ratios+=("$b")
  fi
done
echo "== medians over $ROUNDS rounds (load now: $(cut -d' ' -f1-3 /proc/loadavg))"
echo "braid-perf p50 $(median "${perf_us[@]}") us, braid0 t_typical $(median "${verbs_us[@]}") us," \
     "ratio median $(median "${ratios[@]}")x (per round: ${ratios[*]:-none}; target <= 1.3)"
if [[ -n "${BASE_LIB:-}" ]]; then
  echo "BASE_LIB ratio median $(median "${base_ratios[@]}")x (per round: ${base_ratios[*]:-none})"
fi
