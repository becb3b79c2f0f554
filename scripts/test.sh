#!/usr/bin/env bash
# The test command: installs missing Debian packages (as root), builds, and
# runs every test with ctest. Fabric tests need root and run when root.
# With --sanitize it also builds a separate ASan+UBSan tree and runs the
# unit and simulator tests there, and a ThreadSanitizer tree for the verbs
# tests.
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
# them when they want it.
san=build-sanitize
san_pid=""
build_sanitizer() {
  # -O1 with assertions on (Debug, not RelWithDebInfo's -O2 -DNDEBUG): the
  # usual level for ASan (test sources at -O0 as in every tree: they are
  # GoogleTest macros; the code under test keeps -O1); -g1 as above. Only
  # what this pass runs is built (the unit and simulator test binaries and
  # what they link), not the tools, the integration and fabric tests or
  # their helpers.
  cmake -S . -B "$san" -G Ninja -DBRAID_WERROR=ON \
    -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" \
    -DBRAID_SANITIZE=ON -DBRAID_BUILD_BENCH=OFF -DBRAID_BUILD_VERBS=OFF \
    >/dev/null
  # Test names are their binaries' target names (braid_test); tests that
  # run a script have no target and need none built.
  local wanted known targets
  wanted=$(ctest --test-dir "$san" -N -L 'unit|sim' |
    sed -n 's/^ *Test *#[0-9]*: //p' | sort -u)
  known=$(ninja -C "$san" -t targets all | sed 's/:.*//' | sort -u)
  mapfile -t targets < <(comm -12 <(echo "$wanted") <(echo "$known"))
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
    -DBRAID_TSAN=ON -DBRAID_BUILD_BENCH=OFF >/dev/null
  local targets
  mapfile -t targets < <(ctest --test-dir "$tsan" -N -L '^verbs$' |
    sed -n 's/^ *Test *#[0-9]*: //p')
  [ ${#targets[@]} -gt 0 ] || { echo "test.sh: no TSan test targets" >&2; return 1; }
  ninja -C "$tsan" "${targets[@]}"
}
run_tsan_tests() {
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
    ctest --test-dir "$tsan" --output-on-failure -j "$jobs" -L '^verbs$'
}
if [ "$sanitize" = 1 ]; then
  mkdir -p "$san"
  # Its own process group (setsid), so a failing main pass stops all of it.
  setsid nice -n 19 bash -c \
    "$(declare -f build_sanitizer build_tsan); san=$san tsan=$tsan
     set -euo pipefail; build_sanitizer; build_tsan" \
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
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$san" --output-on-failure -j "$jobs" -L 'unit|sim'
  run_tsan_tests
fi
