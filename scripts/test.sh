#!/usr/bin/env bash
# The test command: installs missing Debian packages (as root), builds, and
# runs every test with ctest. Fabric tests need root and run when root.
# With --sanitize it also builds a separate ASan+UBSan tree and runs the
# unit, simulator, integration and verbs tests there (the fuzz tests among
# them, a bounded number of inputs each), and a ThreadSanitizer tree for the
# verbs tests.
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=0
for a in "$@"; do
  case "$a" in
    --sanitize) sanitize=1 ;;
    *) echo "usage: scripts/test.sh [--sanitize]" >&2; exit 2 ;;
  esac
done
jobs=$(nproc)

# -g1 (line tables only; the code is the same as with -g): full debug info
# is a third of the compile time, and test failures and sanitizer reports
# need only file and line.
BRAID_BUILD_DIR=build scripts/build.sh -DBRAID_WERROR=ON \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
# The sanitizer tree's build runs at the lowest CPU priority while the main
# tests run: they leave a core idle much of the time (serial fabric and
# perftest cases, sleeps), and at nice 19 the build barely takes CPU from
# them when they want it. The build runs in a session of its own (setsid),
# and with the kernel's autogroup scheduling (on by default) each session
# is a group that gets an equal CPU share whatever its tasks' nice values:
# the group itself is set to nice 19 (/proc/self/autogroup), else the build
# takes half the machine from the tests (DPDK's busy-polling fabric tests
# then starved and failed).
san=build-sanitize
san_pid=""
# The labels the sanitizer pass runs: all but install (fabric tests skip
# without root, as in the main pass).
san_labels='unit|sim|integration|verbs'
# sanitizer_targets DIR LABELS: the ninja targets the tests with LABELS in
# tree DIR need: test binaries (a test is named as its target) and the
# programs script tests run (paths into DIR in their command or
# environment: braid-perf, libbraid-verbs.so, the fabric tools).
sanitizer_targets() {
  local dir=$1 labels=$2 skip=$3 abs wanted known
  abs=$(cd "$dir" && pwd)
  wanted=$({
    ctest --test-dir "$dir" -N -L "$labels" -E "$skip" |
      sed -n 's/^ *Test *#[0-9]*: //p'
    ctest --test-dir "$dir" --show-only=json-v1 -L "$labels" -E "$skip" |
      grep -oE "$abs/[^\" ]+" | sed "s|^$abs/||"
  } | sort -u)
  known=$(ninja -C "$dir" -t targets all | sed 's/:.*//' | sort -u)
  comm -12 <(echo "$wanted") <(echo "$known")
}
build_sanitizer() {
  # -O1 with assertions on (Debug, not RelWithDebInfo's -O2 -DNDEBUG): the
  # usual level for ASan (test sources at -O0 as in every tree: they are
  # GoogleTest macros; the code under test keeps -O1); -g1 as above. Only
  # what this pass runs is built (the test binaries of $san_labels, what
  # they link and the programs their scripts run), not the benchmarks.
  cmake -S . -B "$san" -G Ninja -DBRAID_WERROR=ON \
    -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" \
    -DBRAID_SANITIZE=ON -DBRAID_BUILD_BENCH=OFF -DBRAID_BACKEND_DPDK=OFF \
    >/dev/null
  local targets
  mapfile -t targets < <(sanitizer_targets "$san" "$san_labels" "$san_skip")
  [ ${#targets[@]} -gt 0 ] || { echo "test.sh: no sanitizer test targets" >&2; return 1; }
  ninja -C "$san" "${targets[@]}"
}
# ThreadSanitizer: the verbs device's progress thread against the
# application's threads calling verbs, in the verbs tests (label verbs: two
# contexts per process, each with its progress thread), in a tree of their
# own (-DBRAID_TSAN=ON, -O1 as for ASan). Only their binaries and what they
# link are built, after the ASan tree in the same low-priority job, so the
# two builds do not compete (docs/verbs.md, Tests, has the timings).
tsan=build-tsan
build_tsan() {
  cmake -S . -B "$tsan" -G Ninja -DBRAID_WERROR=ON \
    -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" \
    -DBRAID_TSAN=ON -DBRAID_BUILD_BENCH=OFF -DBRAID_BACKEND_DPDK=OFF >/dev/null
  local targets
  mapfile -t targets < <(ctest --test-dir "$tsan" -N -L '^verbs$' -LE '^ud$' |
    sed -n 's/^ *Test *#[0-9]*: //p')
  [ ${#targets[@]} -gt 0 ] || { echo "test.sh: no TSan test targets" >&2; return 1; }
  ninja -C "$tsan" "${targets[@]}"
}
run_tsan_tests() {
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
    ctest --test-dir "$tsan" --output-on-failure -j "$jobs" -L '^verbs$' \
      -LE '^ud$'
}
# The sanitizer pass's tests. perftest runs the uninstrumented perftest
# binaries with the ASan runtime preloaded (tests/perftest/preload.sh); it
# leaves out the sweeps over every size (ib_*_lat_a, ib_*_bw_a: the main
# pass runs them all, and CI must stay under 30 minutes on 2 cores): every
# verb, atomics, several QPs, SRQ, UD, UC, events and the ping-pongs remain.
# endpoint_datapath_cost_test is left out: it counts datagrams per
# ping-pong, and whether an ack rides on the reply depends on speed (the ack
# waits ack_delay, 10 us, for it); under ASan the reply comes later.
# tests/lsan.supp: leaks inside third-party libraries (DPDK's af_xdp).
run_sanitizer_tests() {
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp" \
    ctest --test-dir "$san" --output-on-failure -j "$jobs" -L "$san_labels" \
    -E "$san_skip"
}
# Left out of the sanitizer pass: endpoint_datapath_cost_test (it counts
# datagrams per ping-pong, and whether an ack rides on the reply depends on
# speed) and verbs_pd_mr_test (at -O1 its static link pulls in the context's
# ops table, whose QP entry points live only in libbraid-verbs.so; the main
# pass runs it, and the verbs tests cover the same code through the .so).
# The fabric and perftest tests run in the main pass only: with them (and
# the tools they run) the sanitizer trees did not fit CI's 30 minutes on 2
# cores.
san_skip='^(endpoint_datapath_cost_test|verbs_pd_mr_test)$'
if [ "$sanitize" = 1 ]; then
  mkdir -p "$san"
  # Its own process group (setsid), so a failing main pass stops all of it.
  setsid nice -n 19 bash -c \
    "{ echo 19 >/proc/self/autogroup; } 2>/dev/null || true
     $(declare -f sanitizer_targets build_sanitizer build_tsan)
     san=$san tsan=$tsan
     san_labels='$san_labels' san_skip='$san_skip'; set -euo pipefail
     build_sanitizer; build_tsan" \
    >"$san/build.log" 2>&1 &
  san_pid=$!
  trap '[ -n "$san_pid" ] && kill -- -"$san_pid" 2>/dev/null; true' EXIT
fi

ctest --test-dir build --output-on-failure -j "$jobs"

if [ "$sanitize" = 1 ]; then
  if ! wait "$san_pid"; then
    san_pid=""
    tail -50 "$san/build.log" >&2
    echo "test.sh: the sanitizer build failed (log: $san/build.log)" >&2
    exit 1
  fi
  san_pid=""
  # The TSan verbs tests beside the ASan pass (one at a time: much of the
  # ASan pass waits on the network, sleeps and serial cases).
  mkdir -p "$tsan"
  jobs=1 run_tsan_tests >"$tsan/tests.log" 2>&1 &
  tsan_tests=$!
  run_sanitizer_tests
  if ! wait "$tsan_tests"; then
    cat "$tsan/tests.log" >&2
    echo "test.sh: the TSan pass failed (log: $tsan/tests.log)" >&2
    exit 1
  fi
  tail -3 "$tsan/tests.log"
fi
