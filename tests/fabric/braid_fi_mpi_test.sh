#!/usr/bin/env bash
# Open MPI's ofi MTL over the braid libfabric provider across two hosts of
# the namespace fabric, one of whose four spines drops 1 % of the packets in
# both directions: a 2-rank ping-pong (8 B, 64 KiB, 1 MiB, every byte of a
# checked exchange compared) and two allreduces (mpi_pingpong.c, which
# CMake names in BRAID_MPI_PINGPONG_SRC)
# complete, both ranks' braid endpoints close cleanly with no failed send,
# the lossy spine really dropped packets, and braid repaired them
# (retransmits reported by the endpoints).
#
# mpirun runs in host 0's namespace; it starts the remote rank's orted
# through an rsh agent that enters host 1's namespace (Open MPI's
# plm_rsh_agent), so the launch, the out-of-band TCP and the data all cross
# the fabric. Each rank binds its braid endpoint to its host's address
# (FI_BRAID_BIND_ADDR, set per host by the agent, not forwarded by mpirun).
source "$(dirname "$0")/lib.sh"
fabric_require_root
for tool in mpirun.openmpi mpicc.openmpi; do
  command -v "$tool" >/dev/null ||
    { echo "skipped: needs $tool (Debian: openmpi-bin, libopenmpi-dev)"; exit "$FABRIC_SKIP"; }
done
[[ -f ${BRAID_FI_DIR:-}/libbraid-fi.so ]] ||
  fabric_fail "BRAID_FI_DIR must name the directory of libbraid-fi.so"
[[ -f ${BRAID_MPI_PINGPONG_SRC:-} ]] ||
  fabric_fail "BRAID_MPI_PINGPONG_SRC must name mpi_pingpong.c"
fabric_init bfbfimpi

fab up --spines 4 >/dev/null
bad=2
fab impair --spine $bad --dir both --loss 1
ip0=$(fab addr --host 0)
ip1=$(fab addr --host 1)
mpicc.openmpi -O2 -o "$FABRIC_TMP/mpi_pingpong" "$BRAID_MPI_PINGPONG_SRC" ||
  fabric_fail "mpicc.openmpi could not build mpi_pingpong.c"

# The rsh agent: Open MPI calls it as `agent HOST COMMAND...`, COMMAND being
# one shell command line (orted and its arguments).
cat >"$FABRIC_TMP/agent.sh" <<EOF
#!/usr/bin/env bash
host=\$1
shift
case \$host in
  $ip0) ns=$FABRIC_NAME-h0 ;;
  $ip1) ns=$FABRIC_NAME-h1 ;;
  *) echo "rsh agent: unknown host \$host" >&2; exit 1 ;;
esac
exec ip netns exec "\$ns" env FI_BRAID_BIND_ADDR="\$host" sh -c "\$*"
EOF
chmod +x "$FABRIC_TMP/agent.sh"

fab counters --reset >/dev/null
rc=0
fab exec --host 0 -- env FI_BRAID_BIND_ADDR="$ip0" FI_PROVIDER_PATH="$BRAID_FI_DIR" \
  timeout 60 mpirun.openmpi --allow-run-as-root -np 2 --host "$ip0,$ip1" \
  --mca plm_rsh_agent "$FABRIC_TMP/agent.sh" \
  --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include braid \
  -x FI_PROVIDER_PATH -x FI_LOG_LEVEL=info -x FI_LOG_PROV=braid \
  "$FABRIC_TMP/mpi_pingpong" 200 8 65536 1048576 >"$FABRIC_TMP/log.txt" 2>&1 || rc=$?
grep -v "fi_param_get\|fi_getinfo" "$FABRIC_TMP/log.txt" >"$FABRIC_TMP/log.short" || true
if ((rc != 0)) || ! grep -q "^mpi_pingpong: ok" "$FABRIC_TMP/log.short"; then
  tail -40 "$FABRIC_TMP/log.short" >&2
  fabric_fail "mpirun over the braid provider across the fabric: exit $rc"
fi
grep "^pingpong\|^allreduce" "$FABRIC_TMP/log.short" | while read -r line; do fabric_log "$line"; done

# Both ranks' endpoints closed, on their own hosts' addresses, with no
# failed send; and between them they re-sent what the spine dropped.
closing=$(grep -c "closing: unexpected=.* send_failures=0 " "$FABRIC_TMP/log.short" || true)
((closing == 2)) || fabric_fail "expected 2 braid endpoints closing with no send failure, saw $closing"
for ip in "$ip0" "$ip1"; do
  grep -q "endpoint $ip:[0-9]* closing" "$FABRIC_TMP/log.short" ||
    fabric_fail "no braid endpoint bound to $ip"
done
retransmits=$(awk '$(NF-1) == "retransmits" {s += $NF} END {print s + 0}' "$FABRIC_TMP/log.short")
fab counters --json >"$FABRIC_TMP/counters.json"
dropped=$(python3 -c '
import json, sys
bad = int(sys.argv[2])
n = 0
for s in json.load(open(sys.argv[1]))["spines"]:
    if s["spine"] == bad:
        for l in s["links"]:
            n += l.get("up_drop", 0) + l.get("down_drop", 0)
print(n)' "$FABRIC_TMP/counters.json" "$bad")
fabric_log "spine $bad dropped $dropped packets; the endpoints re-sent $retransmits"
((dropped > 0)) || fabric_fail "spine $bad dropped nothing: the loss was not exercised"
((retransmits > 0)) || fabric_fail "the endpoints report no retransmit although spine $bad dropped $dropped packets"
fabric_pass
