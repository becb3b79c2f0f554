#!/usr/bin/env python3
"""Packet protection's cost, measured ALTERNATELY in one run.

Each round runs braid-perf over kernel UDP on loopback, server pinned to
CPU 1 and client to CPU 0, both busy-polling, once per security mode (none,
auth, encrypt) and test:

  bw   64 KiB messages one way for --seconds, Gbit/s of goodput
  lat  64 B ping-pong, --lat-iters round trips, one-way p50 in us

then prints the median of each figure and, for each ratio packet protection
is held to, the per-round ratios' median with a distribution-free ~95 %
interval (bench/compare_stats.py) and whether the rounds settle the target.

  bench/security_ab.py [--build DIR] [--rounds 5] [--seconds 2]
                       [--lat-iters 5000] [--json]

The domain key is a fresh random file in a temporary directory (mode 600),
removed at the end; every process has its own time limit and is killed by
PID if still alive.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_stats  # noqa: E402

SERVER_CPU, CLIENT_CPU = "1", "0"
MODES = ("none", "auth", "encrypt")

# (name, numerator, denominator, op, target)
TARGETS = [
    ("bw  auth / none", "auth_bw", "none_bw", ">=", 0.85),
    ("bw  encrypt / none", "encrypt_bw", "none_bw", ">=", 0.7),
    ("lat auth / none", "auth_lat", "none_lat", "<=", 1.15),
    ("lat encrypt / none", "encrypt_lat", "none_lat", "<=", 1.15),
]


def run_pair(perf, mode, key, test, size, limit, port):
    sec = ["--security", mode] + ([] if mode == "none" else
                                  ["--key-file", key])
    server = subprocess.Popen(
        ["taskset", "-c", SERVER_CPU, perf, "--server", "--bind",
         f"127.0.0.1:{port}", "--time-limit", "60", *sec],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(50):
            line = server.stderr.readline()
            if not line or "listening on" in line:
                break
        c = subprocess.run(
            ["taskset", "-c", CLIENT_CPU, perf, "--client",
             f"127.0.0.1:{port}", "--json", "--test", test, "-s", str(size),
             *limit, "--time-limit", "60", *sec],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            timeout=90)
        if c.returncode != 0:
            print(f"{mode} {test}: {c.stderr.strip()}", file=sys.stderr)
            return None
        r = json.loads(c.stdout)["results"][0]
        return r["gbps"] if test == "bw" else r["lat_p50_us"]
    except subprocess.TimeoutExpired:
        return None
    finally:
        if server.poll() is None:
            try:
                server.wait(timeout=5)
            except subprocess.TimeoutExpired:
                server.kill()
        server.communicate()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--build", default=os.path.join(here, "build"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--lat-iters", type=int, default=5000)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    perf = os.path.join(a.build, "tools/braid_perf/braid-perf")
    tmp = tempfile.mkdtemp(prefix="braid_security_ab_")
    key = os.path.join(tmp, "domain.key")
    fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, os.urandom(32))
    os.close(fd)
    port = 22000 + os.getpid() % 10000
    figures = {f"{m}_{t}": [] for t in ("bw", "lat") for m in MODES}
    try:
        for i in range(a.rounds):
            for m in MODES:
                figures[f"{m}_bw"].append(run_pair(
                    perf, m, key, "bw", 65536, ["-D", str(a.seconds)], port))
            for m in MODES:
                figures[f"{m}_lat"].append(run_pair(
                    perf, m, key, "lat", 64, ["-n", str(a.lat_iters)], port))
            print(f"round {i + 1}: " + " ".join(
                f"{k}={v[-1]}" for k, v in figures.items()), file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    nan = float("nan")
    out = {"rounds": a.rounds, "figures": {}, "ratios": {}}
    print(f"{'figure':14s} {'median':>10s}   rounds")
    for k, v in figures.items():
        med = compare_stats.median([nan if x is None else x for x in v])
        out["figures"][k] = {"median": med, "rounds": v}
        print(f"{k:14s} {med if med is not None else nan:10.3f}   "
              + " ".join("-" if x is None else f"{x:.3f}" for x in v))
    print()
    for name, num, den, op, target in TARGETS:
        ci = compare_stats.median_ci(
            compare_stats.per_round(figures[num], figures[den]))
        if ci is None:
            print(f"{name:22s} n/a (target {op} {target})")
            continue
        med, lo, hi, cov = ci
        verdict = compare_stats.judged(ci, op, target)
        out["ratios"][name] = {"median": med, "lo": lo, "hi": hi,
                               "target": f"{op} {target}", "verdict": verdict}
        print(f"{name:22s} {med:6.3f} [{lo:.3f}, {hi:.3f}] ({cov:.0%})"
              f"  target {op} {target}: {verdict}")
    if a.json:
        print(json.dumps(out))


if __name__ == "__main__":
    main()
