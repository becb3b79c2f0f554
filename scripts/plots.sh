#!/usr/bin/env bash
# Regenerates the scale figures (docs/figures/*.png and their data, *.json)
# from braid-sim runs: bench/scale_plots.py, see docs/scale.md. Not in CI
# (about 4 minutes on 2 cores; --quick: k=8 instead of 1,024 hosts).
# usage: scripts/plots.sh [--quick] [--only permutation|failure|incast]
set -euo pipefail
cd "$(dirname "$0")/.."
if ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  if [ "$(id -u)" -eq 0 ]; then
    apt-get install -y -q python3-matplotlib >/dev/null
  else
    echo "plots: needs Debian's python3-matplotlib: sudo apt-get install python3-matplotlib" >&2
    exit 2
  fi
fi
dir=${BRAID_BUILD_DIR:-build}
[ -f "$dir/build.ninja" ] || scripts/build.sh >/dev/null
ninja -C "$dir" braid-sim >/dev/null
exec /usr/bin/python3 bench/scale_plots.py --sim "$dir/tools/braid_sim/braid-sim" "$@"
