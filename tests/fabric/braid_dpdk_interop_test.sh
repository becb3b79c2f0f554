#!/usr/bin/env bash
# braid over DPDK (net_af_packet on host 0's fabric interface) and braid over
# kernel UDP (host 1) talk to each other across the routed fabric, in both
# directions: DPDK client -> kernel server and kernel client -> DPDK server,
# each a verified bulk transfer (3000 x 64 KiB) and a ping-pong run. Every
# message arrives once and byte-exact, both exit codes are 0, and the
# server's own line reports nothing bad, duplicated or missing. The data
# packets cross every spine in both directions (braid's source ports, on
# the DPDK side written into the frames by braid itself, spread over the
# kernel's ECMP). The DPDK host keeps its IP and MAC: the leaf's bridge
# learns only eth0's MAC on its port, the leaf reaches it through braid's
# own ARP replies, and DPDK resolves its gateway by ARP.
#
# The DPDK host's set-up (why the kernel's UDP and ARP are dropped in its
# namespace, why the leaf finishes checksums) is explained at the top of
# braid_dpdk_lib.sh. Source ports are pinned as in braid_spread_test.sh: a
# 16-port window that the kernel spreads 4/4/4/4 over the spines; the DPDK
# side sends from exactly those ports (--dpdk-src-port-base, 16 entropies)
# and the kernel side's ip_local_port_range is narrowed to them.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/braid_lib.sh"
source "$(dirname "$0")/braid_dpdk_lib.sh"
dpdk_test_start bfdpdkio

fab up --spines 4 >/dev/null
dpdk_host_setup 0
dpdk_pin_balanced 0 1
fabric_log "source ports $DPDK_BASE..$((DPDK_BASE + 15)); host 0 runs DPDK on eth0 ($DPDK_MAC)"
common=(--paths 16 --entropy-sockets 16 --time-limit 30)
dpdk=("${DPDK_FLAGS[@]}")
iters=3000
pings=1000
# A lat run of -n N sends N/10 warm-up pings first (at most 1000); the
# server receives and checks those too.
pings_total=$((pings + pings / 10))

# ---- DPDK client (host 0) -> kernel server (host 1)
fab counters --reset >/dev/null
perf_server 1 --json --stats "${common[@]}"
perf_client 0 1 "${dpdk[@]}" "${common[@]}" --test bw -s 64k -n $iters --stats
perf_wait_server
perf_check_ok "DPDK client -> kernel server, bw"
perf_check_server_line $iters "DPDK client -> kernel server, bw"
fabric_log "DPDK -> kernel: $(perf_get 'r["results"][0]["gbps"]') Gbit/s, $(perf_get 'r["results"][0]["retransmits"]') retransmits, $(perf_get 'r["stats"]["endpoint"]["neighbor_requests_sent"]') ARP request(s) for the gateway, $(perf_get 'r["stats"]["endpoint"]["tx_zero_copy_frames"]') frames sent zero-copy"
spread_check 0 $((iters * 45)) "DPDK -> kernel"
(($(perf_get 'r["stats"]["endpoint"]["neighbor_learnt"]') >= 1)) ||
  fabric_fail "the DPDK client never learnt its gateway's MAC"
assert_eq "$(stats_value "$FABRIC_TMP/server.err" tx_icmp_errors)" 0 \
  "ICMP errors seen by the kernel server"

perf_server 1 --json "${common[@]}"
perf_client 0 1 "${dpdk[@]}" "${common[@]}" --test lat -n $pings
perf_wait_server
perf_check_ok "DPDK client -> kernel server, lat" $pings_total
perf_check_server_line $pings_total "DPDK client -> kernel server, lat"
fabric_log "DPDK -> kernel ping-pong: p50 $(perf_get 'r["results"][0]["lat_p50_us"]') us one way"

# ---- kernel client (host 1) -> DPDK server (host 0). The leaf forgets
# host 0's MAC first: it can only learn it back from braid's ARP reply.
dpdk_forget_host 0
fab counters --reset >/dev/null
perf_server 0 --json --stats "${dpdk[@]}" "${common[@]}"
perf_client 1 0 "${common[@]}" --test bw -s 64k -n $iters --stats
perf_wait_server
perf_check_ok "kernel client -> DPDK server, bw"
perf_check_server_line $iters "kernel client -> DPDK server, bw"
fabric_log "kernel -> DPDK: $(perf_get 'r["results"][0]["gbps"]') Gbit/s, $(perf_get 'r["results"][0]["retransmits"]') retransmits; DPDK server: $(stats_value "$FABRIC_TMP/server.err" neighbor_replies_sent) ARP replies sent, $(stats_value "$FABRIC_TMP/server.err" frame_rx_bad_udp_checksum) bad UDP checksums"
spread_check 1 $iters "kernel -> DPDK"
assert_eq "$(perf_get 'r["stats"]["endpoint"]["tx_icmp_errors"]')" 0 \
  "ICMP errors seen by the kernel client"
(($(stats_value "$FABRIC_TMP/server.err" neighbor_replies_sent) >= 1)) ||
  fabric_fail "the DPDK server answered no ARP request (the leaf had forgotten it)"
assert_eq "$(stats_value "$FABRIC_TMP/server.err" frame_rx_bad_udp_checksum)" 0 \
  "datagrams the DPDK server dropped for their UDP checksum"

perf_server 0 --json "${dpdk[@]}" "${common[@]}"
perf_client 1 0 "${common[@]}" --test lat -n $pings
perf_wait_server
perf_check_ok "kernel client -> DPDK server, lat" $pings_total
perf_check_server_line $pings_total "kernel client -> DPDK server, lat"
fabric_log "kernel -> DPDK ping-pong: p50 $(perf_get 'r["results"][0]["lat_p50_us"]') us one way"

# ---- The host side: the kernel saw braid's datagrams (and dropped them),
# so af_packet tapped them before netfilter; it sent no ICMP; only braid
# answered ARP; and braid used eth0's MAC (the leaf learnt no other).
dropped=$(dpdk_nft_counter 0 braid_udp)
((dropped > 0)) || fabric_fail "the kernel of host 0 saw none of braid's datagrams"
assert_eq "$(dpdk_icmp_unreachables 0)" 0 "ICMP unreachables sent by host 0's kernel"
assert_eq "$(dpdk_learnt_macs 0 | sort -u | tr '\n' ' ')" "$DPDK_MAC " \
  "MACs the leaf learnt on host 0's port"
fabric_log "host 0's kernel dropped $dropped of braid's datagrams (nft, after af_packet's copy) and $(dpdk_nft_counter 0 arp_in) ARP frames; it sent no ICMP"
fabric_pass
