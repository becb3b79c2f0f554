#!/usr/bin/env python3
"""braid-perf as two processes on 127.0.0.1: exit codes and the JSON report.

Usage: braid_perf_loopback_test.py /path/to/braid-perf [unittest args]

Every server is started by this test with --bind 127.0.0.1:0 and its own
--time-limit, its port read from its "listening on" line, and it is killed by
PID if still alive at the end of the case. Most cases use --block so they
behave on a loaded 2-core CI machine; one case busy-polls (the default).
"""
import json
import os
import re
import subprocess
import sys
import time
import unittest

BIN = None
IMPAIR = ["--loss", "0.05", "--dup", "0.05", "--reorder", "0.05"]


class Server:
    """A braid-perf --server child process on an ephemeral loopback port."""

    def __init__(self, extra=(), time_limit=90, bind="127.0.0.1:0"):
        self.proc = subprocess.Popen(
            [BIN, "--server", "--bind", bind, "--time-limit",
             str(time_limit), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stderr.readline()  # bounded: the server prints it first
        m = re.search(r"listening on (\S+)", line)
        if not m:
            self.kill()
            raise AssertionError(f"server did not start: {line!r}")
        self.addr = m.group(1)

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
            self.proc.wait()


def run_client(addr, args, timeout=120):
    p = subprocess.run([BIN, "--client", addr, "--json", *args],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def client_killed_mid_run(addr):
    """Starts a bw client against `addr` and SIGKILLs it after 1 s."""
    dead = subprocess.Popen(
        [BIN, "--client", addr, "--test", "bw", "-D", "30", "--block"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
    dead.kill()
    dead.wait()


class BraidPerfLoopbackTest(unittest.TestCase):

    def run_pair(self, client_args, server_args=()):
        """Runs one server + one client; returns (client JSON, server rc)."""
        srv = Server(server_args)
        try:
            rc, out, err = run_client(srv.addr, client_args)
            src, sout, serr = srv.wait()
        finally:
            srv.kill()
        self.assertEqual(rc, 0, f"client failed rc={rc}\n{out}\n{err}\n"
                         f"server: {serr}")
        self.assertEqual(src, 0, f"server failed rc={src}\n{serr}")
        report = json.loads(out)
        self.assertEqual(report["tool"], "braid-perf")
        self.assertTrue(report["ok"])
        return report

    def assert_clean(self, row, iters):
        self.assertTrue(row["ok"], row)
        self.assertEqual(row["iters"], iters)
        errors = row["errors"]
        for k in ("send_failed", "client_bad", "client_duplicates",
                  "server_bad", "server_duplicates", "server_missing"):
            self.assertEqual(errors[k], 0, (k, row))
        self.assertFalse(errors["time_limit"])
        self.assertGreater(row["msg_per_s"], 0)
        self.assertGreater(row["lat_p50_us"], 0)
        self.assertLessEqual(row["lat_p50_us"], row["lat_p99_us"])
        self.assertLessEqual(row["lat_p99_us"], row["lat_p999_us"])

    def assert_few_allocations(self, row):
        # Both sides recycle received buffers (Endpoint::Recycle): the
        # steady state allocates far less than one buffer per message.
        for side in ("client", "server"):
            self.assertLess(row[side]["allocations_per_message"], 0.1,
                            (side, row[side]))

    def test_bw_busy_poll_delivers_every_message_verified(self):
        rep = self.run_pair(["--test", "bw", "-s", "16384", "-n", "2000"])
        row = rep["results"][0]
        self.assert_clean(row, 2000)
        self.assertEqual(row["server_received"], 2000)
        self.assertEqual(rep["config"]["poll"], "busy")
        self.assertGreater(row["gbps"], 0)
        self.assertGreater(row["client"]["datagrams_sent"], 2000)

    def test_bw_blocking_64k_messages(self):
        rep = self.run_pair(
            ["--test", "bw", "-s", "65536", "-n", "2000", "--block"],
            ["--block"])
        row = rep["results"][0]
        self.assert_clean(row, 2000)
        self.assertEqual(rep["config"]["poll"], "block")
        self.assert_few_allocations(row)

    def test_bw_under_loss_dup_reorder_is_exactly_once_and_byte_exact(self):
        rep = self.run_pair(
            ["--test", "bw", "-s", "8192", "-n", "2000", "--block", *IMPAIR],
            ["--block", *IMPAIR])
        row = rep["results"][0]
        self.assert_clean(row, 2000)
        self.assertEqual(row["server_received"], 2000)
        # 5 % of datagrams were dropped: repair must have happened.
        self.assertGreater(row["retransmits"], 0)
        self.assertEqual(rep["config"]["loss"], 0.05)

    def test_lat_ping_pong_under_impairments(self):
        rep = self.run_pair(
            ["--test", "lat", "-s", "64", "-n", "2000", "--block", *IMPAIR],
            ["--block", *IMPAIR])
        row = rep["results"][0]
        self.assert_clean(row, 2000)
        # Warm-up pings are verified and counted by the server too.
        self.assertEqual(row["server_received"], 2000 + 200)

    def test_lat_ping_pong(self):
        rep = self.run_pair(["--test", "lat", "-n", "2000", "--block"],
                            ["--block"])
        row = rep["results"][0]
        self.assert_clean(row, 2000)
        self.assertEqual(row["size"], 64)
        self.assertEqual(row["window"], 1)
        self.assert_few_allocations(row)

    def test_rate_small_messages(self):
        # 100,000 messages: the first window's worth (1,024, and more when
        # the server falls behind on a loaded host) is the pools warming up,
        # which 20,000 messages did not amortise below the bound reliably.
        rep = self.run_pair(["--test", "rate", "-n", "100000", "--block"],
                            ["--block"])
        self.assert_clean(rep["results"][0], 100000)
        self.assert_few_allocations(rep["results"][0])

    def test_go_back_n_mode_under_loss(self):
        rep = self.run_pair(
            ["--test", "bw", "-s", "4096", "-n", "1000", "--mode", "gbn",
             "--block", "--loss", "0.02"],
            ["--block", "--mode", "gbn", "--loss", "0.02"])
        self.assert_clean(rep["results"][0], 1000)
        self.assertEqual(rep["config"]["mode"], "gbn")

    def test_size_sweep_reports_one_row_per_size(self):
        rep = self.run_pair(["--test", "bw", "-a", "--max-size", "4096",
                             "-n", "200", "--block"], ["--block"])
        sizes = [r["size"] for r in rep["results"]]
        self.assertEqual(sizes, [16, 32, 64, 128, 256, 512, 1024, 2048, 4096])
        for r in rep["results"]:
            self.assert_clean(r, 200)

    def test_duration_mode_and_stats(self):
        rep = self.run_pair(["--test", "bw", "-s", "1024", "-D", "0.5",
                             "--block", "--stats"], ["--block"])
        row = rep["results"][0]
        self.assertTrue(row["ok"])
        self.assertGreater(row["iters"], 0)
        self.assertIn("tx_syscalls", rep["stats"]["endpoint"])
        self.assertEqual(len(rep["stats"]["peers"]), 1)
        self.assertGreater(len(rep["stats"]["peers"][0]["paths"]), 0)

    def test_lat_duration_mode_measures_round_trips(self):
        # -D with --test lat once wrapped warm-up + iterations and ended
        # after the warm-up with iters 0 and exit 0.
        rep = self.run_pair(["--test", "lat", "-s", "64", "-D", "0.3",
                             "--block"], ["--block"])
        row = rep["results"][0]
        self.assertTrue(row["ok"], row)
        self.assertGreater(row["iters"], 200)
        self.assertGreater(row["lat_p50_us"], 0)

    def test_time_limit_reports_what_completed_and_says_why(self):
        srv = Server(["--block"])
        try:
            p = subprocess.run(
                [BIN, "--client", srv.addr, "--test", "bw", "-s", "1024",
                 "-D", "30", "--time-limit", "1", "--block"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                timeout=60)
            # The client's Bye ends the unfinished run at once (not after
            # the 5 s of silence that end a vanished client's run).
            start = time.monotonic()
            rc, _, err = srv.wait(timeout=10)
            self.assertLess(time.monotonic() - start, 3, err)
            self.assertEqual(rc, 1, err)
            self.assertIn("ended it unfinished", err)
        finally:
            srv.kill()
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("time limit exceeded before the run finished", p.stdout)
        self.assertNotIn("verification", p.stdout)
        row = p.stdout.splitlines()[1].split()
        self.assertGreater(int(row[2]), 0, p.stdout)  # iters completed

    def test_second_client_during_a_run_is_refused_and_the_first_finishes(self):
        srv = Server(["--block", "--persistent"])
        try:
            first = subprocess.Popen(
                [BIN, "--client", srv.addr, "--json", "--test", "bw", "-s",
                 "4096", "-D", "1.5", "--block"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(0.5)  # the first run is under way
            rc, out, err = run_client(srv.addr, ["--test", "rate", "-n",
                                                 "100", "--block"])
            self.assertEqual(rc, 1, err)
            self.assertIn("busy with another client's run",
                          json.loads(out)["results"][0]["errors"]["failure"])
            out1, err1 = first.communicate(timeout=60)
            self.assertEqual(first.returncode, 0, err1)
            row = json.loads(out1)["results"][0]
            self.assertTrue(row["ok"], row)
        finally:
            if first.poll() is None:
                first.kill()
                first.wait()
            srv.kill()

    def test_table_output_for_people(self):
        srv = Server(["--block"])
        try:
            p = subprocess.run(
                [BIN, "--client", srv.addr, "--test", "bw", "-n", "200",
                 "--block"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, timeout=120)
            src, _, _ = srv.wait()
        finally:
            srv.kill()
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(src, 0)
        header = p.stdout.splitlines()[0].split()
        for col in ("size", "iters", "Gbit/s", "msg/s", "p99", "retrans"):
            self.assertIn(col, header)

    def test_persistent_server_serves_clients_one_after_another(self):
        srv = Server(["--block", "--persistent"])
        try:
            for _ in range(2):
                rc, out, err = run_client(srv.addr, ["--test", "bw", "-n", "300",
                                                     "--block"])
                self.assertEqual(rc, 0, err)
                self.assert_clean(json.loads(out)["results"][0], 300)
            self.assertIsNone(srv.proc.poll(), "persistent server exited")
        finally:
            srv.kill()

    def test_persistent_server_outlives_a_client_killed_mid_run(self):
        # Its time limit ends the dead client's run, not the server.
        srv = Server(["--block", "--persistent"], time_limit=2)
        try:
            client_killed_mid_run(srv.addr)
            time.sleep(3)  # past the server's time limit
            self.assertIsNone(srv.proc.poll(), "persistent server exited")
            rc, out, err = run_client(srv.addr, ["--test", "bw", "-n", "300",
                                                 "--block"])
            self.assertEqual(rc, 0, err)
            self.assert_clean(json.loads(out)["results"][0], 300)
        finally:
            srv.kill()

    def test_server_ends_a_run_whose_client_went_silent(self):
        # A client killed mid-run sends no Bye; the server says so and
        # exits 1 about 5 s later instead of waiting out its time limit.
        srv = Server(["--block"], time_limit=60)
        try:
            client_killed_mid_run(srv.addr)
            start = time.monotonic()
            rc, _, err = srv.wait(timeout=30)
            waited = time.monotonic() - start
        finally:
            srv.kill()
        self.assertEqual(rc, 1, err)
        self.assertRegex(err, r"run \d+ abandoned: 127\.0\.0\.1:\d+ went silent")
        self.assertLess(waited, 20, err)

    def test_persistent_server_stops_on_sigterm_and_prints_stats(self):
        srv = Server(["--block", "--persistent", "--stats"])
        try:
            rc, out, err = run_client(srv.addr, ["--test", "bw", "-n", "200",
                                                 "--block"])
            self.assertEqual(rc, 0, err)
            srv.proc.terminate()  # SIGTERM
            src, sout, serr = srv.wait(timeout=10)
        finally:
            srv.kill()
        self.assertEqual(src, 0, serr)
        self.assertIn("stopped by signal", serr)
        m = re.search(r"datagrams_received\s+(\d+)", serr)
        self.assertIsNotNone(m, serr)
        self.assertGreaterEqual(int(m.group(1)), 200)

    def test_ipv6_loopback(self):
        try:
            srv = Server(["--block"], bind="[::1]:0")
        except AssertionError as e:
            self.skipTest(f"no IPv6 loopback here: {e}")
        try:
            rc, out, err = run_client(srv.addr, ["--test", "lat", "-n", "500",
                                                 "--block"])
            src, _, serr = srv.wait()
        finally:
            srv.kill()
        self.assertEqual(rc, 0, err)
        self.assertEqual(src, 0, serr)
        self.assert_clean(json.loads(out)["results"][0], 500)

    def test_ipv4_mapped_server_address(self):
        # [::ffff:127.0.0.1]:p names the IPv4 server 127.0.0.1:p; its
        # replies arrive from (and completions name) the IPv4 address.
        srv = Server(["--block"])
        try:
            port = srv.addr.rsplit(":", 1)[1]
            rc, out, err = run_client(f"[::ffff:127.0.0.1]:{port}",
                                      ["--test", "lat", "-n", "300",
                                       "--block", "--time-limit", "20"],
                                      timeout=60)
            src, _, serr = srv.wait()
        finally:
            srv.kill()
        self.assertEqual(rc, 0, f"{out}\n{err}")
        self.assertEqual(src, 0, serr)
        self.assert_clean(json.loads(out)["results"][0], 300)

    def test_bad_flags_exit_2_with_a_message(self):
        for args in (["--bogus"], ["--client"], ["--client", "127.0.0.1:1",
                     "--test", "nope"], ["--client", "127.0.0.1:1", "-s", "1"],
                     ["--client", "127.0.0.1:1", "--loss", "2"],
                     ["--client", "127.0.0.1:1", "-s", "64", "-a"], []):
            p = subprocess.run([BIN, *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, timeout=10)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn("braid-perf:", p.stderr)

    def test_client_without_server_gives_up_within_its_time_limit(self):
        start = time.monotonic()
        # Port 9 (discard) on loopback: nothing braid-speaking listens there.
        p = subprocess.run(
            [BIN, "--client", "127.0.0.1:9", "--time-limit", "3", "--json",
             "-n", "10"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, timeout=30)
        self.assertIn(p.returncode, (1, 3), p.stderr)
        self.assertLess(time.monotonic() - start, 15)
        out = json.loads(p.stdout)
        self.assertFalse(out["ok"])
        # Ended by the time limit (3 s < the 10 s a Hello is retried), and
        # still saying why.
        self.assertIn("no answer from server",
                      out["results"][0]["errors"]["failure"])
        # Said at once on stderr, not only at the end.
        self.assertIn("answers with ICMP errors", p.stderr)
        self.assertIn("retrying for up to 10 s", p.stderr)

    def test_server_without_client_exits_3_at_its_time_limit(self):
        srv = Server(time_limit=1)
        rc, _, err = srv.wait(timeout=20)
        self.assertEqual(rc, 3, err)
        self.assertIn("time limit", err)


if __name__ == "__main__":
    BIN = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
