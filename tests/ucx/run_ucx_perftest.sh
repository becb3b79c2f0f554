#!/usr/bin/env bash
# Debian's unmodified ucx_perftest (UCX 1.13, ucx-utils) over braid0 on
# loopback, A/B against the same binary over TCP: for each transport set, a
# tag-matching ping-pong (8 B) and a tag bandwidth run (1 MiB, rendezvous),
# server and client both under LD_PRELOAD=libbraid-verbs.so (not for TCP).
#   rc  UCX_TLS=rc_verbs,ud_verbs (rc_verbs carries the data; ud_verbs is
#       UCX's auxiliary transport for wire-up), UCX_NET_DEVICES=braid0:1
#   ud  UCX_TLS=ud_verbs, UCX_NET_DEVICES=braid0:1
#   tcp UCX_TLS=tcp, UCX_NET_DEVICES=lo
# A case passes when both processes exit 0, the client prints its "Final:"
# line, and UCX's own report (UCX_LOG_LEVEL=info, "ep_cfg[..]: tag(...)")
# shows the transport and device the case asked for. Figures are printed,
# never judged.
#
# usage: run_ucx_perftest.sh LIBBRAID_VERBS NODE_SCRIPT
# Exit 77 (skipped) without ucx_perftest, or without the device node and
# root to make it (scripts/braid0-node.sh).
set -uo pipefail
source "$(dirname "$0")/lib.sh"
ucx_require ucx_perftest ss
ucx_setup "${1:?usage: run_ucx_perftest.sh LIB NODE_SCRIPT}" "${2:?NODE_SCRIPT}"

fail=0

# run_case NAME TLS DEVICE PRELOAD EXPECT ARGS...: one server/client pair.
run_case() {
  local name=$1 tls=$2 dev=$3 preload=$4 expect=$5
  shift 5
  local port start srv rc_s rc_c
  port=$(ucx_free_port) || { echo "FAIL $name: no free TCP port"; fail=1; return; }
  start=$(ucx_now_ms)
  env LD_PRELOAD="$preload" UCX_TLS="$tls" UCX_NET_DEVICES="$dev" \
    UCX_LOG_LEVEL=info timeout -k 2 30 ucx_perftest -p "$port" \
    >"$WORK/$name.server" 2>&1 &
  srv=$!
  ucx_track "$srv"
  if ! ucx_wait_listen "$port" "$srv"; then
    echo "FAIL $name: the server did not listen on $port"
    tail -5 "$WORK/$name.server"
    fail=1
    return
  fi
  env LD_PRELOAD="$preload" UCX_TLS="$tls" UCX_NET_DEVICES="$dev" \
    UCX_LOG_LEVEL=info timeout -k 2 30 ucx_perftest 127.0.0.1 -p "$port" \
    "$@" >"$WORK/$name.client" 2>&1
  rc_c=$?
  wait "$srv"
  rc_s=$?
  local ms=$(($(ucx_now_ms) - start))
  local final
  final=$(awk '/^Final:/ {print; exit}' "$WORK/$name.client")
  if [[ $rc_c -ne 0 || $rc_s -ne 0 || -z $final ]] ||
    ! grep -q "ep_cfg\[[0-9]*\]: tag($expect)" "$WORK/$name.client"; then
    echo "FAIL $name (client exit $rc_c, server exit $rc_s, ${ms} ms): expected a Final line and tag($expect)"
    grep -E "ERROR|ep_cfg|Final" "$WORK/$name.client" "$WORK/$name.server" | tail -12
    fail=1
    return
  fi
  # Final: iters, latency p50/avg/overall (us), bandwidth avg/overall (MB/s).
  read -r _ iters p50 avg _ mbs _ <<<"$final"
  printf "ok   %-12s %-24s %6d iters  p50 %9.3f us  avg %9.3f us  %9.1f MB/s  (%d ms)\n" \
    "$name" "$tls" "$iters" "$p50" "$avg" "$mbs" "$ms"
}

BRAID=$PRELOAD
LAT=(-t tag_lat -s 8 -n 300 -w 30)
BW=(-t tag_bw -s 1048576 -n 20 -w 2)
total=$(ucx_now_ms)
run_case rc_lat rc_verbs,ud_verbs braid0:1 "$BRAID" "rc_verbs/braid0:1" "${LAT[@]}"
run_case rc_bw rc_verbs,ud_verbs braid0:1 "$BRAID" "rc_verbs/braid0:1" "${BW[@]}"
run_case ud_lat ud_verbs braid0:1 "$BRAID" "ud_verbs/braid0:1" "${LAT[@]}"
run_case ud_bw ud_verbs braid0:1 "$BRAID" "ud_verbs/braid0:1" "${BW[@]}"
run_case tcp_lat tcp lo "" "tcp/lo" "${LAT[@]}"
run_case tcp_bw tcp lo "" "tcp/lo" "${BW[@]}"
echo "ucx_perftest: $(($(ucx_now_ms) - total)) ms in all"
exit "$fail"
