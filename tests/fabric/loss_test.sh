#!/usr/bin/env bash
# 1 % random loss on one spine drops about 1 % of that spine's packets, all
# counted, and nothing on the other spines.
source "$(dirname "$0")/lib.sh"
fabric_require_root
fabric_init bfloss

fab up --spines 4 >/dev/null
lossy=$(fabric_first_port_on 1 0 1 9000 45000 45100)
clean=$(fabric_first_port_off 1 0 1 9000 45000 45100)
[[ -n $lossy && -n $clean ]] || fabric_fail "no ports found on/off spine 1"
fab impair --spine 1 --dir up --loss 1
n=20000

fab counters --reset
probe_run 0 1 1 $n "$lossy" --server-opts --allow-loss --pps 40000
lost=$(probe_get 'r["total"]["lost"]')
fabric_snapshot
drops=$(fabric_counter 1 up_drop)
fabric_log "port $lossy via spine 1: lost $lost of $n, nft drops $drops"
assert_eq "$lost" "$drops" "receiver losses equal the spine's drop counter"
assert_between "$drops" $((n * 6 / 1000)) $((n * 14 / 1000)) "drops at 1 % loss"
assert_eq "$(probe_get 'r["total"]["duplicates"] + r["total"]["reordered"]')" 0 "dups+reorders"

probe_run 0 1 1 5000 "$clean" --pps 40000
assert_eq "$PROBE_RC" 0 "port $clean avoiding spine 1 loses nothing"

fab impair --spine 1 --restore
fab counters --reset
probe_run 0 1 1 5000 "$lossy" --pps 40000
assert_eq "$PROBE_RC" 0 "no loss after restore"
fabric_snapshot
assert_eq "$(fabric_counter 1 up_drop)" 0 "drops after restore"
fabric_pass
