#!/usr/bin/env python3
"""braid-perf over the DPDK backend: two processes joined by net_memif.

Usage: braid_perf_dpdk_memif_test.py /path/to/braid-perf [unittest args]

Shared memory, no root, no hugepages, no NIC. Each case starts its own
server (memif role=server) and client (role=client) on a fresh socket in a
temporary directory, with their own EAL file prefixes; both find each
other's MAC by ARP (or Neighbor Discovery). Servers are killed by PID if
still alive at the end of a case, and the EAL run directories are removed.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

BIN = None
EAL = "--no-huge -m 512 --no-pci --no-telemetry --log-level=*:error"


class Pair:
    """Addresses, sockets and EAL prefixes of one server/client pair."""

    def __init__(self, ipv6=False):
        self.dir = tempfile.mkdtemp(prefix="braid_memif_")
        self.sock = os.path.join(self.dir, "m.sock")
        tag = f"{os.getpid()}_{time.monotonic_ns() % 10**9}"
        self.prefixes = [f"bms{tag}", f"bmc{tag}"]
        if ipv6:
            self.server_ip, self.client_ip = "[fd00:77::1]", "[fd00:77::2]"
        else:
            self.server_ip, self.client_ip = "10.77.9.1", "10.77.9.2"

    def args(self, role):
        prefix = self.prefixes[0 if role == "server" else 1]
        ip = self.server_ip if role == "server" else self.client_ip
        return ["--backend", "dpdk", "--bind", f"{ip}:18600",
                "--dpdk-eal",
                f"{EAL} --file-prefix={prefix} "
                f"--vdev=net_memif0,role={role},socket={self.sock}"]

    def server_addr(self):
        return f"{self.server_ip}:18600"

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        for p in self.prefixes:
            shutil.rmtree(os.path.join("/var/run/dpdk", p), ignore_errors=True)


class Server:
    def __init__(self, pair, extra=(), time_limit=60):
        self.proc = subprocess.Popen(
            [BIN, "--server", "--time-limit", str(time_limit),
             *pair.args("server"), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(50):  # EAL messages may come first
            line = self.proc.stderr.readline()
            if not line or "listening on" in line:
                break
        if "listening on" not in line:
            self.kill()
            raise AssertionError(f"server did not start: {line!r}")

    def wait(self, timeout=30):
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError("server did not exit after the client's Bye")
        return self.proc.returncode, out, err

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()


def run_client(pair, args, timeout=90):
    p = subprocess.run([BIN, "--client", pair.server_addr(), "--json",
                        "--stats", *pair.args("client"), *args],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


class MemifTest(unittest.TestCase):
    def run_pair(self, client_args, server_args=(), ipv6=False):
        pair = Pair(ipv6)
        self.addCleanup(pair.cleanup)
        server = Server(pair, server_args)
        self.addCleanup(server.kill)
        rc, out, err = run_client(pair, client_args)
        self.assertEqual(rc, 0, f"client failed: {err}\n{out}")
        report = json.loads(out)
        self.assertTrue(report["ok"], out)
        src, _, serr = server.wait()
        self.assertEqual(src, 0, serr)
        return report

    def check_clean(self, report):
        for r in report["results"]:
            e = r["errors"]
            for k in ("send_failed", "client_bad", "client_duplicates",
                      "server_bad", "server_duplicates", "server_missing"):
                self.assertEqual(e[k], 0, f"{k}: {r}")
            # (lat counts its warm-up ping-pongs too)
            self.assertGreaterEqual(r["server_received"], r["iters"])

    def test_bulk_transfer_is_byte_exact_zero_copy_and_syscall_free(self):
        report = self.run_pair(["--test", "bw", "-s", "64k", "-n", "3000"])
        self.check_clean(report)
        st = report["stats"]["endpoint"]
        # Payloads left from the message buffers by reference; braid copied
        # none of them; no system call on the data path; ARP found the peer.
        self.assertGreater(st["tx_zero_copy_frames"], 3000 * 40)
        self.assertEqual(st["tx_copied_bytes"], 0)
        self.assertEqual(st["tx_syscalls"], 0)
        self.assertEqual(st["rx_syscalls"], 0)
        self.assertGreaterEqual(st["neighbor_learnt"] +
                                st["neighbor_replies_sent"], 1)
        r = report["results"][0]
        self.assertLess(r["client"]["allocations_per_message"], 0.05)

    def test_impaired_transfer_is_exactly_once_and_byte_exact(self):
        imp = ["--loss", "0.03", "--dup", "0.03", "--reorder", "0.03"]
        report = self.run_pair(["--test", "bw", "-s", "100000", "-n", "800",
                                *imp], server_args=imp)
        self.check_clean(report)
        self.assertGreater(report["results"][0]["retransmits"], 0)
        st = report["stats"]["endpoint"]
        self.assertGreater(st["impair_dropped"], 0)

    def test_ping_pong_and_small_message_rate(self):
        report = self.run_pair(["--test", "lat", "-n", "3000"])
        self.check_clean(report)
        report = self.run_pair(["--test", "rate", "-n", "50000"])
        self.check_clean(report)

    def test_ipv6_peers_find_each_other_by_neighbor_discovery(self):
        report = self.run_pair(["--test", "bw", "-s", "10000", "-n", "500"],
                               ipv6=True)
        self.check_clean(report)

    def test_server_that_dies_mid_run_fails_the_client_in_bounded_time(self):
        pair = Pair()
        self.addCleanup(pair.cleanup)
        server = Server(pair)
        self.addCleanup(server.kill)
        client = subprocess.Popen(
            [BIN, "--client", pair.server_addr(), "--json", "-D", "20",
             "--time-limit", "40", *pair.args("client")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        server.kill()
        try:
            out, err = client.communicate(timeout=40)
        except subprocess.TimeoutExpired:
            client.kill()
            client.wait()
            self.fail("client hung after its server died")
        self.assertNotEqual(client.returncode, 0, out)
        self.assertNotEqual(client.returncode, 3, "ran into --time-limit")


class FlagTest(unittest.TestCase):
    def run_bin(self, args):
        return subprocess.run([BIN, *args], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=30)

    def test_bad_dpdk_settings_are_precise_errors(self):
        cases = [
            (["--server", "--backend", "dpdk"], 2, "--bind IP:PORT"),
            (["--server", "--bind", "10.0.0.1:1", "--dpdk-port", "x"], 2,
             "only with --backend dpdk"),
            (["--server", "--backend", "dpdk", "--bind", "10.0.0.1:1",
              "--block"], 2, "--block"),
            (["--server", "--backend", "dpdk", "--bind", "10.0.0.1:1",
              "--dpdk-next-hop-mac", "zz", "--dpdk-eal",
              f"{EAL} --file-prefix=bmbad{os.getpid()} --vdev=net_null0"],
             1, "next_hop_mac"),
            (["--server", "--backend", "dpdk", "--bind", "10.0.0.1:1",
              "--dpdk-port", "no_such_port", "--dpdk-eal",
              f"{EAL} --file-prefix=bmbad{os.getpid()} --vdev=net_null0"],
             1, "no_such_port"),
            (["--server", "--backend", "dpdk", "--bind", "10.0.0.1:1",
              "--dpdk-eal", "--no-such-eal-flag"], 1, "EAL"),
        ]
        try:
            for args, code, needle in cases:
                p = self.run_bin(args)
                self.assertEqual(p.returncode, code, f"{args}: {p.stderr}")
                self.assertIn(needle, p.stderr, f"{args}")
        finally:
            shutil.rmtree(f"/var/run/dpdk/bmbad{os.getpid()}",
                          ignore_errors=True)


if __name__ == "__main__":
    BIN = sys.argv.pop(1)
    unittest.main()
