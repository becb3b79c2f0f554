#!/usr/bin/env bash
# A flood of forged first contacts against a live transfer: while B (host 1)
# sends A (host 0) a bounded bw transfer, an off-path attacker (host 2)
# sends A SYNC + one fragment of a 64 KiB message from each of 20 000
# distinct forged (IP, reply port) addresses at 5000 a second (each a new
# peer with a partial message until the table of 1024 is three quarters
# full; from then on each is answered with a first-contact challenge and
# gets no state). The transfer completes with every message delivered once
# and nothing forged delivered, no restart is believed, and A saw the flood
# (each forged datagram made a peer, was challenged or was refused one). A
# new legitimate peer (host 3, braid-first-contact) gets a message through
# during the flood (within 3 tries of 1 s; the time is logged). The
# full-speed figure is bench/flood_ab.py (docs/security.md).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/braid_lib.sh"
source "$(dirname "$0")/braid_attack_lib.sh"
fabric_require_root
braid_require_perf
attack_require_forge
FIRST_CONTACT=${BRAID_FIRST_CONTACT:-}
if [[ -z $FIRST_CONTACT ]]; then
  FIRST_CONTACT=$(ls -t "$FABRIC_SRC_ROOT"/build*/bench/first_contact/braid-first-contact 2>/dev/null | head -n 1 || true)
fi
fabric_init bfflood

attack_fabric_up 4 --spines 2
readonly A=$ATTACK_VICTIM B=$ATTACK_PEER C=3

perf_server $A --stats --json --block
perf_client_bg $B $A --test bw -s 64k -D 8 --stats --block
sleep 1.5
forge_at $A flood --prefix 10.96.0.0/12 --rate 5000 --count 20000 \
  --msg-len 65536 --frag-len 1024 &
forge_pid=$!
FABRIC_BG_PIDS+=("$forge_pid")
sleep 0.5
probe=""
if [[ -x $FIRST_CONTACT ]]; then
  probe=$(fab exec --host $C -- "$FIRST_CONTACT" --to "$(fab addr --host $A):$PERF_DPORT" \
    --bind-ip "$(fab addr --host $C)" --tries 3 --timeout-ms 1000 --gap-ms 20 | tail -n 1) || true
fi
wait "$forge_pid" || fabric_fail "braid-forge failed"
transfer_still_on "flood"
sent=$(python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])["datagrams"])' \
  "$FABRIC_TMP/forge.json")
perf_client_wait
perf_wait_server
# The new peer's Hello was answered with Busy, not counted as foreign.
perf_check_ok "transfer under a flood"
r=$(server_stat peer_restarts)
((r == 0)) || fabric_fail "A believed $r restart(s)"
seen=$(($(server_stat peers_created) + $(server_stat drop_no_peer_slot) +
  $(server_stat drop_first_contact_challenged)))
fabric_log "flood: $sent sent; A: peers_created $(server_stat peers_created), peers $(server_stat peers), peers_evicted $(server_stat peers_evicted), drop_no_peer_slot $(server_stat drop_no_peer_slot), drop_first_contact_challenged $(server_stat drop_first_contact_challenged)"
((seen * 2 >= sent)) || fabric_fail "A saw $seen of $sent forged first contacts (socket drops?)"
fabric_log "transfer: $(perf_get 'r["results"][0]["gbps"]') Gbit/s, each message once"
fabric_log "new peer during the flood: ${probe:-not measured (braid-first-contact not built)}"
if [[ -x $FIRST_CONTACT ]]; then
  [[ $probe == *'"failed":0'* ]] || fabric_fail "a new peer did not get through the flood: $probe"
fi
fabric_pass
