#!/usr/bin/env python3
"""udp-blast (bench/udp_blast/) as two processes on 127.0.0.1.

Usage: udp_blast_loopback_test.py /path/to/udp-blast [unittest args]

Each case starts its own server (--once, on a port the kernel just handed
out) and kills it by PID if it is still alive at the end. Counts are small
and each process runs for a bounded time.
"""
import json
import socket
import struct
import subprocess
import sys
import threading
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
        return self.proc.communicate()

    def exit_code(self, timeout=10):
        """The server's exit code once it ends by itself (None if it is
        still running after `timeout` s; it is killed then)."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None


def client(port, args, timeout=60):
    return subprocess.run(
        [BIN, "client", "-c", f"127.0.0.1:{port}", *args, "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        timeout=timeout)


def run_tool(args, timeout=10):
    return subprocess.run([BIN, *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout)


class LossyEchoServer:
    """A stand-in udp-blast server in this process: echoes pings as pongs
    except those whose seq is in `drop`; ignores everything else (like a
    server that predates the lat end marker)."""
    PING, PONG = 6, 7

    def __init__(self, drop):
        self.drop = set(drop)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while not self.stop.is_set():
            try:
                data, peer = self.sock.recvfrom(65536)
            except socket.timeout:
                continue
            if len(data) < 48:
                continue
            magic, typ = struct.unpack_from("=IB", data, 0)
            (seq,) = struct.unpack_from("=I", data, 12)
            if magic != 0x544C4255 or typ != self.PING or seq in self.drop:
                continue
            self.sock.sendto(data[:4] + bytes([self.PONG]) + data[5:], peer)

    def close(self):
        self.stop.set()
        self.thread.join(timeout=5)
        self.sock.close()


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

    def test_help_prints_usage_to_stdout_and_exits_0(self):
        for args in (["--help"], ["-h"], ["client", "--help"]):
            p = run_tool(args)
            self.assertEqual(p.returncode, 0, (args, p.stderr))
            self.assertIn("usage:", p.stdout)
            self.assertEqual(p.stderr, "")

    def test_unknown_role_still_exits_2(self):
        p = run_tool(["blaster"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown role 'blaster'", p.stderr)

    def test_count_0_is_refused_with_the_range(self):
        for mode in ("lat", "bw"):
            p = client(1, [mode, "-n", "0"])
            self.assertEqual(p.returncode, 2, mode)
            self.assertIn("-n must be at least 1", p.stderr)

    def test_size_out_of_range_is_refused_with_the_range(self):
        for mode in ("bw", "lat"):
            for size in ("0", "47", "65508", "-1"):
                p = client(1, [mode, "-s", size])
                self.assertEqual(p.returncode, 2, (mode, size))
                self.assertIn("-s must be 48..65507", p.stderr)

    def test_size_at_the_range_ends_is_accepted(self):
        for size in ("48", "65507"):
            srv = Server()
            try:
                p = client(srv.port, ["bw", "-n", "10", "-s", size])
            finally:
                srv.kill()
            self.assertEqual(p.returncode, 0, (size, p.stderr))
            self.assertEqual(json.loads(p.stdout)["size"], int(size))

    def test_bad_duration_is_refused(self):
        for d in ("0", "-1", "nan", "inf"):
            p = client(1, ["lat", "-D", d])
            self.assertEqual(p.returncode, 2, d)
            self.assertIn("-D:", p.stderr)

    def test_lat_without_a_server_gives_up_within_seconds(self):
        port = free_port()  # just freed: nothing listens there
        t0 = time.monotonic()
        p = client(port, ["lat", "-n", "100"], timeout=30)
        elapsed = time.monotonic() - t0
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn(f"no pong from server 127.0.0.1:{port}", p.stderr)
        self.assertLess(elapsed, 10)
        self.assertEqual(p.stdout, "")

    def test_lat_connect_without_a_server_says_nothing_listens(self):
        port = free_port()
        t0 = time.monotonic()
        p = client(port, ["lat", "-n", "100", "--connect"], timeout=30)
        elapsed = time.monotonic() - t0
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn(f"nothing listens on 127.0.0.1:{port}", p.stderr)
        self.assertLess(elapsed, 10)

    def test_lat_duration_runs_ping_pongs_for_that_long(self):
        srv = Server()
        try:
            t0 = time.monotonic()
            p = client(srv.port, ["lat", "-D", "0.5"], timeout=30)
            elapsed = time.monotonic() - t0
        finally:
            srv.kill()
        self.assertEqual(p.returncode, 0, p.stderr)
        r = json.loads(p.stdout)
        self.assertGreater(r["iters"], 0)
        self.assertGreaterEqual(elapsed, 0.5)

    def test_lat_duration_without_a_server_reports_no_pong(self):
        port = free_port()
        p = client(port, ["lat", "-D", "0.5"], timeout=30)
        self.assertEqual(p.returncode, 1)
        self.assertIn(f"no pong from server 127.0.0.1:{port}", p.stderr)

    def test_lat_counts_one_lost_ping_and_goes_on(self):
        # -n 20: pings 0 and 1 warm up, 2..21 are measured; 5 is dropped.
        # The stand-in never acks the end marker: the client still ends.
        echo = LossyEchoServer(drop=[5])
        try:
            p = client(echo.port, ["lat", "-n", "20"], timeout=30)
        finally:
            echo.close()
        self.assertEqual(p.returncode, 0, p.stderr)
        r = json.loads(p.stdout)
        self.assertEqual(r["lost"], 1)
        self.assertEqual(r["iters"], 19)

    def test_once_server_exits_after_a_lat_run(self):
        for extra in ([], ["--connect"]):
            srv = Server()
            try:
                p = client(srv.port, ["lat", "-n", "200", *extra])
                code = srv.exit_code(timeout=10)
            finally:
                out, _ = srv.kill()
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(code, 0, "server --once still running")
            r = json.loads(out.strip().splitlines()[-1])
            self.assertEqual(r["mode"], "lat")
            self.assertEqual(r["pings"], 220)  # 20 warm-up + 200
            self.assertEqual(r["pongs"], r["pings"])
            self.assertEqual(r["echoed"], r["pings"])

    def test_once_server_exits_after_a_bw_run(self):
        srv = Server()
        try:
            p = client(srv.port, ["bw", "-n", "100"])
            code = srv.exit_code(timeout=10)
        finally:
            out, _ = srv.kill()
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(code, 0, "server --once still running")
        r = json.loads(out.strip().splitlines()[-1])
        self.assertEqual(r["sent"], 100)


if __name__ == "__main__":
    BIN = sys.argv.pop(1)
    unittest.main()
