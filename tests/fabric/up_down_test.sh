#!/usr/bin/env bash
# The fabric comes up, carries traffic, is idempotent, and leaves nothing
# behind: after down, after a failed up, after an interrupted up.
source "$(dirname "$0")/lib.sh"
fabric_require_root
fabric_init bfud

count_ns() { ip netns list | grep -cE "^${FABRIC_NAME}-" || true; }

fab up --hosts 4 --spines 3 >/dev/null
assert_eq "$(count_ns)" 9 "namespaces after up (4 hosts, 2 leaves, 3 spines)"
assert_eq "$(fab addr --host 0)" 10.77.0.10 "host 0 address"
assert_eq "$(fab addr --host 3)" 10.77.1.13 "host 3 address"
out=$(fab up --hosts 4 --spines 3)
assert_eq "$out" "fabric '$FABRIC_NAME' already up" "second up"
# Every host reaches a host on the other leaf and on its own leaf.
probe_run 0 3 4 20 41000
assert_eq "$PROBE_RC" 0 "probe h0 -> h3 (across the spines)"
probe_run 2 0 2 20 41000
assert_eq "$PROBE_RC" 0 "probe h2 -> h0 (same leaf)"
# Other parameters while up: refused, fabric untouched.
if fab up --hosts 2 >/dev/null 2>&1; then fabric_fail "up with other parameters succeeded"; fi
assert_eq "$(count_ns)" 9 "namespaces after refused up"
fab down >/dev/null
assert_eq "$(count_ns)" 0 "namespaces after down"
fab down >/dev/null || fabric_fail "down on nothing failed"

# A failure in any stage of up removes the partial fabric.
for stage in leaves spines hosts; do
  if BRAID_FABRIC_FAIL_AT=$stage fab up --spines 2 >/dev/null 2>&1; then
    fabric_fail "up with BRAID_FABRIC_FAIL_AT=$stage succeeded"
  fi
  assert_eq "$(count_ns)" 0 "namespaces after up failed at $stage"
  [[ ! -e /run/braid-fabric/$FABRIC_NAME ]] || fabric_fail "state left after failed up"
done

# An interrupted up cleans up too: held half-built (after the spines), then
# sent TERM.
BRAID_FABRIC_HOLD_AT=spines "$FABRIC" up --name "$FABRIC_NAME" --hosts 8 \
  --spines 8 >/dev/null 2>&1 &
up_pid=$!
for _ in $(seq 200); do  # <= 20 s for the namespaces to appear
  (($(count_ns) > 0)) && break
  sleep 0.1
done
(($(count_ns) > 0)) || fabric_fail "held up created no namespaces"
kill -TERM "$up_pid" 2>/dev/null || true
wait "$up_pid" 2>/dev/null || true
assert_eq "$(count_ns)" 0 "namespaces after interrupted up"

# Without root: refused with exit 2 and one line.
rc=0
msg=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$FABRIC" up --name "$FABRIC_NAME" 2>&1) || rc=$?
assert_eq "$rc" 2 "exit code without root"
assert_eq "$(echo "$msg" | wc -l)" 1 "lines of the refusal"
fabric_pass
