# shellcheck shell=bash
# Shared helpers for the real-network fabric tests (tests/fabric/*_test.sh)
# and for later tests that drive braid itself over the fabric. Source it:
#
#   source "$(dirname "$0")/lib.sh"
#   fabric_require_root            # exit 77 (ctest: skipped) unless root
#   fabric_init bfmytest           # names the fabric, traps cleanup
#   fab up --spines 4              # = braid-fabric up --name bfmytest ...
#   ...
#   fabric_pass                    # prints PASS, cleanup runs from the trap
#
# Environment (set by tests/fabric/CMakeLists.txt; defaults find the tree):
#   BRAID_FABRIC         the braid-fabric command
#   BRAID_FABRIC_PROBE   the braid-fabric-probe binary
#   BRAID_NFQ_DELAY      the braid-nfq-delay binary (for --delay-us)
set -euo pipefail

readonly FABRIC_SKIP=77
FABRIC_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FABRIC_SRC_ROOT=$(cd "$FABRIC_LIB_DIR/../.." && pwd)
FABRIC=${BRAID_FABRIC:-$FABRIC_SRC_ROOT/tools/braid-fabric}
PROBE=${BRAID_FABRIC_PROBE:-}
if [[ -z $PROBE ]]; then
  for _c in "$FABRIC_SRC_ROOT"/build*/tools/fabric/braid-fabric-probe; do
    [[ -x $_c ]] && PROBE=$_c && break
  done
fi
export BRAID_NFQ_DELAY=${BRAID_NFQ_DELAY:-}

FABRIC_NAME=""
FABRIC_TMP=""
FABRIC_BG_PIDS=()
FABRIC_EXIT_HOOKS=()
FABRIC_TEST=$(basename "${0%.sh}")

# ------------------------------------------------------------ lifecycle

# Exits with the skip code unless we are root and have the tools.
fabric_require_root() {
  if [[ ${EUID} -ne 0 ]]; then
    echo "skipped: needs root"
    exit $FABRIC_SKIP
  fi
  local t
  for t in ip nft tc python3; do
    command -v "$t" >/dev/null || { echo "skipped: needs $t"; exit $FABRIC_SKIP; }
  done
  [[ -x $PROBE ]] || fabric_fail "braid-fabric-probe not built (set BRAID_FABRIC_PROBE)"
}

# Names the fabric of this test and arranges cleanup on any exit.
fabric_init() {
  FABRIC_NAME=$1
  FABRIC_TMP=$(mktemp -d "/tmp/braid-fabric-test.${FABRIC_NAME}.XXXXXX")
  trap fabric_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  # A previous run that was killed hard may have left the fabric behind.
  "$FABRIC" down --name "$FABRIC_NAME" >/dev/null 2>&1 || true
}

fabric_cleanup() {
  local rc=$? pid
  set +e
  for pid in "${FABRIC_BG_PIDS[@]}"; do kill "$pid" 2>/dev/null; done
  if [[ -n $FABRIC_NAME ]]; then
    "$FABRIC" down --name "$FABRIC_NAME" >/dev/null 2>&1
    # After `down`: every process in the fabric's namespaces has ended.
    local hook
    for hook in "${FABRIC_EXIT_HOOKS[@]}"; do "$hook" || rc=1; done
    if ip netns list | grep -qE "^${FABRIC_NAME}-"; then
      echo "FAIL: namespaces left behind: $(ip netns list | grep -E "^${FABRIC_NAME}-" | tr '\n' ' ')"
      rc=1
    fi
  fi
  [[ -n $FABRIC_TMP ]] && rm -rf "$FABRIC_TMP"
  exit $rc
}

# fabric_at_exit FUNC: cleanup runs FUNC after the fabric is down (its
# processes ended, its namespaces gone); a FUNC returning non-zero fails the
# test (use it for "left behind" checks).
fabric_at_exit() { FABRIC_EXIT_HOOKS+=("$1"); }

fabric_fail() {
  echo "FAIL [$FABRIC_TEST]: $*" >&2
  exit 1
}

fabric_pass() { echo "PASS [$FABRIC_TEST]"; }

fabric_log() { echo "[$FABRIC_TEST] $*"; }

# fab CMD ARGS...: braid-fabric CMD --name <this test's fabric> ARGS...
fab() {
  local cmd=$1
  shift
  "$FABRIC" "$cmd" --name "$FABRIC_NAME" "$@"
}

# ------------------------------------------------------------ queries

# fabric_spine_of SRC DST SPORT DPORT: the spine the kernel picks for the flow.
fabric_spine_of() {
  fab path --src "$1" --dst "$2" --sport "$3" --dport "$4" | awk '{print $2}'
}

# fabric_spine_counts SRC DST LO HI DPORT: "spine count" lines, one per spine
# used by source ports LO..HI.
fabric_spine_counts() {
  fab path --src "$1" --dst "$2" --sport "$3-$4" --dport "$5" |
    awk '{n[$2]++} END {for (s in n) print s, n[s]}' | sort -n
}

# fabric_snapshot: reads all counters once (`braid-fabric counters`) into
# the snapshot that fabric_counter consults. Call it after the traffic.
fabric_snapshot() {
  fab counters >"$FABRIC_TMP/counters" || fabric_fail "counters failed"
}

# fabric_counter SPINE FIELD: one value of the last fabric_snapshot
# (fields: up_pkts up_drop up_ecn up_qdrop rx_pkts down_pkts down_drop
# down_ecn down_qdrop).
fabric_counter() {
  awk -v s="$1" -v f="$2" '
    /^#/ { next }
    $1 == "spine" { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $1 == s && (f in col) { print $(col[f]); found = 1 }
    END { if (!found) exit 1 }' "$FABRIC_TMP/counters" ||
    fabric_fail "no counter $2 of spine $1 in the snapshot"
}

# fabric_first_port_on SPINE SRC DST DPORT LO HI: the first source port in
# LO..HI whose flow crosses SPINE (empty if none).
fabric_first_port_on() {
  fab path --src "$2" --dst "$3" --sport "$5-$6" --dport "$4" |
    awk -v s="$1" '$2 == s { print $1; exit }'
}

# fabric_first_port_off SPINE SRC DST DPORT LO HI: first port NOT on SPINE.
fabric_first_port_off() {
  fab path --src "$2" --dst "$3" --sport "$5-$6" --dport "$4" |
    awk -v s="$1" '$2 != s { print $1; exit }'
}

# ------------------------------------------------------------ the probe

# probe_server HOST DPORT PORTS COUNT [probe server options...]: starts the
# probe server in HOST's namespace in the background and waits until it
# listens. The JSON report lands in $FABRIC_TMP/server.json.
probe_server() {
  local host=$1 dport=$2 ports=$3 count=$4 ip ready
  shift 4
  ip=$(fab addr --host "$host")
  ready="$FABRIC_TMP/server.ready"
  rm -f "$ready" "$FABRIC_TMP/server.json"
  fab exec --host "$host" -- "$PROBE" server --bind "$ip:$dport" \
    --ports "$ports" --count "$count" --json --ready-file "$ready" "$@" \
    >"$FABRIC_TMP/server.json" 2>"$FABRIC_TMP/server.err" &
  PROBE_SERVER_PID=$!
  FABRIC_BG_PIDS+=("$PROBE_SERVER_PID")
  local n
  for ((n = 0; n < 250; n++)); do
    [[ -f $ready ]] && return 0
    kill -0 "$PROBE_SERVER_PID" 2>/dev/null || break
    sleep 0.02
  done
  fabric_fail "probe server did not start: $(cat "$FABRIC_TMP/server.err")"
}

# probe_client SRC DSTHOST DPORT PORTS COUNT SPORT_BASE [client options...]
probe_client() {
  local src=$1 dst=$2 dport=$3 ports=$4 count=$5 base=$6 ip
  shift 6
  ip=$(fab addr --host "$dst")
  fab exec --host "$src" -- "$PROBE" client --dst "$ip:$dport" --ports "$ports" \
    --count "$count" --sport-base "$base" --json "$@" >"$FABRIC_TMP/client.json" ||
    fabric_fail "probe client failed: $(cat "$FABRIC_TMP/client.json")"
}

# probe_wait: waits for the server; sets PROBE_RC to its exit code.
# shellcheck disable=SC2034  # PROBE_RC is read by the tests
probe_wait() {
  PROBE_RC=0
  wait "$PROBE_SERVER_PID" || PROBE_RC=$?
}

# probe_get EXPR: a value of the server's JSON report, EXPR in Python syntax
# on `r` (e.g. 'r["total"]["received"]', 'r["ports"][0]["delay_us"]["p50"]').
probe_get() {
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
    "$FABRIC_TMP/server.json" "$1"
}

# probe_run SRC DST PORTS COUNT SPORT_BASE [--server-opts "..."] [client opts]:
# server + client + wait in one call; DPORT is 9000.
probe_run() {
  local src=$1 dst=$2 ports=$3 count=$4 base=$5 sopts=""
  shift 5
  if [[ ${1:-} == --server-opts ]]; then
    sopts=$2
    shift 2
  fi
  # shellcheck disable=SC2086
  probe_server "$dst" 9000 "$ports" "$count" $sopts
  probe_client "$src" "$dst" 9000 "$ports" "$count" "$base" "$@"
  probe_wait
}

# ------------------------------------------------------------ assertions

assert_eq() {  # assert_eq ACTUAL EXPECTED WHAT
  [[ $1 == "$2" ]] || fabric_fail "$3: got '$1', want '$2'"
}

assert_between() {  # assert_between VALUE LO HI WHAT (numbers, may be real)
  awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }' ||
    fabric_fail "$4: got $1, want $2..$3"
}
