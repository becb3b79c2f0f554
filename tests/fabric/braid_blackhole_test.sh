#!/usr/bin/env bash
# One spine blackholed in the middle of a braid transfer (16 paths), then
# restored: no message is lost or duplicated, every byte arrives intact, the
# blackhole really dropped braid's packets, and after the restore braid's
# packets cross that spine again.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/braid_lib.sh"
fabric_require_root
braid_require_perf
fabric_init bfbhole

fab up --spines 4 --mtu 9000 >/dev/null
bad=2
base=$(braid_balanced_base 0 1 16)
[[ -n $base ]] || fabric_fail "no 16-port window spreads evenly"
braid_pin_ports 0 "$base" 16
braid_pin_ports 1 "$base" 16
perf_server 1 --paths 16 --entropy-sockets 16 --mtu 9000 --block
perf_client_bg 0 1 --test bw -s 64k -D 6 --paths 16 --entropy-sockets 16 --mode spray --mtu 9000 --block
sleep 1.5
fab impair --spine $bad --dir both --blackhole
fabric_log "spine $bad blackholed"
sleep 1.5
fab counters >/dev/null
perf_spread_snapshot
dropped=$(perf_link_counter $bad 0 up_drop)
fab impair --spine $bad --restore
fab counters --reset
fabric_log "spine $bad restored after dropping $dropped data packets"
perf_client_wait
perf_wait_server
perf_check_ok "spray with spine $bad blackholed mid-run"
((dropped > 0)) || fabric_fail "the blackhole dropped nothing: it was not exercised"
perf_spread_snapshot
after=$(perf_link_counter $bad 0 up_pkts)
fabric_log "after the restore spine $bad carried $after data packets; $(perf_get 'r["results"][0]["gbps"]') Gbit/s, $(perf_get 'r["results"][0]["retransmits"]') retransmits"
((after > 0)) || fabric_fail "braid never used spine $bad again after the restore"
fabric_pass
