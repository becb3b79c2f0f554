# shellcheck shell=bash
# Helpers for the tests that run braid itself (braid-perf) over the namespace
# fabric (tests/fabric/braid_*_test.sh) and for scripts/fabric_demo.sh.
# Source it after lib.sh:
#
#   source "$(dirname "$0")/lib.sh"
#   source "$(dirname "$0")/braid_lib.sh"
#   fabric_require_root; braid_require_perf
#   fabric_init bfbraid
#   fab up --spines 4 --mtu 9000
#   braid_pin_ports 0 "$(braid_balanced_base 0 1)" 16   # client's source ports
#   perf_run 0 1 --test bw -s 64k -D 3 --paths 16 --mode spray
#   perf_check_ok "clean spray"
#   perf_get 'r["results"][0]["gbps"]'
#
# Source ports. braid-perf binds one UDP socket per path with port 0, so the
# kernel picks the ports and ECMP scatters them at random. The tests make the
# choice deterministic instead: ip_local_port_range is per network namespace,
# so narrowing it in the client's namespace to exactly as many ports as there
# are paths hands braid exactly those ports (the receive socket is bound
# explicitly, outside the range). With the fabric's fixed hash seed, `braid-
# fabric path` then predicts the spine of every path.
#
# Environment: BRAID_PERF (the braid-perf binary; default: the newest
# build*/tools/braid_perf/braid-perf of the tree).

PERF=${BRAID_PERF:-}
if [[ -z $PERF ]]; then
  PERF=$(ls -t "$FABRIC_SRC_ROOT"/build*/tools/braid_perf/braid-perf 2>/dev/null | head -n 1 || true)
fi
readonly PERF_DPORT=9000  # the server's receive port
readonly PERF_CPORT=9100  # the client's receive port (outside any pinned range)
PERF_SERVER_PID=""

# Fails the test unless braid-perf is built.
braid_require_perf() {
  [[ -n $PERF && -x $PERF ]] || fabric_fail "braid-perf not built (set BRAID_PERF)"
}

# braid_pin_ports HOST BASE COUNT: braid sockets bound to port 0 in HOST's
# namespace get exactly the ports BASE..BASE+COUNT-1.
braid_pin_ports() {
  local host=$1 base=$2 count=$3
  fab exec --host "$host" -- sysctl -qw \
    "net.ipv4.ip_local_port_range=$base $((base + count - 1))"
}

# braid_balanced_base SRC DST [COUNT] [FIRST] [LAST]: the first BASE in
# FIRST..LAST whose COUNT consecutive source ports (SRC -> DST, dport 9000)
# the kernel spreads exactly evenly over all spines, and whose ports in the
# other direction (DST -> SRC, the acks) land within +-25 % of even (the
# destination port is BRAID_BALANCE_DPORT, default braid-perf's 9000). Empty
# if none. With 4 spines and 16 ports an exact 4/4/4/4 split has a chance
# of about 1.5 % per base, so a few hundred candidates find one.
braid_balanced_base() {
  local src=$1 dst=$2 count=${3:-16} first=${4:-40000} last=${5:-40600}
  local dport=${BRAID_BALANCE_DPORT:-$PERF_DPORT}
  local spines
  spines=$(awk -F= '$1 == "SPINES" {print $2}' "$(braid_state_dir)/config" 2>/dev/null || true)
  spines=${spines:-4}
  fab path --src "$src" --dst "$dst" --sport "$first-$((last + count))" --dport "$dport" \
    >"$FABRIC_TMP/paths.fwd"
  fab path --src "$dst" --dst "$src" --sport "$first-$((last + count))" --dport "$dport" \
    >"$FABRIC_TMP/paths.rev"
  awk -v n="$count" -v S="$spines" -v first="$first" -v last="$last" '
    FNR == NR { f[$1] = $2; next }
    { r[$1] = $2 }
    END {
      eq = n / S
      for (p = first; p <= last; p++) {
        for (k = 0; k < S; k++) { cf[k] = 0; cr[k] = 0 }
        for (i = p; i < p + n; i++) { cf[f[i]]++; cr[r[i]]++ }
        ok = 1
        for (k = 0; k < S; k++)
          if (cf[k] != eq || cr[k] < 0.75 * eq || cr[k] > 1.25 * eq) ok = 0
        if (ok) { print p; exit }
      }
    }' "$FABRIC_TMP/paths.fwd" "$FABRIC_TMP/paths.rev"
}

# The fabric's state directory (braid-fabric keeps its config there).
braid_state_dir() {
  echo "${BRAID_FABRIC_STATE:-/run/braid-fabric}/$FABRIC_NAME"
}

# perf_server HOST [server flags...]: starts `braid-perf --server` in HOST's
# namespace on port 9000 and waits until it listens. Output in
# $FABRIC_TMP/server.{out,err}.
perf_server() {
  local host=$1 ip n
  shift
  ip=$(fab addr --host "$host")
  rm -f "$FABRIC_TMP/server.out" "$FABRIC_TMP/server.err"
  # "$FABRIC" directly, not the fab function: then $! is braid-perf itself
  # (braid-fabric exec execs `ip netns exec`, which execs the command), not
  # a subshell, so perf_wait_server can end it.
  "$FABRIC" exec --name "$FABRIC_NAME" --host "$host" -- \
    "$PERF" --server --bind "$ip:$PERF_DPORT" "$@" \
    >"$FABRIC_TMP/server.out" 2>"$FABRIC_TMP/server.err" &
  PERF_SERVER_PID=$!
  FABRIC_BG_PIDS+=("$PERF_SERVER_PID")
  for ((n = 0; n < 250; n++)); do
    grep -q "listening" "$FABRIC_TMP/server.err" 2>/dev/null && return 0
    kill -0 "$PERF_SERVER_PID" 2>/dev/null || break
    sleep 0.02
  done
  fabric_fail "braid-perf server did not start: $(cat "$FABRIC_TMP/server.err")"
}

# perf_client SRC DST [client flags...]: runs the client (JSON) from SRC's
# namespace against DST's server, bound to port 9100. Sets PERF_RC; the
# report is in $FABRIC_TMP/client.json, stderr in client.err.
perf_client() {
  local src=$1 dst=$2 sip dip
  shift 2
  sip=$(fab addr --host "$src")
  dip=$(fab addr --host "$dst")
  PERF_RC=0
  fab exec --host "$src" -- "$PERF" --client "$dip:$PERF_DPORT" \
    --bind "$sip:$PERF_CPORT" --json "$@" \
    >"$FABRIC_TMP/client.json" 2>"$FABRIC_TMP/client.err" || PERF_RC=$?
}

# perf_client_bg SRC DST [client flags...]: perf_client in the background;
# PERF_CLIENT_PID is the subshell to `perf_client_wait` for.
perf_client_bg() {
  (
    perf_client "$@"
    exit "$PERF_RC"
  ) &
  PERF_CLIENT_PID=$!
  FABRIC_BG_PIDS+=("$PERF_CLIENT_PID")
}

# perf_client_wait: waits for perf_client_bg; sets PERF_RC from its report.
perf_client_wait() {
  PERF_RC=0
  wait "$PERF_CLIENT_PID" || PERF_RC=$?
}

# perf_wait_server: waits (at most 5 s: call it after the client ended) for
# the server to exit; sets PERF_SERVER_RC (124 if it had to be killed).
perf_wait_server() {
  local n
  PERF_SERVER_RC=0
  for ((n = 0; n < 100; n++)); do
    kill -0 "$PERF_SERVER_PID" 2>/dev/null || break
    sleep 0.05
  done
  if kill -0 "$PERF_SERVER_PID" 2>/dev/null; then
    kill "$PERF_SERVER_PID" 2>/dev/null
    wait "$PERF_SERVER_PID" 2>/dev/null || true
    PERF_SERVER_RC=124
    return 0
  fi
  wait "$PERF_SERVER_PID" || PERF_SERVER_RC=$?
}

# perf_run SRC DST [client flags...]: server (same --paths/--mode/--mtu as
# the client) + client + server exit, sets PERF_RC and PERF_SERVER_RC.
perf_run() {
  local src=$1 dst=$2
  shift 2
  # The endpoint opens 2 x paths source ports by default (spares for
  # recycling); the narrowed port range holds exactly one per path, so ask
  # for exactly that many.
  local paths=16 a prev=""
  for a in "$@"; do
    [[ $prev == --paths ]] && paths=$a
    [[ $prev == --mode && $a == gbn ]] && paths=1
    prev=$a
  done
  perf_server "$dst" $(perf_common_flags "$@") --entropy-sockets "$paths"
  perf_client "$src" "$dst" "$@" --entropy-sockets "$paths"
  perf_wait_server
}

# perf_common_flags CLIENT-FLAGS...: the flags of a client command line the
# server must share (--paths N, --mode M, --mtu M, --cc C, --[no-]gso/gro).
perf_common_flags() {
  local out=()
  while (($#)); do
    case $1 in
      --paths | --mode | --mtu | --cc) out+=("$1" "$2"); shift 2 ;;
      --gso | --no-gso | --gro | --no-gro) out+=("$1"); shift ;;
      *) shift ;;
    esac
  done
  echo "${out[@]}"
}

# perf_get EXPR: a value of the client's JSON report, EXPR in Python syntax on
# `r` (e.g. 'r["results"][0]["gbps"]').
perf_get() {
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
    "$FABRIC_TMP/client.json" "$1"
}

# perf_check_ok WHAT [SERVER_MESSAGES]: braid-perf's client and server both
# exited 0 and the report shows every message delivered exactly once and
# byte-exact (one python call: the machine is slow to start interpreters).
# The server must have received SERVER_MESSAGES messages (default: the
# run's iterations; a lat run's server also counts the warm-up pings).
perf_check_ok() {
  local what=$1 expect=${2:-} verdict
  verdict=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
bad = [] if r.get("ok") is True else ["report not ok"]
if not r.get("results"):
    bad.append("no results")
for x in r.get("results", []):
    for k, v in x["errors"].items():
        if k in ("first_bad", "failure"):
            if v not in ("ok", ""):
                bad.append("%s=%s" % (k, v))
        elif v not in (0, False):
            bad.append("%s=%s" % (k, v))
    want = int(sys.argv[2]) if sys.argv[2] else x["iters"]
    if x["server_received"] != want:
        bad.append("server received %d of %d messages" % (x["server_received"], want))
print("; ".join(bad) if bad else "ok")' "$FABRIC_TMP/client.json" "$expect" 2>&1 | tail -1) || true
  [[ $PERF_RC -eq 0 ]] ||
    fabric_fail "$what: braid-perf client exit $PERF_RC ($verdict): $(tail -c 600 "$FABRIC_TMP/client.err")"
  [[ ${PERF_SERVER_RC:-0} -eq 0 ]] ||
    fabric_fail "$what: braid-perf server exit $PERF_SERVER_RC: $(tail -c 600 "$FABRIC_TMP/server.err")"
  [[ $verdict == ok ]] || fabric_fail "$what: $verdict"
}

# perf_spread_snapshot: reads the counters (JSON, with the per-link split)
# once into "spine leaf field value" lines for perf_link_counter.
perf_spread_snapshot() {
  fab counters --json >"$FABRIC_TMP/counters.json" || fabric_fail "counters failed"
  python3 -c '
import json, sys
for s in json.load(open(sys.argv[1]))["spines"]:
    for l in s["links"]:
        for k, v in l.items():
            if k != "leaf":
                print(s["spine"], l["leaf"], k, v)' "$FABRIC_TMP/counters.json" \
    >"$FABRIC_TMP/counters.txt" || fabric_fail "bad counters JSON"
}

# perf_link_counter SPINE LEAF FIELD: FIELD of the link between SPINE and
# LEAF in the last snapshot; leaf 0's up_* are the host 0 -> host 1 (data)
# packets, leaf 1's the acks.
perf_link_counter() {
  awk -v s="$1" -v l="$2" -v f="$3" '$1 == s && $2 == l && $3 == f { print $4; found = 1 }
    END { if (!found) exit 1 }' "$FABRIC_TMP/counters.txt" ||
    fabric_fail "no counter $3 of spine $1 leaf $2"
}
