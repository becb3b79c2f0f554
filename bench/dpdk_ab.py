#!/usr/bin/env python3
"""braid over DPDK against its baselines, measured ALTERNATELY in one run.

Each round runs, back to back, with servers pinned to CPU 1 and clients to
CPU 0, every process busy-polling:

  raw dpdk  bw   dpdk-raw over net_memif, 1472-byte UDP payloads (the frame
                 size braid's MTU-1500 datagrams have)
  braid dpdk bw  braid-perf --backend dpdk over net_memif, 64 KiB messages
  braid udp bw   braid-perf over kernel UDP on loopback, 64 KiB messages
  raw dpdk  lat  dpdk-raw ping-pong over net_memif, 64 B
  raw udp   lat  udp-blast ping-pong on loopback, 64 B (kernel path)
  braid dpdk lat braid-perf ping-pong over net_memif, 64 B
  braid dpdk rate / braid udp rate   64 B messages one way, msg/s

then prints the median of each figure and, for each ratio the DPDK backend
is held to, the per-round ratios' median with a distribution-free ~95 %
interval (bench/compare_stats.py) and whether the rounds settle the target.

  bench/dpdk_ab.py [--build DIR] [--rounds 5] [--seconds 2] [--lat-iters 5000]
                   [--json]

Every process is started by this script for one measurement, has its own
time limit and is killed by PID if still alive; EAL run directories and
memif sockets are removed.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_stats  # noqa: E402

EAL = "--no-huge -m 512 --no-pci --no-shconf --no-telemetry --log-level=*:error"
SERVER_CPU, CLIENT_CPU = "1", "0"

# (name, numerator, denominator, op, target)
TARGETS = [
    ("lat  braid-dpdk / raw kernel UDP", "braid_dpdk_lat", "raw_udp_lat", "<=", 0.7),
    ("lat  braid-dpdk / raw DPDK", "braid_dpdk_lat", "raw_dpdk_lat", "<=", 1.3),
    ("bw   braid-dpdk / raw DPDK", "braid_dpdk_bw", "raw_dpdk_bw", ">=", 0.9),
    ("bw   braid-dpdk / braid-udp", "braid_dpdk_bw", "braid_udp_bw", ">=", 1.0),
    ("rate braid-dpdk / braid-udp", "braid_dpdk_rate", "braid_udp_rate", ">=", 1.5),
]


class Run:
    def __init__(self, build, seconds, lat_iters):
        self.build = build
        self.seconds = seconds
        self.lat_iters = lat_iters
        self.dir = tempfile.mkdtemp(prefix="braid_dpdk_ab_")
        self.prefixes = []
        self.n = 0

    def tool(self, *parts):
        return os.path.join(self.build, *parts)

    def memif_pair(self):
        """EAL arguments of a memif server and its client (a fresh socket)."""
        self.n += 1
        sock = os.path.join(self.dir, f"m{self.n}.sock")
        args = []
        for role in ("server", "client"):
            prefix = f"bab{os.getpid()}_{self.n}_{role[0]}"
            self.prefixes.append(prefix)
            args.append(f"{EAL} --file-prefix={prefix} "
                        f"--vdev=net_memif0,role={role},socket={sock}")
        return args

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        for p in self.prefixes:
            shutil.rmtree(os.path.join("/var/run/dpdk", p), ignore_errors=True)

    def pair(self, server_cmd, client_cmd, timeout=60, ready=None):
        """Runs a pinned server and client; returns the client's stdout."""
        server = subprocess.Popen(["taskset", "-c", SERVER_CPU, *server_cmd],
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        try:
            if ready is not None:
                for _ in range(50):
                    line = server.stderr.readline()
                    if not line or ready in line:
                        break
            else:
                time.sleep(0.5)
            c = subprocess.run(["taskset", "-c", CLIENT_CPU, *client_cmd],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, timeout=timeout)
            return c.stdout if c.returncode == 0 else None
        except subprocess.TimeoutExpired:
            return None
        finally:
            if server.poll() is None:
                try:
                    server.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    server.kill()
            server.communicate()

    # Each measurement returns a number, or None when the run failed.
    def raw_dpdk(self, mode, size):
        s_eal, c_eal = self.memif_pair()
        dur = ["--duration", str(self.seconds)] if mode == "bw" else \
              ["--count", str(self.lat_iters)]
        out = self.pair(
            [self.tool("bench/dpdk_raw/dpdk-raw"), "server", "--once",
             "--json", "--eal", s_eal],
            [self.tool("bench/dpdk_raw/dpdk-raw"), "client", "--json",
             "--mode", mode, "--size", str(size), *dur, "--eal", c_eal])
        if out is None:
            return None
        r = json.loads(out.strip().splitlines()[-1])
        return r["gbps"] if mode == "bw" else r["p50_us"]

    def raw_udp_lat(self):
        blast = self.tool("bench/udp_blast/udp-blast")
        port = 20000 + os.getpid() % 10000
        out = self.pair(
            [blast, "server", "-b", f"127.0.0.1:{port}", "--once",
             "--busy-poll", "--json"],
            [blast, "client", "-c", f"127.0.0.1:{port}", "lat", "-n",
             str(self.lat_iters), "--busy-poll", "--json"])
        return None if out is None else json.loads(out)["p50_us"]

    def braid(self, backend, test, size, limit):
        perf = self.tool("tools/braid_perf/braid-perf")
        if backend == "dpdk":
            s_eal, c_eal = self.memif_pair()
            server = [perf, "--server", "--backend", "dpdk", "--bind",
                      "10.77.9.1:18600", "--dpdk-eal", s_eal]
            client = [perf, "--client", "10.77.9.1:18600", "--backend",
                      "dpdk", "--bind", "10.77.9.2:18600", "--dpdk-eal", c_eal]
        else:
            port = 21000 + os.getpid() % 10000
            server = [perf, "--server", "--bind", f"127.0.0.1:{port}"]
            client = [perf, "--client", f"127.0.0.1:{port}"]
        out = self.pair([*server, "--time-limit", "60"],
                        [*client, "--json", "--test", test, "-s", str(size),
                         *limit, "--time-limit", "60"],
                        ready="listening on")
        if out is None:
            return None
        r = json.loads(out)["results"][0]
        return {"bw": r["gbps"], "lat": r["lat_p50_us"],
                "rate": r["msg_per_s"]}[test]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--build", default=os.path.join(here, "build"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--lat-iters", type=int, default=5000)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    run = Run(a.build, a.seconds, a.lat_iters)
    dur = ["-D", str(a.seconds)]
    figures = {k: [] for k in ("raw_dpdk_bw", "braid_dpdk_bw", "braid_udp_bw",
                               "raw_dpdk_lat", "raw_udp_lat", "braid_dpdk_lat",
                               "braid_dpdk_rate", "braid_udp_rate")}
    try:
        for i in range(a.rounds):
            f = figures
            f["raw_dpdk_bw"].append(run.raw_dpdk("bw", 1472))
            f["braid_dpdk_bw"].append(run.braid("dpdk", "bw", 65536, dur))
            f["braid_udp_bw"].append(run.braid("udp", "bw", 65536, dur))
            f["raw_dpdk_lat"].append(run.raw_dpdk("lat", 64))
            f["raw_udp_lat"].append(run.raw_udp_lat())
            f["braid_dpdk_lat"].append(
                run.braid("dpdk", "lat", 64, ["-n", str(a.lat_iters)]))
            f["braid_dpdk_rate"].append(run.braid("dpdk", "rate", 64, dur))
            f["braid_udp_rate"].append(run.braid("udp", "rate", 64, dur))
            print(f"round {i + 1}: " + " ".join(
                f"{k}={v[-1]}" for k, v in f.items()), file=sys.stderr)
    finally:
        run.cleanup()
    nan = float("nan")
    out = {"rounds": a.rounds, "figures": {}, "ratios": {}}
    print(f"{'figure':18s} {'median':>12s}   rounds")
    for k, v in figures.items():
        m = compare_stats.median([nan if x is None else x for x in v])
        out["figures"][k] = {"median": m, "rounds": v}
        print(f"{k:18s} {m if m is not None else float('nan'):12.3f}   "
              + " ".join("-" if x is None else f"{x:.3f}" for x in v))
    print()
    for name, num, den, op, target in TARGETS:
        per = compare_stats.per_round(figures[num], figures[den])
        ci = compare_stats.median_ci(per)
        verdict = compare_stats.judged(ci, op, target)
        if ci is None:
            print(f"{name:32s} n/a (target {op} {target})")
            continue
        med, lo, hi, cov = ci
        out["ratios"][name] = {"median": med, "lo": lo, "hi": hi,
                               "target": f"{op} {target}", "verdict": verdict}
        print(f"{name:32s} {med:6.3f} [{lo:.3f}, {hi:.3f}] ({cov:.0%})"
              f"  target {op} {target}: {verdict}")
    if a.json:
        print(json.dumps(out))


if __name__ == "__main__":
    main()
