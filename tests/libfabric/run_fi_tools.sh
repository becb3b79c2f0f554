#!/usr/bin/env bash
# Runs Debian's unmodified libfabric tools over the braid provider on
# loopback: fi_info -p braid (it must describe an FI_EP_RDM endpoint with
# FI_MSG, FI_TAGGED, FI_RMA and FI_ATOMIC with their mr_mode; no atomics
# with FI_BRAID_ATOMICS=0), then
# fi_pingpong -p braid -e rdm in msg and tagged mode with data checks
# (-c), and, given its path, bench/fi_stream's fi-stream (32 sends of 64 KiB
# in flight, every byte and the order checked) in both modes.
# Usage: run_fi_tools.sh PROVIDER_DIR [FI_STREAM]
# Exit 77 (skipped) when fi_info or fi_pingpong is not installed.
set -euo pipefail

dir=${1:?usage: run_fi_tools.sh PROVIDER_DIR [FI_STREAM]}
stream=${2:-}
for tool in fi_info fi_pingpong; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIP: $tool not installed (Debian: apt-get install libfabric-bin)"
    exit 77
  fi
done
export FI_PROVIDER_PATH=$dir
export FI_PROVIDER=braid
tmp=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

info=$(fi_info -p braid -v)
for want in "FI_EP_RDM" "FI_MSG" "FI_TAGGED" "FI_DIRECTED_RECV" \
            "FI_ORDER_SAS" "FI_PROGRESS_MANUAL" "FI_RMA" "FI_REMOTE_WRITE" \
            "FI_REMOTE_READ" "FI_ATOMIC" "FI_MR_PROV_KEY" "FI_MR_VIRT_ADDR"; do
  if ! grep -q "$want" <<<"$info"; then
    echo "FAIL: fi_info -p braid does not list $want"
    echo "$info"
    exit 1
  fi
done
if grep -q "FI_ATOMIC\b" <<<"$(FI_BRAID_ATOMICS=0 fi_info -p braid -v)"; then
  echo "FAIL: fi_info -p braid with FI_BRAID_ATOMICS=0 offers atomics"
  exit 1
fi
# An application that asks for messages only gets no RMA, and no mr_mode
# requirement with it.
msg_only=$(fi_info -p braid -c FI_MSG -v)
if grep -q "FI_RMA\b\|FI_ATOMIC\b\|FI_MR_PROV_KEY" <<<"$msg_only"; then
  echo "FAIL: fi_info -p braid -c FI_MSG lists RMA, atomics or their mr_mode"
  exit 1
fi
echo "fi_info -p braid: ok"

# One fi_pingpong pair (server, then client on loopback) per mode and size:
# 64 B goes by fi_inject, 64 KiB from the application's buffer with a send
# completion. A free TCP control port for each (the tool's out-of-band
# channel).
port=$(( 20000 + RANDOM % 20000 ))
run_pair() {
  local mode=$1 size=$2
  port=$((port + 1))
  fi_pingpong -p braid -e rdm -m "$mode" -c -I 100 -S "$size" -B "$port" \
    >"$tmp/server.txt" 2>&1 &
  server=$!
  local ok=0
  for _ in $(seq 1 50); do
    if fi_pingpong -p braid -e rdm -m "$mode" -c -I 100 -S "$size" \
         -P "$port" 127.0.0.1 >"$tmp/client.txt" 2>&1; then
      ok=1
      break
    fi
    grep -q "failed to connect" "$tmp/client.txt" || break
    sleep 0.1
  done
  if ! wait "$server"; then ok=0; fi
  server=""
  if [ "$ok" -ne 1 ] || grep -qi "error" "$tmp/client.txt" "$tmp/server.txt"; then
    echo "FAIL: fi_pingpong -e rdm -m $mode -S $size"
    echo "--- client"; cat "$tmp/client.txt"
    echo "--- server"; cat "$tmp/server.txt"
    exit 1
  fi
  echo "fi_pingpong -e rdm -m $mode -S $size: $(tail -1 "$tmp/client.txt")"
}
for mode in msg tagged; do
  for size in 64 65536; do
    run_pair "$mode" "$size"
  done
done

# A window of sends in flight: fi-stream with -c on checks every byte of
# every message at the server and that they complete in send order.
if [ -n "$stream" ]; then
  for mode in msg tagged; do
    addr="$tmp/addr.$mode"
    "$stream" server --addr-file "$addr" -m "$mode" -n 400 -w 32 -c on \
      >"$tmp/server.txt" 2>&1 &
    server=$!
    ok=1
    timeout 60 "$stream" client --addr-file "$addr" -m "$mode" -n 400 -w 32 \
      -c on >"$tmp/client.txt" 2>&1 || ok=0
    wait "$server" || ok=0
    server=""
    if [ "$ok" -ne 1 ]; then
      echo "FAIL: fi-stream -m $mode -c on"
      echo "--- client"; cat "$tmp/client.txt"
      echo "--- server"; cat "$tmp/server.txt"
      exit 1
    fi
    echo "fi-stream -m $mode -c on: $(cat "$tmp/client.txt")"
  done
fi
