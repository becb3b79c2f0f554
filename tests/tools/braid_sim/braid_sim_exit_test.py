#!/usr/bin/env python3
"""braid-sim's exit status tells a script what happened: 0 every invariant
held, 2 bad flags (a range the topology would refuse is a bad flag), 3 a run
that could not start or ran out of simulated time, each with the reason on
stderr. A run cut short by the time limit reports its sends in flight as
pending, not as lost: no broken invariant is claimed. Usage:
braid_sim_exit_test.py PATH/TO/braid-sim"""
import json
import re
import subprocess
import sys

SIM = sys.argv[1]

# (arguments, expected exit status, text the reason must contain)
CASES = [
    (["--hosts", "2", "--messages", "5"], 0, ""),
    (["--hosts", "512"], 2, "--hosts: at most 254 hosts a leaf"),
    (["--hosts", "7"], 2, "--hosts: 7 hosts do not split evenly"),
    (["--topology", "fat-tree", "--k", "4", "--messages", "5"], 0, ""),
    (["--topology", "fat-tree", "--k", "3"], 2, "--k: must be even"),
    (["--topology", "fat-tree", "--spines", "4"], 2,
     "--spines: applies to --topology leaf-spine only"),
    (["--traffic", "incast", "--incast", "8"], 2, "--incast: needs fewer"),
    (["--impair", "spine=4,loss=0.1"], 2, "spine 4 does not exist"),
    (["--messages", "2000", "--time-limit-ms", "1"], 3, "timed out"),
    (["--ab-demo", "--messages", "2000", "--time-limit-ms", "1"], 3,
     "timed out"),
]

failed = 0
for args, want_rc, want_text in CASES:
    p = subprocess.run([SIM] + args, capture_output=True, text=True,
                       timeout=120)
    ok = (p.returncode == want_rc and want_text in p.stderr and
          "INVARIANT VIOLATED" not in p.stdout)
    if not ok:
        failed += 1
        print(f"FAIL braid-sim {' '.join(args)}: exit {p.returncode} "
              f"(want {want_rc}), stderr {p.stderr!r} (want {want_text!r})")
    else:
        print(f"ok   braid-sim {' '.join(args)}: exit {p.returncode}")
# The time-limited run's JSON: its sends in flight are pending_at_limit,
# as many as the reason on stderr names.
p = subprocess.run([SIM, "--messages", "2000", "--time-limit-ms", "1",
                    "--json"], capture_output=True, text=True, timeout=120)
m = re.search(r"(\d+) of \d+ sends still pending", p.stderr)
pending = int(m.group(1)) if m else -1
for r in json.loads(p.stdout)["runs"]:
    if not (r["timed_out"] and r["lost_without_error"] == 0 and
            r["pending_at_limit"] == pending > 0):
        failed += 1
        print(f"FAIL time-limited {r['mode']}: timed_out {r['timed_out']}, "
              f"lost {r['lost_without_error']}, pending_at_limit "
              f"{r['pending_at_limit']} (want {pending} > 0)")
    else:
        print(f"ok   time-limited {r['mode']}: {pending} pending, none lost")
sys.exit(1 if failed else 0)
