#!/usr/bin/env bash
# The A/B demo: braid's multipath spraying vs the single-path go-back-N
# baseline (RoCE RC on a lossy network), run by the same code both ways.
#
# 1. The deterministic simulator (4-spine leaf-spine fabric, 8 hosts at
#    100 Gbit/s): clean; 1 % loss on one spine; one spine blackholed mid-run;
#    one spine a 4x slower bottleneck with ECN. One table.
# 2. As root: the same four conditions on a real routed network of Linux
#    namespaces (scripts/fabric_demo.sh: braid-perf across the kernel's own
#    ECMP), one table plus out/fabric_demo.png. Without root it says so and
#    runs a loopback A/B with injected loss instead.
set -euo pipefail
cd "$(dirname "$0")/.."
BRAID_BUILD_DIR=build scripts/build.sh >/dev/null
echo "== braid A/B demo 1/2: simulated fabric (spray = braid, gbn = single-path go-back-N)"
sim_rc=0
build/tools/braid_sim/braid-sim --ab-demo --messages 300 || sim_rc=$?
echo
echo "== braid A/B demo 2/2: real namespace fabric"
BRAID_BUILD_DIR=build BRAID_DEMO_SKIP_BUILD=1 scripts/fabric_demo.sh "$@"
exit "$sim_rc"
