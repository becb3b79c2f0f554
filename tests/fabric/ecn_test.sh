#!/usr/bin/env bash
# --ecn-limit marks CE on ECT packets above the packet rate (a virtual queue),
# leaves non-ECT packets alone, and the receiver sees every mark.
source "$(dirname "$0")/lib.sh"
fabric_require_root
fabric_init bfecn

fab up --spines 4 >/dev/null
sport=$(fabric_first_port_on 1 0 1 9000 49000 49100)
fab impair --spine 1 --dir down --ecn-limit 1000 --ecn-burst 10
fab counters --reset
# 4000 packets/s for 1 s against a 1000/s limit: about 3/4 get CE.
probe_run 0 1 1 4000 "$sport" --pps 4000 --ect
assert_eq "$PROBE_RC" 0 "ECT flow: no loss"
ce=$(probe_get 'r["total"]["ce"]')
fabric_snapshot
fabric_log "CE marks: $ce of 4000 (spine counter $(fabric_counter 1 down_ecn))"
assert_eq "$(fabric_counter 1 down_ecn)" "$ce" "spine's mark counter equals CE seen"
assert_between "$ce" 2600 3300 "CE marks above 1000 packets/s"
probe_run 0 1 1 4000 "$sport" --pps 4000
assert_eq "$(probe_get 'r["total"]["ce"]')" 0 "CE on non-ECT packets"
fab impair --spine 1 --restore
probe_run 0 1 1 4000 "$sport" --pps 4000 --ect
assert_eq "$(probe_get 'r["total"]["ce"]')" 0 "CE after restore"
fabric_pass
