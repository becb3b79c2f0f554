#!/usr/bin/env bash
# Both hosts run braid over DPDK (net_af_packet on their fabric interfaces,
# set up as in braid_dpdk_lib.sh). One spine is blackholed in both
# directions in the middle of a bulk transfer and then restored, the way
# braid_blackhole_test.sh does it: the transfer completes with every message
# delivered once and byte-exact (the server's line: nothing bad, duplicated
# or missing), the blackhole really dropped braid's frames, the client
# penalised paths and recycled some onto fresh source ports, and after the
# restore braid's frames cross that spine again.
#
# Source ports: the DPDK client sends from 49152.. with 32 entropy values
# (twice its 16 paths; the spares are what recycling moves a failed path
# to) and picks its 16 paths among them at random. The blackholed spine is
# the one that carries the most of those 32 ports, so the chance that no
# path uses it is below 1e-4.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/braid_lib.sh"
source "$(dirname "$0")/braid_dpdk_lib.sh"
dpdk_test_start bfdpdkbh

fab up --spines 4 >/dev/null
dpdk_host_setup 1
server_flags=("${DPDK_FLAGS[@]}")
dpdk_host_setup 0
client_flags=("${DPDK_FLAGS[@]}")
bad=$(fab path --src 0 --dst 1 --sport 49152-49183 --dport $PERF_DPORT |
  awk '{n[$2]++} END {for (s in n) print n[s], s}' | sort -rn | awk '{print $2; exit}')
[[ -n $bad ]] || fabric_fail "no path prediction for the client's source ports"
common=(--paths 16 --time-limit 40)

perf_server 1 --json --stats "${server_flags[@]}" "${common[@]}"
# Long enough that the restore comes well before the end even when the
# braid-fabric commands are slow on a loaded host (checked below).
duration=15
perf_client_bg 0 1 "${client_flags[@]}" "${common[@]}" --test bw -s 64k -D $duration --stats
# Blackhole only once data flows (the EAL and the ARP exchange come first).
for ((n = 0; n < 40; n++)); do
  perf_spread_snapshot
  flowing=0
  for k in 0 1 2 3; do flowing=$((flowing + $(perf_link_counter "$k" 0 up_pkts))); done
  ((flowing > 2000)) && break
  sleep 0.25
done
((flowing > 2000)) || fabric_fail "no data crossed the fabric: $(tail -c 400 "$FABRIC_TMP/server.err")"
fab impair --spine "$bad" --dir both --blackhole
fabric_log "spine $bad blackholed after $flowing data frames"
# Blackholed for 2 s, and longer (up to 6 s) until it has dropped 200 of
# the client's data frames: penalising and recycling are decided by losses,
# not by time, and a host short of CPU sends fewer frames per second.
for ((n = 0; n < 24; n++)); do
  sleep 0.25
  ((n < 7)) && continue
  perf_spread_snapshot
  (($(perf_link_counter "$bad" 0 up_drop) >= 200)) && break
done
fab impair --spine "$bad" --restore
perf_spread_snapshot
t_restore=$(date +%s.%N)
before=$(perf_link_counter "$bad" 0 up_pkts)
fabric_log "spine $bad restored"
perf_client_wait
t_end=$(date +%s.%N)
perf_wait_server
perf_check_ok "DPDK to DPDK with spine $bad blackholed mid-run"
perf_check_server_line "$(perf_get 'r["results"][0]["iters"]')" \
  "DPDK to DPDK with spine $bad blackholed mid-run"
perf_spread_snapshot
dropped=$(perf_link_counter "$bad" 0 up_drop)
((dropped > 0)) || fabric_fail "the blackhole dropped no data frame: it was not exercised"
penalties=$(perf_get 'r["stats"]["endpoint"]["path_penalties"]')
recycles=$(perf_get 'r["stats"]["endpoint"]["path_recycles"]')
((penalties > 0)) || fabric_fail "the client penalised no path"
((recycles > 0)) || fabric_fail "the client recycled no path"
margin=$(python3 -c 'import sys; print("%.1f" % (float(sys.argv[2]) - float(sys.argv[1])))' "$t_restore" "$t_end")
python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= 1.0 else 1)' "$margin" ||
  fabric_fail "the restore came only $margin s before the transfer ended: recovery not observable (host too slow); lengthen the run"
after=$(($(perf_link_counter "$bad" 0 up_pkts) - before))
fabric_log "$(perf_get 'r["results"][0]["iters"]') x 64 KiB delivered, $(perf_get 'r["results"][0]["gbps"]') Gbit/s, $(perf_get 'r["results"][0]["retransmits"]') retransmits; the blackhole dropped $dropped data frames; $penalties path penalties, $recycles recycles; after the restore spine $bad carried $after data frames in the last $margin s"
per_spine=""
for k in 0 1 2 3; do per_spine+="$(perf_link_counter "$k" 0 up_pkts) "; done
fabric_log "data frames per spine over the run: $per_spine; acks the blackhole dropped: $(perf_link_counter "$bad" 1 up_drop)"
((after > 0)) || fabric_fail "braid never used spine $bad again after the restore"
fabric_pass
