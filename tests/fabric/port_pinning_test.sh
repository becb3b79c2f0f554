#!/usr/bin/env bash
# One source port stays on one spine: every packet of the flow crosses the
# predicted spine, none crosses another, and none is reordered.
source "$(dirname "$0")/lib.sh"
fabric_require_root
fabric_init bfpin

fab up --spines 4 >/dev/null
for sport in 44000 44001 44002; do
  spine=$(fabric_spine_of 0 1 "$sport" 9000)
  fab counters --reset
  probe_run 0 1 1 2000 "$sport" --pps 40000
  assert_eq "$PROBE_RC" 0 "probe from port $sport"
  assert_eq "$(probe_get 'r["total"]["reordered"]')" 0 "reordered packets"
  fabric_snapshot
  for k in 0 1 2 3; do
    want=0
    ((k == spine)) && want=2000
    assert_eq "$(fabric_counter "$k" up_pkts)" "$want" "port $sport packets on spine $k (predicted $spine)"
  done
done
fabric_pass
