#!/usr/bin/env bash
# A blackholed spine drops everything sent through it (in either direction
# setting), other spines are untouched, and restore brings it back.
source "$(dirname "$0")/lib.sh"
fabric_require_root
fabric_init bfhole

fab up --spines 4 >/dev/null
dead=$(fabric_first_port_on 2 0 1 9000 46000 46100)
alive=$(fabric_first_port_off 2 0 1 9000 46000 46100)
for dir in up down; do
  fab impair --spine 2 --dir "$dir" --blackhole
  fab counters --reset
  probe_run 0 1 1 1000 "$dead" --server-opts "--allow-loss --timeout-ms 1500" --pps 20000
  assert_eq "$(probe_get 'r["total"]["received"]')" 0 "received through blackholed spine ($dir)"
  fabric_snapshot
  assert_eq "$(fabric_counter 2 "${dir}_drop")" 1000 "blackhole drop counter ($dir)"
  probe_run 0 1 1 1000 "$alive" --pps 20000
  assert_eq "$PROBE_RC" 0 "port $alive on another spine ($dir)"
  fab impair --spine 2 --restore
  probe_run 0 1 1 1000 "$dead" --pps 20000
  assert_eq "$PROBE_RC" 0 "port $dead after restore ($dir)"
done
fabric_pass
