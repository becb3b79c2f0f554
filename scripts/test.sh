#!/usr/bin/env bash
# The test command: installs missing Debian packages (as root), builds, and
# runs every test with ctest. Fabric tests need root and run when root.
# With --sanitize it also builds a separate ASan+UBSan tree and runs the
# unit and simulator tests there.
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
ctest --test-dir build --output-on-failure -j "$jobs"

if [ "$sanitize" = 1 ]; then
  # -O1 with assertions on (Debug, not RelWithDebInfo's -O2 -DNDEBUG): the
  # usual level for ASan; -g1 as above. Only what this pass runs is built
  # (the unit and simulator test binaries and what they link), not the
  # tools, the integration and fabric tests or their helpers.
  san=build-sanitize
  cmake -S . -B "$san" -G Ninja -DBRAID_WERROR=ON \
    -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" \
    -DBRAID_SANITIZE=ON -DBRAID_BUILD_BENCH=OFF -DBRAID_BUILD_VERBS=OFF \
    >/dev/null
  # Test names are their binaries' target names (braid_test); tests that
  # run a script have no target and need none built.
  wanted=$(ctest --test-dir "$san" -N -L 'unit|sim' |
    sed -n 's/^ *Test *#[0-9]*: //p' | sort -u)
  known=$(ninja -C "$san" -t targets all | sed 's/:.*//' | sort -u)
  mapfile -t targets < <(comm -12 <(echo "$wanted") <(echo "$known"))
  [ ${#targets[@]} -gt 0 ] || { echo "test.sh: no sanitizer test targets" >&2; exit 1; }
  ninja -C "$san" "${targets[@]}"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$san" --output-on-failure -j "$jobs" -L 'unit|sim'
fi
