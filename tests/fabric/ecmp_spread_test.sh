#!/usr/bin/env bash
# Source ports spread flows over the spines exactly as the kernel's ECMP hash
# (predicted by `ip route get ... sport`) says; 64 ports use all 4 spines.
source "$(dirname "$0")/lib.sh"
fabric_require_root
fabric_init bfspread

fab up --spines 4 >/dev/null
check_spread() {  # check_spread PORTS BASE PER_PORT
  local ports=$1 base=$2 per=$3 k want got
  fab counters --reset
  probe_run 0 1 "$ports" "$per" "$base" --pps 20000
  assert_eq "$PROBE_RC" 0 "probe with $ports ports (no loss, no reorder)"
  declare -A predicted=()
  while read -r k n; do predicted[$k]=$n; done < <(fabric_spine_counts 0 1 "$base" $((base + ports - 1)) 9000)
  fabric_log "$ports ports: predicted per spine: $(for k in 0 1 2 3; do printf '%s ' "${predicted[$k]:-0}"; done)"
  fabric_snapshot
  for k in 0 1 2 3; do
    want=$((${predicted[$k]:-0} * per))
    got=$(fabric_counter "$k" up_pkts)
    assert_eq "$got" "$want" "packets on spine $k ($ports ports)"
    assert_eq "$(fabric_counter "$k" rx_pkts)" "$want" "packets arriving at spine $k"
  done
  USED=${#predicted[@]}
}
check_spread 16 42000 100
check_spread 64 43000 50
assert_eq "$USED" 4 "spines carrying traffic with 64 source ports"
fabric_pass
