#!/usr/bin/env bash
# --delay-us adds a fixed one-way delay on one spine, keeps order, and only
# there; restore removes it.
source "$(dirname "$0")/lib.sh"
fabric_require_root
fabric_init bfdelay

fab up --spines 4 >/dev/null
slow=$(fabric_first_port_on 3 0 1 9000 48000 48100)
fast=$(fabric_first_port_off 3 0 1 9000 48000 48100)
# Minimum one-way delays: robust on a loaded machine, where scheduling
# latency inflates the median but some packets still cross unhindered.
dmin() { probe_get 'r["ports"][0]["delay_us"]["min"]'; }
p50() { probe_get 'r["ports"][0]["delay_us"]["p50"]'; }
probe_run 0 1 1 500 "$slow" --pps 2000
assert_eq "$PROBE_RC" 0 "undelayed flow"
base=$(dmin)
fab impair --spine 3 --dir up --delay-us 4000
probe_run 0 1 1 500 "$slow" --pps 2000
assert_eq "$PROBE_RC" 0 "delayed flow: no loss, no reorder"
delayed=$(dmin)
fabric_log "one-way min: $base us without, $delayed us with 4000 us delay (p50 $(p50) us)"
assert_between "$delayed" 4000 6000 "minimum delay with 4 ms added (us)"
probe_run 0 1 1 500 "$fast" --pps 2000
assert_between "$(dmin)" 0 2000 "minimum delay of a flow on another spine (us)"
fab impair --spine 3 --restore
probe_run 0 1 1 500 "$slow" --pps 2000
assert_between "$(dmin)" 0 2000 "minimum delay after restore (us)"
fabric_pass
