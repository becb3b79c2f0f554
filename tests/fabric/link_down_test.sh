#!/usr/bin/env bash
# A downed spine link is taken out of ECMP cleanly (no loss, flows move to the
# other spines), and restore brings the spine and its routes back.
source "$(dirname "$0")/lib.sh"
fabric_require_root
fabric_init bflink

fab up --spines 4 >/dev/null
sport=$(fabric_first_port_on 2 0 1 9000 50000 50100)
fab impair --spine 2 --link-down
moved=$(fabric_spine_of 0 1 "$sport" 9000)
[[ $moved != 2 ]] || fabric_fail "flow still predicted on the downed spine"
fab counters --reset
probe_run 0 1 16 200 51000 --pps 20000
assert_eq "$PROBE_RC" 0 "16 flows with spine 2 down: no loss"
fabric_snapshot
assert_eq "$(fabric_counter 2 up_pkts)" 0 "packets on the downed spine"
fab impair --spine 2 --restore
assert_eq "$(fabric_spine_of 0 1 "$sport" 9000)" 2 "flow back on spine 2 after restore"
fab counters --reset
probe_run 0 1 1 500 "$sport" --pps 20000
assert_eq "$PROBE_RC" 0 "flow through the restored spine"
fabric_snapshot
assert_eq "$(fabric_counter 2 up_pkts)" 500 "packets on the restored spine"
fabric_pass
