#!/usr/bin/env bash
# 1 % random loss on one of four spines: braid (spray, 16 paths) and the
# go-back-N baseline (pinned onto the lossy spine) both deliver every message
# exactly once and byte-exact, and the loss really happened.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/braid_lib.sh"
fabric_require_root
braid_require_perf
fabric_init bfbloss

fab up --spines 4 --mtu 9000 >/dev/null
bad=1
fab impair --spine $bad --dir up --loss 1
base=$(braid_balanced_base 0 1 16)
[[ -n $base ]] || fabric_fail "no 16-port window spreads evenly"
braid_pin_ports 0 "$base" 16
braid_pin_ports 1 "$base" 16
fab counters --reset
perf_run 0 1 --test bw -s 64k -D 3 --paths 16 --mode spray --mtu 9000 --block
perf_check_ok "spray with 1 % loss on spine $bad"
perf_spread_snapshot
drops=$(perf_link_counter $bad 0 up_drop)
fabric_log "spray: $(perf_get 'r["results"][0]["gbps"]') Gbit/s, spine $bad dropped $drops data packets, $(perf_get 'r["results"][0]["retransmits"]') retransmits"
((drops > 0)) || fabric_fail "spine $bad dropped nothing: the loss was not exercised"

port=$(fabric_first_port_on $bad 0 1 "$PERF_DPORT" 41000 41100)
braid_pin_ports 0 "$port" 1
braid_pin_ports 1 "$port" 1
fab counters --reset
perf_run 0 1 --test bw -s 64k -D 3 --mode gbn --mtu 9000 --block
perf_check_ok "gbn across the lossy spine $bad"
perf_spread_snapshot
drops=$(perf_link_counter $bad 0 up_drop)
fabric_log "gbn: $(perf_get 'r["results"][0]["gbps"]') Gbit/s, spine $bad dropped $drops data packets"
((drops > 0)) || fabric_fail "gbn's spine $bad dropped nothing: the loss was not exercised"
fabric_pass
