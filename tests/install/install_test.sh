#!/usr/bin/env bash
# Installs a built tree into a scratch prefix and builds programs against it
# the two ways a user would: CMake's find_package(braid) and pkg-config.
# Each program must run and exchange messages; the installed tools must run.
#
#   tests/install/install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
BUILD="$(cd "$1" && pwd)"
SRC="$(cd "$2" && pwd)"
WORK="$(mktemp -d /tmp/braid-install-test.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
PREFIX="$WORK/prefix"

fail() { echo "install_test: FAIL: $*" >&2; exit 1; }

cmake --install "$BUILD" --prefix "$PREFIX" >"$WORK/install.log" ||
  { cat "$WORK/install.log" >&2; fail "cmake --install"; }

# The library carries its ABI version in its soname.
soname="$(readelf -d "$PREFIX"/lib*/libbraid.so | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')"
[[ "$soname" == libbraid.so.0 ]] || fail "soname '$soname', want libbraid.so.0"
for h in endpoint.h options.h completion.h stats.h address.h time.h; do
  [[ -f "$PREFIX/include/braid/$h" ]] || fail "include/braid/$h not installed"
done

# 1. CMake: find_package(braid) in a project outside the tree.
cmake -S "$SRC/tests/install/consumer" -B "$WORK/cmake-build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_TYPE=Release \
  >"$WORK/cmake.log" 2>&1 || { cat "$WORK/cmake.log" >&2; fail "configure consumer"; }
cmake --build "$WORK/cmake-build" >"$WORK/build.log" 2>&1 ||
  { cat "$WORK/build.log" >&2; fail "build consumer (find_package)"; }
# Linked against the installed library, not the build tree's objects.
# (ldd's output is kept first: `ldd | grep -q` under pipefail fails when
# grep exits early and ldd gets SIGPIPE.)
deps="$(ldd "$WORK/cmake-build/braid_consumer")"
grep -q "$PREFIX/lib.*/libbraid.so.0" <<<"$deps" ||
  fail "consumer does not load $PREFIX's libbraid.so.0: $(grep braid <<<"$deps")"
timeout 60 "$WORK/cmake-build/braid_consumer" >"$WORK/run1.log" 2>&1 ||
  { cat "$WORK/run1.log" >&2; fail "consumer (find_package) run"; }
grep -q "braid_consumer: ok" "$WORK/run1.log" || fail "consumer printed no ok"

# 2. pkg-config, with a plain compiler line.
export PKG_CONFIG_PATH="$(dirname "$(find "$PREFIX" -name braid.pc)")"
flags="$(pkg-config --cflags --libs braid)" || fail "pkg-config braid"
libdir="$(pkg-config --variable=libdir braid)"
# shellcheck disable=SC2086
g++ -std=c++20 -O1 -o "$WORK/consumer_pc" \
  "$SRC/tests/install/consumer/braid_consumer.cc" $flags \
  -Wl,-rpath,"$libdir" 2>"$WORK/pc.log" ||
  { cat "$WORK/pc.log" >&2; fail "build consumer (pkg-config: $flags)"; }
timeout 60 "$WORK/consumer_pc" >"$WORK/run2.log" 2>&1 ||
  { cat "$WORK/run2.log" >&2; fail "consumer (pkg-config) run"; }

# 3. The installed tools run from the prefix.
"$PREFIX/bin/braid-perf" --help >/dev/null || fail "installed braid-perf --help"
"$PREFIX/bin/braid-sim" --help >/dev/null || fail "installed braid-sim --help"
if [[ -f "$BUILD/src/verbs_compat/libbraid-verbs.so" ]]; then
  [[ -f "$(dirname "$(find "$PREFIX" -name libbraid.so.0)")/libbraid-verbs.so" ]] ||
    fail "libbraid-verbs.so not installed"
fi
if [[ -f "$BUILD/fi_provider/libbraid-fi.so" ]]; then
  [[ -f "$(dirname "$(find "$PREFIX" -name libbraid.so.0)")/libfabric/libbraid-fi.so" ]] ||
    fail "libbraid-fi.so not installed"
fi
echo "install_test: ok (find_package and pkg-config consumers ran; tools run)"
