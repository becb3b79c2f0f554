#!/usr/bin/env bash
# Runs gloo's AllreduceRing (Debian's unmodified libgloo, ibverbs transport)
# over braid0: two rank processes of gloo_allreduce_ring on loopback, both
# with LD_PRELOAD=libbraid-verbs.so, a FileStore rendezvous in a temporary
# directory. Both must check every round's result and tear down cleanly
# (exit 0); each is bounded by `timeout`.
#
# usage: gloo_braid0.sh <libbraid-verbs.so> <gloo_allreduce_ring> [ROUNDS]
#        [COUNT]
# env:   GLOO_TIMEOUT seconds per process (default 60)
set -u
LIB=$(readlink -f "${1:?usage: gloo_braid0.sh <libbraid-verbs.so> <program>}")
BIN=$(readlink -f "${2:?usage: gloo_braid0.sh <libbraid-verbs.so> <program>}")
ROUNDS=${3:-50}
COUNT=${4:-4096}
TMO=${GLOO_TIMEOUT:-60}
source "$(dirname "$0")/../perftest/preload.sh"
verbs_preload "$LIB"
DIR=$(mktemp -d /tmp/braid-gloo.XXXXXX)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do
    kill "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  rm -rf "$DIR"
}
trap cleanup EXIT

for rank in 0 1; do
  LD_PRELOAD=$PRELOAD timeout "$TMO" "$BIN" "$rank" 2 "$DIR" braid0 \
    "$ROUNDS" "$COUNT" >"$DIR/rank$rank.log" 2>&1 &
  pids+=($!)
done
status=0
for rank in 0 1; do
  wait "${pids[$rank]}"
  rc=$?
  cat "$DIR/rank$rank.log"
  if [[ $rc -ne 0 ]]; then
    echo "gloo_braid0: rank $rank exited $rc"
    status=1
  elif ! grep -q "rounds of $COUNT ints correct" "$DIR/rank$rank.log"; then
    echo "gloo_braid0: rank $rank did not report its rounds correct"
    status=1
  fi
done
pids=()
[[ $status -eq 0 ]] && echo "gloo_braid0: 2 ranks, $ROUNDS rounds: passed"
exit $status
