#!/usr/bin/env bash
# Runs unmodified perftest / ibverbs-utils binaries over braid0 with the
# DPDK backend (BRAID_VERBS_BACKEND=dpdk): the two processes are joined by
# net_memif (shared memory; no root, NIC or hugepages) and find each other's
# MAC by ARP. Every case must exit 0 on both sides, each process bounded by
# `timeout`. Both sides busy-poll, so on a small machine the figures mean
# nothing; this checks that the verbs device works over DPDK.
#
# usage: run_perftest_dpdk.sh <path/to/libbraid-verbs.so>
set -u
LIB=$(readlink -f "${1:?usage: run_perftest_dpdk.sh <libbraid-verbs.so>}")
source "$(dirname "$0")/preload.sh"
verbs_preload "$LIB"
TMO=${PERFTEST_TIMEOUT:-90}
WORK=$(mktemp -d /tmp/braid-perftest-dpdk.XXXXXX)
EAL="--no-huge -m 512 --no-pci --no-telemetry --log-level=*:error"
server_pid=""
fail=0

cleanup() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
  fi
  rm -rf "$WORK" /var/run/dpdk/bpd_s_$$_* /var/run/dpdk/bpd_c_$$_* 2>/dev/null
}
trap cleanup EXIT INT TERM

# run_case NAME BIN ARGS...: server and client of one perftest binary.
run_case() {
  local name=$1
  shift
  local sock="$WORK/$name.sock" port=$((19000 + RANDOM % 2000))
  env LD_PRELOAD="$PRELOAD" BRAID_VERBS_BACKEND=dpdk BRAID_VERBS_BIND=10.78.0.1 \
    BRAID_VERBS_DPDK_EAL="$EAL --file-prefix=bpd_s_$$_$name --vdev=net_memif0,role=server,socket=$sock" \
    timeout "$TMO" "$@" -p "$port" >"$WORK/$name.server" 2>&1 &
  server_pid=$!
  sleep 1
  env LD_PRELOAD="$PRELOAD" BRAID_VERBS_BACKEND=dpdk BRAID_VERBS_BIND=10.78.0.2 \
    BRAID_VERBS_DPDK_EAL="$EAL --file-prefix=bpd_c_$$_$name --vdev=net_memif0,role=client,socket=$sock" \
    timeout "$TMO" "$@" -p "$port" 127.0.0.1 >"$WORK/$name.client" 2>&1
  local crc=$?
  wait "$server_pid"
  local src=$?
  server_pid=""
  if [[ $crc -eq 0 && $src -eq 0 ]]; then
    echo "PASS $name"
  else
    echo "FAIL $name (client $crc, server $src)"
    tail -5 "$WORK/$name.client" "$WORK/$name.server"
    fail=1
  fi
}

run_case write_bw ib_write_bw -d braid0 -s 65536 -n 500
run_case send_bw ib_send_bw -d braid0 -s 4096 -n 500
run_case read_lat ib_read_lat -d braid0 -n 300
run_case rc_pingpong ibv_rc_pingpong -d braid0 -g 0 -n 300
exit $fail
