#!/usr/bin/env bash
# A tbf bottleneck on one spine port limits the flow through it to the rate,
# dropping the excess at the tail; restore removes it.
source "$(dirname "$0")/lib.sh"
fabric_require_root
fabric_init bftbf

fab up --spines 4 >/dev/null
sport=$(fabric_first_port_on 0 0 1 9000 47000 47100)
fab impair --spine 0 --dir up --rate 20mbit --burst 16kb --limit 64kb
# Offer ~40 Mbit/s for 1.5 s: 1000-byte datagrams at 5000/s.
probe_run 0 1 1 7500 "$sport" --server-opts --allow-loss --pps 5000
rate=$(probe_get 'r["total"]["rate_mbps"]')
lost=$(probe_get 'r["total"]["lost"]')
fabric_snapshot
qdrop=$(fabric_counter 0 up_qdrop)
fabric_log "through 20 Mbit/s tbf: $rate Mbit/s of UDP payload, lost $lost, tbf drops $qdrop"
# tbf counts Ethernet frames: 1042 bytes per 1000 payload bytes -> 19.2 Mbit/s.
assert_between "$rate" 16 21 "payload rate through tbf (Mbit/s)"
assert_eq "$qdrop" "$lost" "receiver losses equal tbf drops"
assert_between "$lost" 2500 4500 "tail drops at 2x overload"
fab impair --spine 0 --restore
probe_run 0 1 1 7500 "$sport" --pps 5000
assert_eq "$PROBE_RC" 0 "no loss after restore"
fabric_pass
