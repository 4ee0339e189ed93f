#!/usr/bin/env python3
"""tests/test_ab.py - bench/ab.py (interleaved before/after runs) on the host backend: the tree
against HEAD gives one row per (stream, workload, resource) with a ratio, folders serve as --base and
--new (--lag reaches the benchmark); a missing --new folder fails the build; a commit git does not know
and --rounds 0 are refused with status 2 and no table. Standard library only; needs git and gcc."""
import os
import re
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AB = os.path.join(ROOT, "bench", "ab.py")


def run(*args):
    return subprocess.run([sys.executable, AB] + list(args), cwd=ROOT, capture_output=True, text=True, timeout=600)


class AbTest(unittest.TestCase):
    def test_tree_against_head(self):
        r = run("--base", "HEAD", "--host", "--rounds", "1", "--stream", "created,foreign",
                "--workload", "lifo_256B", "--resource", "pool")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = [line for line in r.stdout.splitlines() if re.match(r"^\| (created|foreign) \| lifo_256B \| pool \|", line)]
        self.assertEqual(len(rows), 2, r.stdout)
        for row in rows:
            cells = [c.strip() for c in row.strip("|").split("|")]
            self.assertGreater(float(cells[3].split()[0]), 0.0)
            self.assertGreater(float(cells[4].split()[0]), 0.0)
            self.assertGreater(float(cells[5]), 0.0)
            self.assertGreater(float(cells[6]), 0.0)
        # each round's figure, in run order, under the table
        per_round = [line for line in r.stdout.splitlines() if re.match(r"^# rounds, (created|foreign) lifo_256B pool: old [0-9.]+; new [0-9.]+$", line)]
        self.assertEqual(len(per_round), 2, r.stdout)

    def test_folders_and_lag(self):
        # --base and --new as folders (no git needed there), each process pinned with --taskset
        r = run("--base", ROOT, "--new", ROOT, "--host", "--rounds", "1", "--taskset", "0",
                "--workload", "lifo_256B", "--resource", "pool")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("(taskset -c 0)", r.stdout)
        rows = [line for line in r.stdout.splitlines() if re.match(r"^\| foreign \| lifo_256B \| pool \|", line)]
        self.assertEqual(len(rows), 1, r.stdout)
        # --lag reaches the benchmark, which refuses it on the host backend: a failure, not a table
        r = run("--base", ROOT, "--new", ROOT, "--host", "--rounds", "1", "--lag",
                "--workload", "lifo_256B", "--resource", "pool")
        self.assertEqual(r.returncode, 1)
        self.assertIn("--lag needs CUDA", r.stderr)
        self.assertNotRegex(r.stdout, r"\| foreign \| lifo_256B")

    def test_missing_new_folder(self):
        r = run("--base", "HEAD", "--new", "/no/such/folder", "--host", "--rounds", "1")
        self.assertNotEqual(r.returncode, 0)
        self.assertNotIn("| stream |", r.stdout)

    def test_unknown_commit(self):
        r = run("--base", "no-such-commit-name", "--host")
        self.assertEqual(r.returncode, 2)
        self.assertIn("git cannot show", r.stderr)
        self.assertNotIn("| stream |", r.stdout)

    def test_parse_keeps_failed_cells_and_rmm_random_rows(self):
        # red team 47: an oom or error cell was dropped (the row vanished from the table, exit 0),
        # and rmm_random's rows (rmm_random_1000x1MiB) never matched
        sys.path.insert(0, os.path.join(ROOT, "bench"))
        try:
            import ab
        finally:
            sys.path.pop(0)
        got = ab.parse("lifo_256B pool 30.5 x\nchurn_small binning oom\nrmm_random_1000x1MiB pool 57.2 y\nnoise 1 2\n")
        self.assertEqual(got, {("lifo_256B", "pool"): 30.5, ("churn_small", "binning"): "oom",
                               ("rmm_random_1000x1MiB", "pool"): 57.2})

    def test_zero_rounds(self):
        r = run("--base", "HEAD", "--host", "--rounds", "0")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--rounds must be at least 1", r.stderr)


if __name__ == "__main__":
    from unittest_main import main  # (tests/, this script's folder, is sys.path[0])
    main(__name__)
