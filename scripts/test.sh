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

BRAID_BUILD_DIR=build scripts/build.sh -DBRAID_WERROR=ON
ctest --test-dir build --output-on-failure -j "$jobs"

if [ "$sanitize" = 1 ]; then
  # -O1 with assertions on (Debug, not RelWithDebInfo's -O2 -DNDEBUG): the
  # usual level for ASan, and on a 2-core machine it builds this tree in
  # ~8 instead of ~11 minutes.
  BRAID_BUILD_DIR=build-sanitize scripts/build.sh -DBRAID_WERROR=ON \
    -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g" \
    -DBRAID_SANITIZE=ON -DBRAID_BUILD_BENCH=OFF -DBRAID_BUILD_VERBS=OFF
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-sanitize --output-on-failure -j "$jobs" -L 'unit|sim'
fi
