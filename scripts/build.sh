#!/usr/bin/env bash
# Configures and builds braid into build/ (or $BRAID_BUILD_DIR).
# Usage: scripts/build.sh [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."
"$PWD/scripts/deps.sh"
dir="${BRAID_BUILD_DIR:-build}"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
ninja -C "$dir"
