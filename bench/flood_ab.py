#!/usr/bin/env python3
"""The flood figure: an established braid transfer under a flood of forged
first contacts from a million source addresses, in one run.

Target (docs/security.md): under a flood of forged source addresses sent as
fast as one core can send them, an established transfer keeps >= 0.8x its
goodput, memory stays under the configured caps, and a new legitimate peer
gets through within 10 ms.

On a namespace fabric (tools/braid-fabric, root only): host 1 (B) sends host
0 (A, the victim, a braid-perf server) one long bw transfer (64 KiB
messages). Rounds alternate, flood off then on: in an "on" round host 2
runs braid-forge --attack flood at A (SYNC + one fragment of a --msg-len
message from each new (IP, reply port) of --prefix, as fast as it can or at
--rate), and host 3 (C) runs braid-first-contact against A: a new peer's
time from Send to the ack of its first message, and to the server's answer.
The same probe runs in an "off" round as the baseline. Throughout, A's RSS
is sampled from /proc.

Goodput per round comes from the client's --interval lines (intervals that
lie wholly inside a round). A's peer count and drop counters come from its
--stats at exit (after the last flood round). Extra server flags (the caps,
once they exist) go in --victim-flags.

    sudo bench/flood_ab.py [--rounds 3] [--round-s 3] [--rate 0]
        [--msg-len 1048576] [--victim-flags '...'] [--json]

Exit: 0 measured (whatever the figures), 1 a step failed, 2 bad flags,
77 not root.
"""
import argparse
import glob
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FABRIC = os.path.join(ROOT, "tools", "braid-fabric")
DPORT, CPORT = 9000, 9100
A, B, X, C = 0, 1, 2, 3  # victim, established sender, attacker, new peer


def newest(pattern):
    found = sorted(glob.glob(os.path.join(ROOT, pattern)),
                   key=os.path.getmtime, reverse=True)
    return found[0] if found else ""


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--round-s", type=float, default=3.0)
    p.add_argument("--warmup-s", type=float, default=1.5)
    p.add_argument("--rate", type=float, default=0,
                   help="flood datagrams/s (0: as fast as it can)")
    p.add_argument("--prefix", default="10.96.0.0/12")
    p.add_argument("--msg-len", type=int, default=1 << 20)
    p.add_argument("--frag-len", type=int, default=1024)
    p.add_argument("--frag-offset", type=int, default=0,
                   help="where the forged fragment sits in its message (a "
                   "high one tests zero-filling)")
    p.add_argument("--size", default="64k", help="transfer message size")
    p.add_argument("--probe-tries", type=int, default=3)
    p.add_argument("--busy-poll", action="store_true",
                   help="server and client busy-poll (default: --block)")
    p.add_argument("--control", action="store_true",
                   help="instead of the flood, forged STALEs from B's address "
                   "at the same speed (dropped at the first check): what the "
                   "packet rate alone costs")
    p.add_argument("--victim-flags", default="",
                   help="extra braid-perf server flags (e.g. caps)")
    p.add_argument("--name", default="bfflood")
    p.add_argument("--json", action="store_true")
    p.add_argument("--keep", action="store_true",
                   help="keep the raw outputs (the directory is printed)")
    p.add_argument("--perf", default=os.environ.get("BRAID_PERF") or
                   newest("build*/tools/braid_perf/braid-perf"))
    p.add_argument("--forge", default=os.environ.get("BRAID_FORGE") or
                   newest("build*/tools/braid_forge/braid-forge"))
    p.add_argument("--first-contact",
                   default=os.environ.get("BRAID_FIRST_CONTACT") or
                   newest("build*/bench/first_contact/braid-first-contact"))
    a = p.parse_args()
    if a.rounds < 1 or a.round_s < 2:
        p.error("--rounds >= 1 and --round-s >= 2")
    for what in ("perf", "forge", "first_contact"):
        if not os.access(getattr(a, what), os.X_OK):
            p.error("--%s: not built (%r)" % (what.replace("_", "-"),
                                              getattr(a, what)))
    return a


class Fabric:
    """The namespace fabric of this run; down() removes it."""

    def __init__(self, name):
        self.name = name
        self.procs = []

    def cmd(self, *args, **kw):
        return subprocess.run([FABRIC, args[0], "--name", self.name,
                               *args[1:]], check=True, text=True,
                              capture_output=True, **kw).stdout

    def addr(self, host):
        return self.cmd("addr", "--host", str(host)).strip()

    def spawn(self, host, argv, out, err):
        """argv in host's namespace; the Popen's pid is the program's own
        (braid-fabric exec execs `ip netns exec`, which execs argv)."""
        p = subprocess.Popen([FABRIC, "exec", "--name", self.name, "--host",
                              str(host), "--", *argv], stdout=out, stderr=err,
                             text=True)
        self.procs.append(p)
        return p

    def down(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        subprocess.run([FABRIC, "down", "--name", self.name],
                       capture_output=True)


class RssSampler(threading.Thread):
    """Samples a process's VmRSS (KiB) every 50 ms: (monotonic, kib)."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.samples, self.stop = pid, [], threading.Event()
        self.cpu = []

    def run(self):
        path = "/proc/%d/status" % self.pid
        tick = os.sysconf("SC_CLK_TCK")
        while not self.stop.is_set():
            try:
                with open(path) as f:
                    for line in f:
                        if line.startswith("VmRSS:"):
                            self.samples.append((time.monotonic(),
                                                 int(line.split()[1])))
                with open("/proc/%d/stat" % self.pid) as f:
                    st = f.read().rsplit(")", 1)[1].split()
                    self.cpu.append((time.monotonic(),
                                     (int(st[11]) + int(st[12])) / tick))
            except OSError:
                return
            self.stop.wait(0.05)

    def cpu_in(self, window):
        """CPU seconds (user + system) the process used within window."""
        v = [c for t, c in self.cpu if window[0] <= t <= window[1]]
        return round(v[-1] - v[0], 2) if len(v) > 1 else 0

    def max_in(self, windows):
        v = [k for t, k in self.samples
             if any(lo <= t <= hi for lo, hi in windows)]
        return max(v) if v else 0


def udp_counters(fab):
    """The victim namespace's kernel UDP counters (/proc/net/snmp)."""
    lines = [x.split() for x in fab.cmd("exec", "--host", str(A), "--", "cat",
                                        "/proc/net/snmp").splitlines()
             if x.startswith("Udp:")]
    return {k: int(v) for k, v in zip(lines[0][1:], lines[1][1:])}


def probe(fab, a, to, tag, out):
    """braid-first-contact from C to A; returns its parsed lines."""
    r = subprocess.run([FABRIC, "exec", "--name", fab.name, "--host", str(C),
                        "--", a.first_contact, "--to", to, "--bind-ip",
                        fab.addr(C), "--tries", str(a.probe_tries),
                        "--timeout-ms", "500", "--gap-ms", "20"],
                       capture_output=True, text=True)
    lines = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    for x in lines:
        x["round"] = tag
    out.extend(lines)
    return lines


def run(a, fab):
    fab.cmd("up", "--hosts", "4", "--spines", "2")
    # Spoofed sources arrive only with the reverse-path filter off.
    fab.cmd("exec", "--host", str(A), "--", "sysctl", "-qw",
            "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.eth0.rp_filter=0")
    ip = {h: fab.addr(h) for h in (A, B, X, C)}
    tmp = a.tmp
    poll = [] if a.busy_poll else ["--block"]
    srv_out = open(os.path.join(tmp, "server.out"), "w+")
    srv_err = open(os.path.join(tmp, "server.err"), "w+")
    server = fab.spawn(A, [a.perf, "--server", "--bind", "%s:%d" % (ip[A], DPORT),
                           "--stats", "--json", *poll,
                           *shlex.split(a.victim_flags)], srv_out, srv_err)
    for _ in range(250):
        srv_err.seek(0)
        if "listening" in srv_err.read():
            break
        if server.poll() is not None:
            raise RuntimeError("server did not start: " + srv_err.read())
        time.sleep(0.02)
    rss = RssSampler(server.pid)
    rss.start()
    udp_before = udp_counters(fab)
    total = a.warmup_s + a.rounds * 2 * a.round_s + 1
    cli_out = open(os.path.join(tmp, "client.json"), "w+")
    cli_err = open(os.path.join(tmp, "client.err"), "w+")
    client = fab.spawn(B, [a.perf, "--client", "%s:%d" % (ip[A], DPORT),
                           "--bind", "%s:%d" % (ip[B], CPORT), "--json",
                           "--stats", "--test", "bw", "-s", a.size, "-D",
                           str(total), "--interval", "0.25",
                           "--time-limit", str(total + 30), *poll],
                       cli_out, cli_err)
    time.sleep(a.warmup_s)
    rss_before = rss.samples[-1][1] if rss.samples else 0
    off, on, forged, probes = [], [], [], []
    victim = "%s:%d" % (ip[A], DPORT)
    for r in range(a.rounds):
        if client.poll() is not None:
            break  # the transfer is over (failed): the rest means nothing
        t = time.monotonic()
        probe(fab, a, victim, "off%d" % r, probes)
        time.sleep(max(0, a.round_s - (time.monotonic() - t)))
        off.append((t, time.monotonic()))
        flood = ["--victim", victim, "--duration", str(a.round_s),
                 "--msg-len", str(a.msg_len), "--frag-len", str(a.frag_len),
                 "--frag-offset", str(a.frag_offset),
                 "--seed", str(r + 1), "--json"]
        if a.control:
            flood += ["--attack", "stale", "--spoof", "%s:%d" % (ip[B], CPORT)]
        else:
            flood += ["--attack", "flood", "--prefix", a.prefix]
        if a.rate > 0:
            flood += ["--rate", str(a.rate)]
        f_out = open(os.path.join(tmp, "forge%d.json" % r), "w+")
        t = time.monotonic()
        forge = fab.spawn(X, [a.forge, *flood], f_out, subprocess.STDOUT)
        time.sleep(0.3)  # the flood is on
        probe(fab, a, victim, "on%d" % r, probes)
        forge.wait()
        on.append((t + 0.3, time.monotonic()))
        f_out.seek(0)
        forged += [json.loads(x) for x in f_out.read().splitlines()
                   if x.startswith("{")]
    client.wait()
    for _ in range(100):
        if server.poll() is not None:
            break
        time.sleep(0.05)
    if server.poll() is None:
        server.terminate()
        server.wait()
    rss.stop.set()
    rss.join()
    udp_after = udp_counters(fab)
    cli_out.seek(0)
    cli_err.seek(0)
    srv_out.seek(0)
    report = json.loads(cli_out.read() or "{}")
    intervals = [json.loads(x) for x in cli_err.read().splitlines()
                 if x.startswith('{"interval_s"')]
    stats = {}
    for line in srv_out.read().splitlines():
        if line.startswith('{"server_stats"'):
            stats = json.loads(line)["server_stats"]

    def goodput(windows):
        v = [i["gbps"] for i in intervals
             if any(lo <= i["mono_s"] - 0.25 and i["mono_s"] <= hi
                    for lo, hi in windows)]
        return statistics.mean(v) if v else 0.0

    rounds = []
    for r in range(len(on)):
        g_off, g_on = goodput([off[r]]), goodput([on[r]])
        rounds.append({"round": r, "gbps_off": round(g_off, 4),
                       "gbps_on": round(g_on, 4),
                       "ratio": round(g_on / g_off, 3) if g_off else 0})
    acks_on = [p["ack_ms"] for p in probes
               if p.get("round", "").startswith("on") and "try" in p]
    acks_off = [p["ack_ms"] for p in probes
                if p.get("round", "").startswith("off") and "try" in p]
    keys = [k for k in stats if k.startswith(("peer", "drop_no_", "reassembl",
                                              "memory", "evict"))
            or "cap" in k]
    res = report.get("results", [{}])[0] if report.get("results") else {}
    return {
        "rounds": rounds,
        "rounds_asked": a.rounds,
        "gbps_off": round(goodput(off), 4),
        "gbps_on": round(goodput(on), 4),
        "ratio": round(goodput(on) / goodput(off), 3) if goodput(off) else 0,
        "flood_datagrams_per_s": [f.get("datagrams_per_s") for f in forged],
        "flood_datagrams": sum(f.get("datagrams", 0) for f in forged),
        "flood_refused": sum(f.get("errors", 0) for f in forged),
        "victim_rss_kib": {"before": rss_before, "max_off": rss.max_in(off),
                           "max_on": rss.max_in(on),
                           "max": max([k for _, k in rss.samples] or [0])},
        "victim_stats_at_exit": {k: stats[k] for k in keys},
        "first_contact_ms_on": acks_on,
        "first_contact_ms_off": acks_off,
        "first_contact_failed_on": sum(1 for x in acks_on if x < 0),
        "victim_udp": {k: udp_after[k] - udp_before.get(k, 0)
                       for k in udp_after},
        "victim_cpu_s": {"off": sum(rss.cpu_in(w) for w in off),
                         "on": sum(rss.cpu_in(w) for w in on),
                         "seconds_each": round(sum(h - l for l, h in on), 2)},
        "transfer_ok": report.get("ok"),
        "transfer_errors": res.get("errors"),
        "transfer_gbps": res.get("gbps"),
        "files": tmp,
    }


def print_table(m):
    print("round  off Gbit/s  on Gbit/s  on/off")
    for r in m["rounds"]:
        print("%5d  %10.3f  %9.3f  %6.3f" % (r["round"], r["gbps_off"],
                                            r["gbps_on"], r["ratio"]))
    if len(m["rounds"]) < m["rounds_asked"]:
        print("(the transfer ended after round %d of %d)" % (
            len(m["rounds"]) - 1, m["rounds_asked"]))
    print("all    %10.3f  %9.3f  %6.3f   (target >= 0.8)" % (
        m["gbps_off"], m["gbps_on"], m["ratio"]))
    print("flood: %d datagrams, %s datagrams/s per round, %d refused" % (
        m["flood_datagrams"], m["flood_datagrams_per_s"], m["flood_refused"]))
    print("victim RSS KiB: %s" % m["victim_rss_kib"])
    print("victim at exit: %s" % m["victim_stats_at_exit"])
    print("new peer, ms to its first ack: flood on %s, off %s (target <= 10; "
          "-1 = none)" % (m["first_contact_ms_on"], m["first_contact_ms_off"]))
    print("victim kernel UDP (delta): %s" % m["victim_udp"])
    print("victim CPU s, flood off / on rounds: %s" % m["victim_cpu_s"])
    print("transfer ok: %s, errors %s" % (m["transfer_ok"],
                                          m["transfer_errors"]))


def main():
    a = parse_args()
    if os.geteuid() != 0:
        print("skipped: needs root")
        return 77
    fab = Fabric(a.name)
    fab.down()  # a previous run killed hard
    a.tmp = "/tmp/flood_ab.%d" % os.getpid()
    os.makedirs(a.tmp, exist_ok=True)
    try:
        m = run(a, fab)
    except (subprocess.CalledProcessError, RuntimeError, OSError) as e:
        print("flood_ab: %s %s" % (e, getattr(e, "stderr", "") or ""),
              file=sys.stderr)
        return 1
    finally:
        fab.down()
        if not a.keep:
            shutil.rmtree(a.tmp, ignore_errors=True)
    if not a.keep:
        del m["files"]
    if a.json:
        print(json.dumps(m))
    else:
        print_table(m)
    return 0


if __name__ == "__main__":
    sys.exit(main())
