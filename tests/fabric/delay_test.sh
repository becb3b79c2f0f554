#!/usr/bin/env bash
# --delay-us adds a fixed one-way delay on one spine, keeps order, and only
# there; restore removes it.
source "$(dirname "$0")/lib.sh"
fabric_require_root
fabric_init bfdelay

fab up --spines 4 >/dev/null
slow=$(fabric_first_port_on 3 0 1 9000 48000 48100)
fast=$(fabric_first_port_off 3 0 1 9000 48000 48100)
p50() { probe_get 'r["ports"][0]["delay_us"]["p50"]'; }
probe_run 0 1 1 500 "$slow" --pps 2000
base=$(p50)
fab impair --spine 3 --dir up --delay-us 4000
probe_run 0 1 1 500 "$slow" --pps 2000
assert_eq "$PROBE_RC" 0 "delayed flow: no loss, no reorder"
delayed=$(p50)
dmin=$(probe_get 'r["ports"][0]["delay_us"]["min"]')
fabric_log "one-way p50: $base us without, $delayed us with 4000 us delay (min $dmin)"
assert_between "$dmin" 4000 1000000 "minimum delay with 4 ms added"
assert_between "$(awk -v a="$delayed" -v b="$base" 'BEGIN{print a-b}')" 3800 5500 "added p50 delay (us)"
probe_run 0 1 1 500 "$fast" --pps 2000
assert_between "$(p50)" 0 2000 "p50 of a flow on another spine (us)"
fab impair --spine 3 --restore
probe_run 0 1 1 500 "$slow" --pps 2000
assert_between "$(p50)" 0 2000 "p50 after restore (us)"
fabric_pass
