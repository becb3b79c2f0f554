#!/usr/bin/env bash
# The go-back-N baseline uses one path: all its data packets cross the one
# spine the kernel's hash picks for its single source port, and every
# message arrives exactly once, byte-exact.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/braid_lib.sh"
fabric_require_root
braid_require_perf
fabric_init bfbgbn

fab up --spines 4 --mtu 9000 >/dev/null
for port in 41000 41001 41002; do
  want=$(fabric_spine_of 0 1 "$port" "$PERF_DPORT")
  braid_pin_ports 0 "$port" 1  # gbn opens one path socket: exactly this port
  braid_pin_ports 1 "$port" 1
  fab counters --reset
  perf_run 0 1 --test bw -s 64k -D 2 --mode gbn --mtu 9000 --block
  perf_check_ok "gbn from port $port"
  perf_spread_snapshot
  for k in 0 1 2 3; do
    n=$(perf_link_counter "$k" 0 up_pkts)
    if [[ $k == "$want" ]]; then
      ((n > 50)) || fabric_fail "gbn (port $port) put only $n packets on its spine $k"
    else
      assert_eq "$n" 0 "gbn (port $port, spine $want) packets on spine $k"
    fi
  done
  fabric_log "port $port: all data on spine $want"
done
fabric_pass
