#!/usr/bin/env python3
"""Checks that the soak's log analysis would catch what it must: python3 test_soak_analysis.py"""
import json
import os
import sys
import tempfile
import types
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import soak  # noqa: E402


def entry(run, tile, fault=None, status=200, complete=True):
    return {"run": run, "path": f"/tiles/{tile}.pbf", "fault": fault, "status": status, "complete": complete,
            "bytes": 1, "expected": 1, "t": 0}


class TrafficTests(unittest.TestCase):
    def analyse(self, entries, kill_points):
        work = tempfile.mkdtemp()
        log = os.path.join(work, "server.log")
        with open(log, "w") as f:
            for e in entries:
                f.write(json.dumps(e) + "\n")
        fake = types.SimpleNamespace(server_log=log, kill_points=kill_points)
        return soak.Soak.traffic(fake, last_soak_run=max(e["run"] for e in entries))

    def test_a_committed_tile_requested_after_the_kill_is_a_needless_redownload(self):
        entries = [entry(1, "9/1/1"), entry(1, "9/1/2"), entry(2, "9/1/1"), entry(2, "9/1/3")]
        faults, retries, redownloaded, uncommitted = self.analyse(entries, [{"run": 1, "tiles": {"9/1/1"}}])
        self.assertEqual(redownloaded, ["9/1/1"])
        self.assertEqual(uncommitted, 0)

    def test_a_served_but_uncommitted_tile_is_counted_apart(self):
        entries = [entry(1, "9/1/1"), entry(1, "9/1/2"), entry(2, "9/1/2")]
        _, _, redownloaded, uncommitted = self.analyse(entries, [{"run": 1, "tiles": {"9/1/1"}}])
        self.assertEqual(redownloaded, [])
        self.assertEqual(uncommitted, 1)

    def test_faults_and_retries_within_a_run(self):
        entries = [entry(1, "9/1/1", fault="503", status=503), entry(1, "9/1/1"),
                   entry(2, "9/1/1", fault="html"), entry(2, "9/1/2")]
        faults, retries, _, _ = self.analyse(entries, [])
        self.assertEqual((faults, retries), (2, 1))

    def test_a_faulted_200_is_not_a_served_tile(self):
        entries = [entry(1, "9/1/1", fault="truncated"), entry(2, "9/1/1")]
        _, _, redownloaded, uncommitted = self.analyse(entries, [{"run": 1, "tiles": {"9/1/1"}}])
        self.assertEqual((redownloaded, uncommitted), ([], 0))


if __name__ == "__main__":
    unittest.main()
