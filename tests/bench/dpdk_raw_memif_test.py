#!/usr/bin/env python3
"""dpdk-raw (bench/dpdk_raw/) as two processes over net_memif, and alone
on net_null. No hugepages, no NIC, no root needed by DPDK itself.

Usage: dpdk_raw_memif_test.py /path/to/dpdk-raw [unittest args]

Each case uses its own EAL file prefix (with --no-shconf) and its own memif
socket file in a temporary directory; both are removed at the end, and a
server still running then is killed by PID. Runs are short and bounded.
"""
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

BIN = None
_ids = itertools.count()


def runtime_root():
    """Where the EAL puts its per-prefix runtime directories."""
    if os.geteuid() == 0:
        return "/var/run/dpdk"
    return os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk")


class Eal:
    """EAL arguments with a prefix of their own; cleanup() removes what the
    EAL left under it."""

    def __init__(self, vdev):
        self.prefix = f"drt{os.getpid()}_{next(_ids)}"
        self.args = (f"--no-huge -m 256 --no-pci --no-shconf "
                     f"--file-prefix={self.prefix} --vdev={vdev}")

    def cleanup(self):
        shutil.rmtree(os.path.join(runtime_root(), self.prefix),
                      ignore_errors=True)


class MemifPair:
    """A memif socket file in a fresh directory and the EAL arguments of
    both ends."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="dpdk_raw_")
        self.sock = os.path.join(self.dir, "memif.sock")
        self.use_bsize(None)
        self.server = None

    def use_bsize(self, bsize):
        """Both ends' memif devargs, with bsize=BSIZE unless None."""
        vdev = f"net_memif0,socket={self.sock},socket-abstract=no"
        if bsize is not None:
            vdev += f",bsize={bsize}"
        self.server_eal = Eal(vdev + ",role=server")
        self.client_eal = Eal(vdev + ",role=client")

    def start_server(self, extra=()):
        self.server = subprocess.Popen(
            [BIN, "server", "--once", "--json", "--link-timeout", "20",
             "--duration", "60", *extra, "--eal", self.server_eal.args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def client(self, args, timeout=60):
        return subprocess.run(
            [BIN, "client", "--json", *args, "--eal", self.client_eal.args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            timeout=timeout)

    def server_result(self, timeout=20):
        """The server's exit code and output once it ends by itself (code
        None if it is still running after `timeout` s; it is killed)."""
        try:
            code = self.server.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
            self.server.kill()
        out, err = self.server.communicate()
        return code, out, err

    def close(self):
        if self.server is not None and self.server.poll() is None:
            self.server.kill()
            self.server.communicate()
        self.server_eal.cleanup()
        self.client_eal.cleanup()
        shutil.rmtree(self.dir, ignore_errors=True)


def run_tool(args, timeout=30):
    return subprocess.run([BIN, *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout)


class DpdkRawMemifTest(unittest.TestCase):
    def setUp(self):
        self.pair = MemifPair()
        self.addCleanup(self.pair.close)

    def test_bw_counts_every_frame_the_client_sent(self):
        self.pair.start_server()
        p = self.pair.client(["--mode", "bw", "--duration", "1",
                              "--size", "1472"])
        code, out, err = self.pair.server_result()
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(code, 0, err)
        r = json.loads(p.stdout)
        self.assertEqual(r["tool"], "dpdk-raw")
        self.assertEqual(r["counted_by"], "receiver")
        self.assertEqual(r["frame_bytes"], 1472 + 42)
        self.assertGreater(r["sent"], 0)
        # memif pushes back instead of dropping: every frame arrives.
        self.assertEqual(r["received"], r["sent"])
        self.assertEqual(r["received_bytes"], r["received"] * 1472)
        self.assertGreater(r["gbps"], 0)
        self.assertGreater(r["pps"], 0)
        s = json.loads(out.strip().splitlines()[-1])
        self.assertEqual(s["received"], r["received"])
        self.assertEqual(sum(s["drops"].values()), 0)
        # The server removed its socket file when it closed the port.
        self.assertFalse(os.path.exists(self.pair.sock))

    def test_bw_count_sends_exactly_that_many_frames(self):
        self.pair.start_server()
        p = self.pair.client(["--mode", "bw", "--count", "5000",
                              "--size", "64"])
        self.pair.server_result()
        self.assertEqual(p.returncode, 0, p.stderr)
        r = json.loads(p.stdout)
        self.assertEqual(r["sent"], 5000)
        self.assertEqual(r["received"], 5000)

    def test_lat_reports_ordered_percentiles_and_the_server_echoed_all(self):
        self.pair.start_server()
        p = self.pair.client(["--mode", "lat", "--duration", "1"])
        code, out, err = self.pair.server_result()
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(code, 0, err)
        r = json.loads(p.stdout)
        self.assertEqual(r["size"], 64)
        self.assertGreater(r["iters"], 0)
        self.assertGreater(r["min_us"], 0)
        self.assertLessEqual(r["min_us"], r["p50_us"])
        self.assertLessEqual(r["p50_us"], r["p99_us"])
        self.assertLessEqual(r["p99_us"], r["max_us"])
        s = json.loads(out.strip().splitlines()[-1])
        self.assertEqual(s["mode"], "lat")
        self.assertEqual(s["echoed"], s["pings"])
        self.assertEqual(s["pongs"], s["pings"])

    def test_jumbo_frames_run_with_a_bsize_that_holds_them(self):
        self.pair.use_bsize(9216)
        self.pair.start_server()
        p = self.pair.client(["--mode", "bw", "--count", "2000",
                              "--size", "8972"])
        code, out, err = self.pair.server_result()
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(code, 0, err)
        r = json.loads(p.stdout)
        self.assertEqual(r["received"], 2000)
        self.assertEqual(r["received_bytes"], 2000 * 8972)

    def test_frames_larger_than_the_memif_buffer_are_refused(self):
        # memif corrupts frames chained over several buffers: the client
        # says so before it connects instead of counting garbage.
        for mode in ("bw", "lat"):
            p = self.pair.client(["--mode", mode, "--size", "2007"])
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("frames of 2049 bytes do not fit memif's buffers "
                          "(bsize 2048)", p.stderr)
            self.assertEqual(p.stdout, "")

    def test_client_without_a_server_gives_up_naming_the_port(self):
        t0 = time.monotonic()
        p = self.pair.client(["--mode", "lat", "--link-timeout", "1"])
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("port net_memif0", p.stderr)
        self.assertIn("no server on the socket", p.stderr)
        self.assertLess(time.monotonic() - t0, 15)
        self.assertEqual(p.stdout, "")

    def test_server_without_a_client_gives_up_naming_the_port(self):
        self.pair.start_server(["--link-timeout", "1"])
        code, _, err = self.pair.server_result()
        self.assertEqual(code, 1, err)
        self.assertIn("port net_memif0: link still down after 1 s", err)
        self.assertFalse(os.path.exists(self.pair.sock))


class DpdkRawAloneTest(unittest.TestCase):
    def eal(self, vdev):
        e = Eal(vdev)
        self.addCleanup(e.cleanup)
        return e.args

    def test_tx_only_on_net_null_reports_what_the_port_took(self):
        p = run_tool(["client", "--mode", "bw", "--tx-only", "--count",
                      "100000", "--size", "64", "--json", "--eal",
                      self.eal("net_null0")])
        self.assertEqual(p.returncode, 0, p.stderr)
        r = json.loads(p.stdout)
        self.assertEqual(r["counted_by"], "sender")
        self.assertEqual(r["sent"], 100000)
        self.assertIsNone(r["received"])
        self.assertGreater(r["pps"], 0)

    def test_unknown_port_is_named(self):
        p = run_tool(["client", "--port", "net_nope0", "--eal",
                      self.eal("net_null0")])
        self.assertEqual(p.returncode, 1)
        self.assertIn("no DPDK port named 'net_nope0'", p.stderr)

    def test_bad_eal_arguments_name_rte_eal_init(self):
        p = run_tool(["client", "--eal", self.eal("net_null0") + " --bogus"])
        self.assertEqual(p.returncode, 1)
        self.assertIn("rte_eal_init(", p.stderr)

    def test_bad_flags_exit_2_naming_the_flag(self):
        cases = [
            (["client", "--size", "47"], "--size: expected an integer in 48..9174"),
            (["client", "--size", "9175"], "--size: expected an integer"),
            (["client", "--mode", "pingpong"], "--mode: expected bw or lat"),
            (["client", "--duration", "0"], "--duration: expected a number"),
            (["client", "--burst", "0"], "--burst: expected an integer in 1..512"),
            (["client", "--tx-only", "--mode", "lat"], "--tx-only: needs --mode bw"),
            (["server", "--count", "10"], "--count: is a client flag"),
            (["client", "--once"], "--once: is a server flag"),
            (["client", "--frobnicate", "1"], "--frobnicate: unknown flag"),
            (["client", "--eal"], "--eal: needs a value"),
            (["blaster"], "unknown role 'blaster'"),
            ([], "missing role"),
        ]
        for args, message in cases:
            p = run_tool(args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(message, p.stderr, args)
            self.assertEqual(p.stdout, "", args)

    def test_help_prints_usage_to_stdout_and_exits_0(self):
        for args in (["--help"], ["-h"], ["client", "--help"]):
            p = run_tool(args)
            self.assertEqual(p.returncode, 0, (args, p.stderr))
            self.assertIn("usage:", p.stdout)
            self.assertEqual(p.stderr, "")


if __name__ == "__main__":
    BIN = sys.argv.pop(1)
    unittest.main()
