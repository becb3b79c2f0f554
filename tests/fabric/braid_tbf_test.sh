#!/usr/bin/env bash
# One spine a tbf tail-drop bottleneck (spine 0's up links at 20 Mbit/s, the
# other spines unshaped), first without, then with ECN marking ahead of it:
# braid (spray, 16 paths, swift) delivers every message exactly once and
# byte-exact both times; with ECN on, CE marks reach braid.
# The rate is low because this VM moves only a few hundred Mbit/s through
# braid in total; 20 Mbit/s (~280 9000-byte packets/s) is well below one
# spine's share, so the bottleneck really binds.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/braid_lib.sh"
fabric_require_root
braid_require_perf
fabric_init bfbtbf

fab up --spines 4 --mtu 9000 >/dev/null
base=$(braid_balanced_base 0 1 16)
[[ -n $base ]] || fabric_fail "no 16-port window spreads evenly"
braid_pin_ports 0 "$base" 16
braid_pin_ports 1 "$base" 16
for ecn in off on; do
  fab impair --spine 0 --dir up --restore --rate 20mbit --burst 64k --limit 128k
  [[ $ecn == on ]] && fab impair --spine 0 --dir up --ecn-limit 200 --ecn-burst 8
  fab counters --reset
  perf_run 0 1 --test bw -s 64k -D 3 --paths 16 --mode spray --mtu 9000 --block
  perf_check_ok "spray through a tbf bottleneck, ECN $ecn"
  perf_spread_snapshot
  q=$(perf_link_counter 0 0 up_qdrop)
  m=$(perf_link_counter 0 0 up_ecn)
  sent=$(perf_get 'r["results"][0]["client"]["datagrams_sent"]')
  rtx=$(perf_get 'r["results"][0]["retransmits"]')
  fabric_log "ECN $ecn: $(perf_get 'r["results"][0]["gbps"]') Gbit/s, tail drops $q, CE marks $m, retransmits $rtx of $sent datagrams"
  if [[ $ecn == on ]]; then
    ((m > 0)) || fabric_fail "no CE marks: the ECN virtual queue was not exercised"
  else
    assert_eq "$m" 0 "CE marks without ECN marking"
  fi
done
fabric_pass
