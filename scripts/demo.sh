#!/usr/bin/env bash
# The A/B demo: braid's multipath spraying vs the single-path go-back-N
# baseline (RoCE RC on a lossy network), run by the same code both ways.
#
# Today it runs in the deterministic simulator (a 4-spine leaf-spine fabric,
# 8 hosts at 100 Gbit/s): clean; 1 % loss on one spine; one spine blackholed
# mid-run; one spine a 4x slower bottleneck with ECN. It prints one table.
# The same A/B over a real namespace fabric is issue 4 (not yet wired here).
set -euo pipefail
cd "$(dirname "$0")/.."
BRAID_BUILD_DIR=build scripts/build.sh >/dev/null
echo "braid A/B demo (simulated fabric; spray = braid, gbn = single-path go-back-N):"
build/tools/braid_sim/braid-sim --ab-demo --messages 300 "$@"
