#!/usr/bin/python3
"""Regenerates the scale figures of docs/scale.md from braid-sim runs.

Three experiments, each a set of braid-sim runs (--json) saved to
docs/figures/<name>.json and drawn to docs/figures/<name>.png:

  permutation  a k-ary fat-tree (default k=16: 1,024 hosts) under a random
               permutation: steady-state goodput as a fraction of the
               hosts' aggregate rate (= the bisection capacity at k/2 hosts
               per edge), spray (16 and 64 paths, Swift and no congestion
               control, two choices and round robin) against go-back-N on
               one path (single-path ECMP).
  failure      a fat-tree (k=8) under a permutation with one core switch
               failing mid-run: goodput over time for spray and go-back-N,
               and the messages delivered, failed and lost.
  incast       64 senders to one receiver on a leaf-spine: tail drops,
               largest queue and p99 completion time for spray with Swift
               (default and with a slow-start window), spray without
               congestion control and go-back-N.

usage: bench/scale_plots.py [--sim PATH] [--out DIR] [--quick] [--only NAME]
  --quick uses k=8 for the permutation (128 hosts, seconds instead of
  minutes). Needs Debian's python3-matplotlib (scripts/plots.sh installs it).
"""
import argparse
import json
import os
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def run_sim(sim, args):
    """One braid-sim invocation with --json; returns its parsed runs."""
    cmd = [sim] + args + ["--json", "--payload", "checksum"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("braid-sim failed (exit %d): %s\n%s" %
                 (p.returncode, " ".join(cmd), p.stderr))
    out = json.loads(p.stdout)
    return {"command": "braid-sim " + " ".join(args + ["--payload", "checksum"]),
            "runs": out["runs"]}


def steady_gbps(run):
    """Mean of the timeline's middle half: ramp-up and tail left out."""
    t = run["timeline_gbps"]
    mid = t[len(t) // 4: 3 * len(t) // 4] or t
    return sum(mid) / len(mid)


def permutation(sim, k):
    hosts = k * k * k // 4
    capacity = hosts * 100.0  # every host link 100 Gbit/s, full bisection
    base = ["--topology", "fat-tree", "--k", str(k), "--traffic",
            "permutation", "--messages", "150", "--timeline-us", "20"]
    cases = [
        ("spray, Swift, 16 paths", []),
        ("spray, Swift, 16 paths, round robin", ["--spray-choices", "1"]),
        ("spray, no CC, 16 paths", ["--cc", "none"]),
        ("spray, Swift, 64 paths", ["--paths", "64"]),
        ("single path (gbn), ECMP", ["--mode", "gbn"]),
    ]
    rows = []
    for label, extra in cases:
        r = run_sim(sim, base + extra)
        run = r["runs"][0]
        rows.append({"label": label, "command": r["command"],
                     "steady_gbps": steady_gbps(run),
                     "fraction": steady_gbps(run) / capacity,
                     "delivered": run["messages_delivered"],
                     "sent": run["messages_sent"],
                     "failed": run["messages_failed"],
                     "link_drops": run["link_drops"]})
    return {"k": k, "hosts": hosts, "capacity_gbps": capacity, "rows": rows}


def draw_permutation(d, path):
    fig, ax = plt.subplots(figsize=(7, 3.6))
    labels = [r["label"] for r in d["rows"]]
    values = [r["fraction"] for r in d["rows"]]
    colors = ["#c64" if "gbn" in l else "#2a7" for l in labels]
    bars = ax.barh(labels, values, color=colors)
    for b, v in zip(bars, values):
        ax.text(v + 0.01, b.get_y() + b.get_height() / 2, "%.2f" % v,
                va="center")
    ax.set_xlim(0, 1.05)
    ax.invert_yaxis()
    ax.set_xlabel("steady-state goodput / bisection capacity")
    ax.set_title("Permutation on a k=%d fat-tree (%d hosts, 100 Gbit/s)" %
                 (d["k"], d["hosts"]))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def failure(sim):
    fail_us = 300
    base = ["--topology", "fat-tree", "--k", "8", "--traffic", "permutation",
            "--messages", "200", "--timeline-us", "20", "--impair",
            "spine=5,blackhole,start_us=%d" % fail_us]
    out = {"fail_us": fail_us, "runs": []}
    for mode in ("spray", "gbn"):
        r = run_sim(sim, base + ["--mode", mode])
        run = r["runs"][0]
        out["runs"].append({"mode": mode, "command": r["command"],
                            "bin_us": run["timeline_bin_us"],
                            "timeline_gbps": run["timeline_gbps"],
                            "sent": run["messages_sent"],
                            "delivered": run["messages_delivered"],
                            "failed": run["messages_failed"],
                            "lost": run["lost_without_error"],
                            "recycles": run["path_recycles"],
                            "rtos": run["rtos"],
                            "sim_time_ms": run["sim_time_ms"]})
    # Keep the timelines to the plotted window (twice spray's run): go-back-N
    # runs on for hundreds of ms of empty bins.
    bins = int(2 * out["runs"][0]["sim_time_ms"] * 1000 /
               out["runs"][0]["bin_us"]) + 1
    for run in out["runs"]:
        run["recovery_us"] = recovery_us(run, fail_us)
        run["timeline_gbps"] = run["timeline_gbps"][:bins]
    return out


def recovery_us(run, fail_us):
    """Time from the failure until goodput is back at 90 % of its mean over
    the 200 us before it, after first falling below that (None if it never
    fell, or never came back)."""
    t, b = run["timeline_gbps"], run["bin_us"]
    fb = int(fail_us / b)
    before = t[max(0, fb - int(200 / b)):fb]
    level = 0.9 * sum(before) / max(1, len(before))
    fell = False
    for i in range(fb, len(t)):
        fell = fell or t[i] < level
        if fell and t[i] >= level:
            return (i - fb) * b
    return None


def draw_failure(d, path):
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for run, color in zip(d["runs"], ("#2a7", "#c64")):
        t = run["timeline_gbps"]
        xs = [i * run["bin_us"] / 1000.0 for i in range(len(t))]
        label = "%s: %d/%d delivered, %d failed, %d lost; ends at %.1f ms" % (
            run["mode"], run["delivered"], run["sent"], run["failed"],
            run["lost"], run["sim_time_ms"])
        if run["recovery_us"] is not None:
            label += "; back to 90%% in %d us" % run["recovery_us"]
        ax.plot(xs, [v / 1000.0 for v in t], color=color, label=label)
    # Spray's whole run and the recovery; go-back-N's flows through the
    # failed core wait out peer timeouts long after (its end is in the
    # legend).
    ax.set_xlim(0, 2 * d["runs"][0]["sim_time_ms"])
    ax.axvline(d["fail_us"] / 1000.0, color="k", linestyle="--", linewidth=1)
    ax.text(d["fail_us"] / 1000.0, ax.get_ylim()[1] * 0.95,
            " core switch 5 fails", va="top")
    ax.set_xlabel("simulated time (ms)")
    ax.set_ylabel("goodput (Tbit/s)")
    ax.set_title("k=8 fat-tree (128 hosts), permutation, one core fails")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def incast(sim):
    base = ["--hosts", "66", "--leaves", "2", "--traffic", "incast",
            "--incast", "64", "--messages", "20", "--size", "65536",
            "--time-limit-ms", "20000"]
    cases = [
        ("spray, Swift", []),
        ("spray, Swift, 64 KiB start window", ["--start-cwnd-kb", "64"]),
        ("spray, no CC", ["--cc", "none"]),
        ("gbn, Swift", ["--mode", "gbn"]),
    ]
    rows = []
    for label, extra in cases:
        r = run_sim(sim, base + extra)
        run = r["runs"][0]
        # As docs/congestion.md counts them: packets tail-dropped by the
        # network's queues (the receiver's downlink is the bottleneck) over
        # every packet the hosts sent.
        rows.append({"label": label, "command": r["command"],
                     "queue_drops": run["queue_drops"],
                     "sim_packets": run["sim_packets"],
                     "drop_pct": 100.0 * run["queue_drops"] /
                     max(1, run["sim_packets"]),
                     "max_queue_kib": run["max_queue_kib"],
                     "mct_p99_us": run["mct_p99_us"],
                     "delivered": run["messages_delivered"],
                     "sent": run["messages_sent"],
                     "failed": run["messages_failed"]})
    return {"rows": rows}


def draw_incast(d, path):
    fig, axes = plt.subplots(1, 3, figsize=(10, 3.4))
    labels = [r["label"] for r in d["rows"]]
    colors = ["#2a7", "#197", "#6b9", "#c64"]
    for ax, key, title in zip(
            axes, ("drop_pct", "max_queue_kib", "mct_p99_us"),
            ("packets dropped (%)", "largest queue (KiB)",
             "p99 completion (us)")):
        vals = [r[key] for r in d["rows"]]
        ax.barh(labels, vals, color=colors)
        ax.invert_yaxis()
        ax.set_title(title, fontsize=9)
        ax.tick_params(labelsize=8)
        if ax is not axes[0]:
            ax.set_yticklabels([])
    fig.suptitle("Incast 64 -> 1 on a leaf-spine, 100 Gbit/s, "
                 "16 MiB receiver queue")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sim", default="build/tools/braid_sim/braid-sim")
    ap.add_argument("--out", default="docs/figures")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", choices=("permutation", "failure", "incast"))
    a = ap.parse_args()
    if not os.access(a.sim, os.X_OK):
        sys.exit("no braid-sim at %s (build it, or give --sim)" % a.sim)
    os.makedirs(a.out, exist_ok=True)
    experiments = [
        ("permutation", lambda: permutation(a.sim, 8 if a.quick else 16),
         draw_permutation),
        ("failure", lambda: failure(a.sim), draw_failure),
        ("incast", lambda: incast(a.sim), draw_incast),
    ]
    for name, run, draw in experiments:
        if a.only and name != a.only:
            continue
        print("running %s ..." % name, flush=True)
        d = run()
        with open(os.path.join(a.out, name + ".json"), "w") as f:
            json.dump(d, f, indent=1)
            f.write("\n")
        draw(d, os.path.join(a.out, name + ".png"))
        print("wrote %s/%s.png" % (a.out, name), flush=True)


if __name__ == "__main__":
    main()
