#!/usr/bin/env python3
"""udp-blast (bench/udp_blast/) as two processes on 127.0.0.1.

Usage: udp_blast_loopback_test.py /path/to/udp-blast [unittest args]

Each case starts its own server (--once, on a port the kernel just handed
out) and kills it by PID if it is still alive at the end. Counts are small
and each process runs for a bounded time.
"""
import json
import socket
import subprocess
import sys
import time
import unittest

BIN = None


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [BIN, "server", "-b", f"127.0.0.1:{self.port}", "--once",
             "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.2)  # until the socket is bound

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()


def client(port, args, timeout=60):
    return subprocess.run(
        [BIN, "client", "-c", f"127.0.0.1:{port}", *args, "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        timeout=timeout)


class UdpBlastLoopbackTest(unittest.TestCase):
    def bw(self, extra):
        srv = Server()
        try:
            p = client(srv.port, ["bw", "-n", "2000", *extra])
        finally:
            srv.kill()
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def test_bw_reports_what_the_server_received(self):
        r = self.bw([])
        self.assertEqual(r["sent"], 2000)
        self.assertGreater(r["received"], 0)
        self.assertLessEqual(r["received"], r["sent"])
        self.assertEqual(r["copy_from"], 0)
        self.assertEqual(r["received_bytes"], r["received"] * 1472)

    def test_copy_from_sends_the_same_count_with_the_copy_on(self):
        r = self.bw(["--copy-from", "64K"])
        self.assertEqual(r["copy_from"], 65536)
        self.assertEqual(r["sent"], 2000)
        self.assertGreater(r["received"], 0)

    def test_iov_from_sends_whole_datagrams_from_two_iovecs(self):
        for gso in ("--gso", "--no-gso"):
            r = self.bw(["--iov-from", "64K", "-s", "1472", gso])
            self.assertEqual(r["iov_from"], 65536)
            self.assertEqual(r["copy_from"], 0)
            self.assertEqual(r["sent"], 2000)
            self.assertGreater(r["received"], 0)
            # Header iovec + payload iovec add up to the datagram size.
            self.assertEqual(r["received_bytes"], r["received"] * 1472)

    def test_copy_from_and_iov_from_exclude_each_other(self):
        p = client(1, ["bw", "--copy-from", "64K", "--iov-from", "64K"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("exclude each other", p.stderr)

    def test_copy_from_smaller_than_a_datagram_is_refused(self):
        p = client(1, ["bw", "--copy-from", "100"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("at least the datagram size", p.stderr)

    def test_copy_from_needs_a_size(self):
        p = client(1, ["bw", "--copy-from", "2X"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("--copy-from", p.stderr)


if __name__ == "__main__":
    BIN = sys.argv.pop(1)
    unittest.main()
