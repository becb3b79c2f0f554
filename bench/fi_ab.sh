#!/usr/bin/env bash
# The libfabric provider side by side with braid's own tool and with
# libfabric's udp;ofi_rxd, alternating in one run on loopback. Each round
# measures, with both sides busy-polling:
#   braid-perf --test lat -s 64         one-way = 1 / (2 x round trips/s)
#   fi_pingpong -p braid -S 64          usec/xfer (one way; fi_inject)
#   fi_pingpong -p "udp;ofi_rxd" -S 64
#   braid-perf --test lat -s 65536      ping-pong MB/s = 64 KiB / one-way
#   fi_pingpong -p braid -S 65536       MB/sec (ping-pong)
#   fi_pingpong -p "udp;ofi_rxd" -S 65536
#   braid-perf --test bw -s 65536       streaming goodput (32 in flight)
#   fi-stream -p braid -s 65536 -w 32   the same through libfabric: a
#                                       client keeping 32 sends in flight
#                                       (bench/fi_stream; with --stream)
# and prints each round and the medians with the ratios of the figures.
# Servers run on CPU 1 and clients on CPU 0 (taskset) when there are two
# CPUs or more, so every leg gets the same placement.
#
#   bench/fi_ab.sh --perf PATH/braid-perf --provider-dir DIR
#                  [--stream PATH/fi-stream] [--rounds 5] [--iters 2000]
#
# Every server is started for one measurement and stopped by its PID.
set -euo pipefail

PERF=""
DIR=""
STREAM=""
ROUNDS=5
ITERS=2000
while [[ $# -gt 0 ]]; do
  case "$1" in
    --perf) PERF="$2"; shift 2 ;;
    --provider-dir) DIR="$2"; shift 2 ;;
    --stream) STREAM="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --iters) ITERS="$2"; shift 2 ;;
    *) echo "unknown flag $1" >&2; exit 2 ;;
  esac
done
[[ -x "$PERF" && -d "$DIR" ]] || {
  echo "usage: fi_ab.sh --perf PATH/braid-perf --provider-dir DIR" >&2
  exit 2
}
command -v fi_pingpong >/dev/null || { echo "fi_pingpong missing" >&2; exit 2; }
[[ -z "$STREAM" || -x "$STREAM" ]] || { echo "no fi-stream at $STREAM" >&2; exit 2; }
ADDR_FILE=$(mktemp -u /tmp/fi_ab_addr.XXXXXX)
export FI_PROVIDER_PATH=$DIR
unset FI_PROVIDER

SRV=""
SRV_CPU=()
CLI_CPU=()
if command -v taskset >/dev/null && (($(nproc) >= 2)); then
  SRV_CPU=(taskset -c 1)
  CLI_CPU=(taskset -c 0)
fi
cleanup() {
  [[ -n "$SRV" ]] && kill "$SRV" 2>/dev/null
  rm -f "$ADDR_FILE" "$ADDR_FILE.tmp"
  true
}
trap cleanup EXIT
port=$(( 21000 + RANDOM % 20000 ))
# braid-perf runs at the provider's MTU: FI_BRAID_MTU, or by default the
# loopback interface's, at most 9000 (src/libfabric/link_mtu.h).
lo_mtu=$(cat /sys/class/net/lo/mtu 2>/dev/null || echo 1500)
PERF_MTU=(--mtu "${FI_BRAID_MTU:-$(( lo_mtu < 9000 ? lo_mtu : 9000 ))}")

# braid-perf: prints the table row of the run (test size iters Gbit/s msg/s ...)
perf_run() {  # test size
  port=$((port + 1))
  timeout 60 "${SRV_CPU[@]}" "$PERF" --server --bind "127.0.0.1:$port" \
    "${PERF_MTU[@]}" >/dev/null 2>&1 &
  SRV=$!
  sleep 0.2
  timeout 60 "${CLI_CPU[@]}" "$PERF" --client "127.0.0.1:$port" --test "$1" -s "$2" \
    -n "$ITERS" --no-verify "${PERF_MTU[@]}" | tail -1
  wait "$SRV" 2>/dev/null || true
  SRV=""
}

# fi_pingpong: prints "usec/xfer MB/sec" of the run (the client retries
# until the server listens; udp;ofi_rxd takes a while to start).
pp_run() {  # provider size
  port=$((port + 1))
  timeout 120 "${SRV_CPU[@]}" fi_pingpong -p "$1" -e rdm -I "$ITERS" -S "$2" \
    -B "$port" >/dev/null 2>&1 &
  SRV=$!
  local out=""
  for _ in $(seq 1 50); do
    sleep 0.2
    if out=$(timeout 120 "${CLI_CPU[@]}" fi_pingpong -p "$1" -e rdm \
               -I "$ITERS" -S "$2" -P "$port" 127.0.0.1 2>/dev/null); then
      break
    fi
  done
  tail -1 <<<"$out" | awk '{print $7, $6}'
  wait "$SRV" 2>/dev/null || true
  SRV=""
}

# fi-stream: prints the client's MB/s (or "-" without --stream).
stream_run() {  # size
  if [[ -z "$STREAM" ]]; then echo "-"; return; fi
  rm -f "$ADDR_FILE"
  timeout 120 "${SRV_CPU[@]}" "$STREAM" server --addr-file "$ADDR_FILE" \
    -s "$1" -n "$ITERS" -w 32 >/dev/null 2>&1 &
  SRV=$!
  timeout 120 "${CLI_CPU[@]}" "$STREAM" client --addr-file "$ADDR_FILE" \
    -s "$1" -n "$ITERS" -w 32 | awk '{print $4}'
  wait "$SRV" 2>/dev/null || true
  SRV=""
}

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

declare -A col
printf "%-5s %10s %10s %10s %10s %10s %10s %10s %10s\n" round perf_lat fi_lat \
  rxd_lat perf_pp64k fi_pp64k rxd_pp64k perf_bw64k fi_bw64k
printf "%-5s %10s %10s %10s %10s %10s %10s %10s %10s\n" "" us us us MB/s MB/s \
  MB/s MB/s MB/s
for r in $(seq 1 "$ROUNDS"); do
  pl=$(perf_run lat 64 | awk '{printf "%.2f", 1e6 / (2 * $5)}')
  read -r fl _ < <(pp_run braid 64)
  read -r rl _ < <(pp_run "udp;ofi_rxd" 64)
  pp=$(perf_run lat 65536 | awk '{printf "%.1f", 65536 * 2 * $5 / 1e6}')
  read -r _ fp < <(pp_run braid 65536)
  read -r _ rp < <(pp_run "udp;ofi_rxd" 65536)
  pb=$(perf_run bw 65536 | awk '{printf "%.1f", $4 * 1000 / 8}')
  fb=$(stream_run 65536)
  printf "%-5s %10s %10s %10s %10s %10s %10s %10s %10s\n" "$r" "$pl" "$fl" \
    "$rl" "$pp" "$fp" "$rp" "$pb" "$fb"
  col[pl]+="$pl "; col[fl]+="$fl "; col[rl]+="$rl "
  col[pp]+="$pp "; col[fp]+="$fp "; col[rp]+="$rp "; col[pb]+="$pb "
  col[fb]+="$fb "
done
m() { tr ' ' '\n' <<<"${col[$1]}" | grep . | median; }
PL=$(m pl) FL=$(m fl) RL=$(m rl) PP=$(m pp) FP=$(m fp) RP=$(m rp) PB=$(m pb)
FB=$(tr ' ' '\n' <<<"${col[fb]}" | grep -v '^-' | grep . | median || true)
printf "%-5s %10s %10s %10s %10s %10s %10s %10s %10s\n" median "$PL" "$FL" \
  "$RL" "$PP" "$FP" "$RP" "$PB" "${FB:--}"
awk -v pl="$PL" -v fl="$FL" -v rl="$RL" -v pp="$PP" -v fp="$FP" -v rp="$RP" \
    -v pb="$PB" -v fb="${FB:-}" 'BEGIN {
  printf "fi_pingpong braid 64 B latency / braid-perf lat:      %.2f\n", fl / pl
  printf "fi_pingpong udp;ofi_rxd 64 B latency / braid:         %.2f\n", rl / fl
  printf "fi_pingpong braid 64 KiB / braid-perf 64 KiB ping-pong: %.2f\n", fp / pp
  printf "fi_pingpong braid 64 KiB / braid-perf bw 64 KiB:      %.2f\n", fp / pb
  printf "fi_pingpong braid 64 KiB / udp;ofi_rxd 64 KiB:        %.1f\n", fp / rp
  if (fb != "") {
    printf "fi-stream braid 64 KiB / braid-perf bw 64 KiB:         %.2f\n", fb / pb
    printf "fi-stream braid 64 KiB / fi_pingpong udp;ofi_rxd:      %.1f\n", fb / rp
  }
}'
