#!/usr/bin/env python3
"""Tests of tools/rmm_plot.py (standard library only): builds small logs and dumps, runs the command
as a user would, and reads the SVG back with xml.etree. Closes with "N passed, N failed" (what
tests/run.sh sums) and exits non-zero on any failure. Run: python3 tests/test_plot.py [-v]"""
import gzip
import importlib.util
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, "tools", "rmm_plot.py")
FIXTURE = os.path.join(ROOT, "tests", "plot", "pool_dump.json")
TRACE = os.path.join(ROOT, "bench", "traces", "resnet50_train.csv.gz")
SVG = "{http://www.w3.org/2000/svg}"
MiB = 1 << 20

spec = importlib.util.spec_from_file_location("rmm_plot", TOOL)
rmm_plot = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rmm_plot)


def run(*args):
    p = subprocess.run([sys.executable, TOOL] + [str(a) for a in args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def stamp(us):
    """HH:MM:SS.uuuuuu for microseconds since midnight (wrapping at 24 h)."""
    s, u = divmod(us, 1_000_000)
    return f"{s // 3600 % 24:02d}:{s // 60 % 60:02d}:{s % 60:02d}.{u:06d}"


def log_text(rows, start_us=11 * 3600 * 1_000_000, step_us=10, header="Thread,Time,Action,Pointer,Size,Stream"):
    """rows: (action, pointer, size) or (action, pointer, size, time_us)."""
    out = [header]
    t = start_us
    for r in rows:
        t = r[3] if len(r) > 3 else t + step_us
        out.append(f"1,{stamp(t)},{r[0]},{'0x%x' % r[1] if r[1] is not None else '(nil)'},{r[2]},0")
    return "\n".join(out) + "\n"


def true_peak(rows):
    live, peak, m = 0, 0, {}
    for r in rows:
        if r[0] == "allocate":
            m[r[1]] = r[2]
            live += r[2]
            peak = max(peak, live)
        elif r[0] == "free" and r[1] in m:
            live -= m.pop(r[1])
    return peak


UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def path_points(d):
    """The absolute points of an M/L/H/V/Z path."""
    pts, x, y = [], 0.0, 0.0
    for cmd, arg in re.findall(r"([MLHVZ])([^MLHVZ]*)", d):
        nums = [float(v) for v in re.findall(r"-?[\d.]+", arg)]
        if cmd in "ML":
            for i in range(0, len(nums), 2):
                x, y = nums[i], nums[i + 1]
                pts.append((x, y))
        elif cmd == "H":
            x = nums[0]
            pts.append((x, y))
        elif cmd == "V":
            y = nums[0]
            pts.append((x, y))
    return pts


class Picture:
    """A written SVG, parsed."""

    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.text = f.read()
        self.root = ET.fromstring(self.text)
        self.size = len(self.text.encode())

    def find_id(self, ident):
        for e in self.root.iter():
            if e.get("id") == ident:
                return e
        return None

    def texts(self, cls=None):
        return [e.text or "" for e in self.root.iter(SVG + "text") if cls is None or e.get("class") == cls]

    def all_text(self):
        return "\n".join(self.texts())

    def desc(self):
        return dict(kv.split("=", 1) for kv in self.root.find(SVG + "desc").text.split())

    def y_to_bytes(self):
        """The y axis as a function of pixel y, from the ticks' grid lines and labels."""
        ticks = []
        for g in self.root.iter(SVG + "g"):
            if g.get("class") == "ytick":
                y = float(g.find(SVG + "line").get("y1"))
                num, unit = g.find(SVG + "text").text.rsplit(" ", 1)
                ticks.append((y, float(num.replace(",", "")) * UNITS[unit]))
        (y0, v0), (y1, v1) = ticks[0], ticks[-1]
        return lambda y: v0 + (y - y0) * (v1 - v0) / (y1 - y0), abs((v1 - v0) / (y1 - y0))

    def drawn_peak(self, ident):
        """The highest value the series' path reaches, in bytes, and the bytes one pixel stands for."""
        ys = [y for _, y in path_points(self.find_id(ident).get("d"))]
        to_bytes, per_px = self.y_to_bytes()
        return to_bytes(min(ys)), per_px


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text, gz=False):
        path = os.path.join(self.dir, name)
        if gz:
            with gzip.open(path, "wt") as f:
                f.write(text)
        else:
            with open(path, "w") as f:
                f.write(text)
        return path

    def plot(self, *args):
        out = os.path.join(self.dir, "out.svg")
        rc, stdout, stderr = run(*args, "-o", out)
        self.assertEqual(rc, 0, stderr)
        self.assertNotIn("Traceback", stderr)
        pic = Picture(out)
        self.assertEqual(pic.root.tag, SVG + "svg")
        self.assertEqual(pic.root.get("version"), "1.1")
        return pic

    def fails(self, *args, expect):
        rc, stdout, stderr = run(*args, "-o", os.path.join(self.dir, "never.svg"))
        self.assertEqual(rc, 2, stderr)
        self.assertNotIn("Traceback", stderr)
        self.assertIn("rmm_plot: error:", stderr)
        self.assertRegex(stderr, expect)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "never.svg")))
        return stderr


# ---- timeline ----------------------------------------------------------------------------------

class Timeline(Base):
    def test_peak_value_and_place(self):
        rows = [("allocate", 0x1000, 3 * MiB), ("allocate", 0x2000, 5 * MiB), ("free", 0x1000, 3 * MiB),
                ("allocate", 0x3000, 7 * MiB), ("free", 0x2000, 5 * MiB), ("free", 0x3000, 7 * MiB)]
        pic = self.plot("timeline", self.write("a.csv", log_text(rows)))
        peak = true_peak(rows)  # 12 MiB, at event 4
        self.assertEqual(pic.desc()["peak_live_bytes"], str(peak))
        self.assertEqual(pic.desc()["peak_event"], "4")
        legend = " ".join(pic.texts("legend"))
        self.assertIn(f"({peak:,} B) at event 4 of 6", legend)
        self.assertIn("3 allocations, 3 frees", legend)
        drawn, per_px = pic.drawn_peak("live")
        self.assertLessEqual(abs(drawn - peak), per_px * 0.06)
        ring = pic.find_id("live-peak")
        ys = [y for _, y in path_points(pic.find_id("live").get("d"))]
        self.assertAlmostEqual(float(ring.get("cy")), min(ys), places=1)

    def test_narrow_spike_survives_downsampling(self):
        rng = random.Random(7)
        rows, live, ptr = [], [], 0x10000
        for i in range(60000):
            if i == 41234:
                rows.append(("allocate", 0xdead0000, 900 * MiB))
                rows.append(("free", 0xdead0000, 900 * MiB))
            elif live and (rng.random() < 0.5 or len(live) > 300):
                p, n = live.pop(rng.randrange(len(live)))
                rows.append(("free", p, n))
            else:
                n = rng.randrange(1, 4096) * 512
                ptr += n
                live.append((ptr, n))
                rows.append(("allocate", ptr, n))
        peak = true_peak(rows)
        self.assertGreater(peak, 900 * MiB)
        for extra in ([], ["--time"]):
            pic = self.plot("timeline", self.write("b.csv", log_text(rows)), *extra)
            drawn, per_px = pic.drawn_peak("live")
            self.assertLessEqual(abs(drawn - peak), per_px * 0.06, extra)
            self.assertEqual(pic.desc()["peak_live_bytes"], str(peak))
            self.assertLessEqual(len(path_points(pic.find_id("live").get("d"))), 4 * 1000 + 8)
            self.assertLess(pic.size, 200_000)

    def test_unknown_and_double_frees_are_counted_not_subtracted(self):
        rows = [("free", 0x9000, 4096), ("allocate", 0x1000, MiB), ("free", 0x1000, MiB),
                ("free", 0x1000, MiB), ("allocate", 0x2000, 2 * MiB), ("free", 0x7777, 512)]
        pic = self.plot("timeline", self.write("c.csv", log_text(rows)))
        self.assertIn("3 frees of pointers not live in the log (1.0 MiB), left out", pic.all_text())
        self.assertEqual(pic.desc()["unknown_frees"], "3")
        self.assertEqual(pic.desc()["peak_live_bytes"], str(2 * MiB))
        self.assertIn("2.0 MiB in 1 block still live at the end", " ".join(pic.texts("legend")))

    def test_reused_pointer_and_size_mismatch_are_reported(self):
        rows = [("allocate", 0x1000, MiB), ("allocate", 0x1000, 2 * MiB), ("free", 0x1000, 512)]
        pic = self.plot("timeline", self.write("d.csv", log_text(rows)))
        notes = pic.all_text()
        self.assertIn("1 allocation of a pointer already live", notes)
        self.assertIn("1 free whose Size differs", notes)
        self.assertEqual(pic.desc()["peak_live_bytes"], str(2 * MiB))

    def test_free_failure_rows_undo_only_the_free_they_follow(self):
        """rmm.h's logging adaptor writes "free failure" after a free that failed below it: a free
        that took a live block is undone (the block live again, its own size); a failure after a
        double free or a free of a wrong pointer undoes nothing (a review's find: it made a block)."""
        rows = [("allocate", 0x1000, MiB), ("free", 0x1000, MiB), ("free failure", 0x1000, MiB),
                ("allocate", 0x2000, 2 * MiB), ("free", 0x1000, MiB),                        # the retry
                ("free", 0x1000, MiB), ("free failure", 0x1000, MiB),                        # a double free
                ("free", 0x2100, 512), ("free failure", 0x2100, 512),                        # a wrong pointer
                ("free", 0x2000, 99), ("free failure", 0x2000, 99)]                          # a wrong size
        pic = self.plot("timeline", self.write("ff.csv", log_text(rows)))
        self.assertEqual(pic.desc()["peak_live_bytes"], str(3 * MiB))
        self.assertIn("2.0 MiB in 1 block still live at the end", " ".join(pic.texts("legend")))

    def test_failures_are_marked(self):
        rows = [("allocate", 0x1000, 4 * MiB), ("allocate failure", None, 64 * MiB),
                ("allocate failure", None, 8 * MiB), ("free", 0x1000, 4 * MiB)]
        pic = self.plot("timeline", self.write("e.csv", log_text(rows)))
        self.assertEqual(pic.desc()["failures"], "2")
        self.assertIn("allocate failures: 2; the largest asked for 64.0 MiB at event 2 with 4.0 MiB live",
                      " ".join(pic.texts("legend")))
        self.assertGreaterEqual(sum(1 for e in pic.root.iter(SVG + "line") if e.get("class") == "failure"), 1)

    def test_upstream_ratio_and_merge_by_time(self):
        t0 = 22 * 3600 * 1_000_000
        main = [("allocate", 0x100, 1 * MiB, t0 + 10), ("allocate", 0x200, 1 * MiB, t0 + 20),
                ("free", 0x100, 1 * MiB, t0 + 30), ("free", 0x200, 1 * MiB, t0 + 40),
                ("allocate", 0x300, 2 * MiB, t0 + 50), ("free", 0x300, 2 * MiB, t0 + 60)]
        # the pool under it: a 2 MiB chunk, a second 1 MiB chunk, trimmed, then 3 MiB
        upstream = [("allocate", 0xa000, 2 * MiB, t0 + 10), ("allocate", 0xb000, 1 * MiB, t0 + 45),
                    ("free", 0xa000, 2 * MiB, t0 + 48), ("allocate", 0xc000, 2 * MiB, t0 + 50),
                    ("free", 0xb000, 1 * MiB, t0 + 70)]
        m = self.write("main.csv", log_text(main))
        u = self.write("up.csv.gz", log_text(upstream), gz=True)
        for extra in ([], ["--time"]):
            pic = self.plot("timeline", m, "--upstream", u, *extra)
            legend = " ".join(pic.texts("legend"))
            self.assertIn("held peak / live peak = 1.500", legend)
            self.assertIn(f"peak 3.0 MiB ({3 * MiB:,} B)", legend)
            self.assertEqual(pic.desc()["peak_held_bytes"], str(3 * MiB))
            drawn, per_px = pic.drawn_peak("held")
            self.assertLessEqual(abs(drawn - 3 * MiB), per_px * 0.06)
            self.assertIsNotNone(pic.find_id("held-peak"))

    def test_upstream_across_midnight(self):
        t0 = 24 * 3600 * 1_000_000 - 25  # the main log starts before midnight, the upstream's first row after
        main = [("allocate", 0x100, MiB, t0 + 30), ("allocate", 0x200, MiB, t0 + 40), ("free", 0x100, MiB, t0 + 50)]
        upstream = [("allocate", 0xa000, 4 * MiB, t0 + 30)]
        pic = self.plot("timeline", self.write("m.csv", log_text(main)), "--upstream",
                        self.write("u.csv", log_text(upstream)), "--time")
        self.assertIn("held peak / live peak = 2.000", " ".join(pic.texts("legend")))

    def test_time_axis_wraps_past_midnight(self):
        start = 24 * 3600 * 1_000_000 - 5_000_000
        rows = [("allocate", 0x1000 + i, 512 * (i + 1)) for i in range(100)]
        pic = self.plot("timeline", self.write("f.csv", log_text(rows, start_us=start, step_us=100_000)), "--time")
        ticks = [float(t.replace(",", "")) for t in pic.texts("xtick")]
        self.assertEqual(ticks, sorted(ticks))
        self.assertGreaterEqual(ticks[-1], 8)  # about 10 s, not a day
        self.assertLess(ticks[-1], 11)

    def test_gzip_and_extra_columns(self):
        rows = [("allocate", 0x1000, 1000), ("allocate", 0x2000, 3000), ("free", 0x1000, 1000)]
        text = log_text(rows, header="Thread,Time,Action,Pointer,Size,Stream,Location")
        text = "\n".join(line + ",app.c:12" if i else line for i, line in enumerate(text.splitlines())) + "\n"
        pic = self.plot("timeline", self.write("g.csv.gz", text, gz=True), "--title", "a <title> & more")
        self.assertEqual(pic.desc()["peak_live_bytes"], "4000")
        self.assertEqual(pic.root.find(SVG + "title").text, "a <title> & more")

    def test_real_trace(self):
        peak, live, m = 0, 0, {}
        with gzip.open(TRACE, "rt") as f:
            next(f)
            for line in f:
                _, _, action, ptr, size, _ = line.split(",")
                if action == "allocate":
                    m[ptr] = int(size)
                    live += int(size)
                    peak = max(peak, live)
                elif ptr in m:
                    live -= m.pop(ptr)
        pic = self.plot("timeline", TRACE)
        self.assertIn(f"({peak / MiB:,.1f} MiB, {peak:,} B)", " ".join(pic.texts("legend")))
        drawn, per_px = pic.drawn_peak("live")
        self.assertLessEqual(abs(drawn - peak), per_px * 0.06)
        self.assertLess(pic.size, 200_000)
        # the README's picture (make pictures) is of this trace: valid, small, the same peak
        docs = Picture(os.path.join(ROOT, "docs", "resnet50_train_timeline.svg"))
        self.assertEqual(docs.desc()["peak_live_bytes"], str(peak))
        self.assertLess(docs.size, 200_000)

    def test_bad_input(self):
        self.fails("timeline", os.path.join(self.dir, "missing.csv"), expect=r"cannot read log .*missing\.csv")
        self.fails("timeline", FIXTURE, expect=r"is not an RMM CSV log: its first line is")
        self.fails("timeline", self.write("empty.csv", ""), expect=r"is not an RMM CSV log")
        self.fails("timeline", self.write("h.csv", "Thread,Time,Action,Pointer,Size,Stream\n"), expect=r"no events")
        # a last row cut off (a process killed mid-write) is left out and noted, not refused (red
        # team 33); the same row complete but broken is still refused
        for tail in ("1005", "1,11:00:00.000003,allocate,0x400000,8388"):  # cut in Thread, in Size
            cut = self.plot("timeline", self.write("cut.csv", log_text([("allocate", 0x1000, 10)]) + tail))
            self.assertIn("the last row is cut off", " ".join(cut.texts("note")))
            self.assertEqual(cut.desc()["events"], "1")
            self.assertEqual(cut.desc()["peak_live_bytes"], "10")
        bad = log_text([("allocate", 0x1000, 10)]) + "1,11:00:00.000001,allocate,0x2000,ten,0\n"
        self.fails("timeline", self.write("bad.csv", bad), expect=r"bad\.csv:3: not an RMM log row")
        odd = log_text([("allocate", 0x1000, 10)]).replace("allocate", "reserve")
        self.fails("timeline", self.write("odd.csv", odd), expect=r"unknown action 'reserve'")
        self.fails("timeline", self.write("bin.csv", "\x00\xff\xfe garbage"), expect=r"not an RMM CSV log")
        with open(os.path.join(self.dir, "cut.csv.gz"), "wb") as f:
            f.write(gzip.compress(log_text([("allocate", 0x1000, 10)] * 50).encode())[:40])
        self.fails("timeline", os.path.join(self.dir, "cut.csv.gz"), expect=r"cannot read log")
        good = self.write("ok.csv", log_text([("allocate", 0x1000, 10)]))
        self.fails("timeline", good, "--upstream", os.path.join(self.dir, "nope.csv"), expect=r"cannot read upstream log")
        rc, _, stderr = run("timeline", good)  # no -o: argparse's usage error, also exit 2
        self.assertEqual(rc, 2)
        self.assertNotIn("Traceback", stderr)
        rc, _, stderr = run("timeline", good, "-o", os.path.join(self.dir, "no", "such", "dir.svg"))
        self.assertEqual(rc, 2)
        self.assertRegex(stderr, r"^rmm_plot: error: cannot write .*dir\.svg")
        # sizes that are not sizes: a traceback (OverflowError, status 1) for 1 and 400 zeros; "-5"
        # and "1_000" were read as numbers (red team 47)
        for size in ("1" + "0" * 400, "-5", "1_000", "18446744073709551616"):
            for action in ("allocate", "allocate failure"):
                text = log_text([("allocate", 0x1000, 10)]) + "1,11:00:00.000009,%s,0x2000,%s,0\n" % (action, size)
                self.fails("timeline", self.write("size.csv", text), expect=r"size\.csv:3: not an RMM log row")

    def test_a_bad_time_after_the_first_row_is_refused(self):
        # only the first row's Time was checked: a later row's garbage was drawn as the peak's time,
        # or with --time a traceback (infinity, NaN: OverflowError, ValueError, status 1) or read
        # as a time ("12+34-56.789012", minute 99, negative seconds, non-ASCII digits)
        for t in ("garbage", "", "12+34-56.789012", "11:00:5e1234567", "11:00:      nan", "11:00:-5.000001",
                  "11:00:00.00000x", "99:99:99.000000", "1\u0661:00:00.000002", "11:00:00.000002 "):
            text = log_text([("allocate", 0x1000, 10)]) + "1,%s,allocate,0x2000,20,0\n" % t
            text += "1,11:00:00.000300,free,0x1000,10,0\n"
            path = self.write("t.csv", text)
            for opts in ((), ("--time",), ("--upstream", path)):
                self.fails("timeline", path, *opts, expect=r"t\.csv:3: not an RMM log row \(bad time")
        # a valid time still reads: a one-digit hour, no fraction, a one-digit fraction
        ok = log_text([("allocate", 0x1000, 10)]) + "1,9:59:59,allocate,0x2000,20,0\n1,23:59:59.5,free,0x2000,20,0\n"
        for opts in ((), ("--time",)):
            self.assertEqual(self.plot("timeline", self.write("ok.csv", ok), *opts).desc()["events"], "3")

    def test_a_location_quoted_across_lines(self):
        # rmmWriteLog quotes a call site's file name with a line break in it across two lines
        # (RFC 4180); timeline refused the log (red team 47)
        text = ("Thread,Time,Action,Pointer,Size,Stream,Location\n"
                "1,11:00:00.000001,allocate,0x1000,256,0,\"gen/a\nb.c:7\"\n"
                "1,11:00:00.000002,allocate,0x2000,512,0,app.c:3\n"
                "1,11:00:00.000003,free,0x1000,256,0,\"x,\ny.c:9\"\n")
        pic = self.plot("timeline", self.write("loc.csv", text))
        self.assertEqual(pic.desc()["events"], "3")
        self.assertEqual(pic.desc()["peak_live_bytes"], "768")

    def test_text_that_xml_cannot_hold(self):
        # a control character in the title, the log's name or a row's Time was written as it was:
        # exit 0 and an SVG that is not XML; a file name's undecodable byte was a traceback
        # (UnicodeEncodeError) (red team 50)
        rows = [("allocate", 0x1000, 10)]
        self.plot("timeline", self.write("ok.csv", log_text(rows)), "--title", "a\x01b")
        self.plot("timeline", self.write("c\x01.csv", log_text(rows)))
        bad_time = log_text(rows) + "1,11:00:00.0000\x02,allocate,0x2000,50,0\n"  # the peak's time
        self.fails("timeline", self.write("t.csv", bad_time), expect=r"t\.csv:3: not an RMM log row \(bad time")  # (red team 51)
        name = os.fsdecode(b"x\xff.csv")
        self.plot("timeline", self.write(name, log_text(rows)))
        doc = dump(pool([{"address": "0x1\x03", "size": 512, "blocks": [{"offset": 0, "size": 512, "state": "used"}]}]))
        self.plot("map", self.write("d.json", json.dumps(doc)))
        # standard output closed: a traceback (AttributeError)
        p = subprocess.run([sys.executable, TOOL, "timeline", self.write("ok.csv", log_text(rows)), "-o", "-"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120,
                           preexec_fn=lambda: os.close(1))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        self.assertIn("rmm_plot: error: cannot write '-'", p.stderr)

    def test_a_quote_never_closed_is_not_the_rest_of_the_log(self):
        # a row with a stray quote swallowed every row after it as one "quoted field": the picture
        # was drawn, exit 0, from the rows before it only (red team 50)
        rows = [("allocate", 0x1000 + i, 10) for i in range(20)]
        more = [("allocate", 0x9000 + i, 1000) for i in range(30)]
        text = log_text(rows)[:-1] + ',"x.c:1\n' + log_text(more).split("\n", 1)[1]
        self.fails("timeline", self.write("stray.csv", text), expect=r"stray\.csv:21: not an RMM log row \(a quoted field that is never closed")
        # a last row cut inside its quoted Location, after the line break in it, is still a cut row
        cut = self.plot("timeline", self.write("cutq.csv", log_text(rows) + '1,11:00:01.000000,allocate,0x1,5,0,"gen/a\n'))
        self.assertIn("the last row is cut off", " ".join(cut.texts("note")))
        self.assertEqual(cut.desc()["events"], "20")


# ---- map -------------------------------------------------------------------------------------------

def node(type_, upstream=None, **extra):
    n = {"type": type_, "name": type_, "address": "0x%x" % (0x5500 + hash(type_) % 4096 * 16),
         "config": {}, "counters": {}, "upstream": upstream}
    n.update(extra)
    return n


def pool(chunks, streams=None, type_="pool", upstream=None):
    return node(type_, upstream or node("cuda"), streams=streams or [
        {"id": 0, "handle": "0x0", "kind": "legacy", "alive": True, "lazy": True, "free_blocks": 0, "free_bytes": 0}],
        chunks=chunks)


def dump(resource, version=1):
    return {"schema": "rmm.h resource dump", "version": version, "rmm_version": "0.1.0", "resource": resource}


class Map(Base):
    def write_dump(self, doc, name="d.json"):
        return self.write(name, json.dumps(doc))

    def test_fixture_descends_through_adaptors(self):
        pic = self.plot("map", FIXTURE)
        text = pic.all_text()
        self.assertIn("drawn: upstream.upstream, pool 'pool' at 0x5581a0c03000 (the first sub-allocator below the top resource)", text)
        self.assertIn("used 5 blocks, 9.5 MiB (9,961,216 B); free 5 blocks, 4.5 MiB (4,718,848 B), largest 2.0 MiB", text)
        self.assertIn("in the blocks: 3 chunks, 14.0 MiB (14,680,064 B)", text)
        self.assertIn("free, stream 1 (foreign, handle 0x5581a0d00000): 2.0 MiB", text)
        self.assertIn("free, stream 0 (legacy, lazy events, handle 0x0): 2.5 MiB", text)
        self.assertIn("counters: pool_bytes=14.0 MiB", text)
        self.assertNotIn("note: counters say", text)
        d = pic.desc()
        self.assertEqual((d["used_bytes"], d["free_bytes"], d["chunk_bytes"]), ("9961216", "4718848", "14680064"))
        self.assertEqual(d["merged_blocks"], "1")  # the 256-byte free block
        self.assertTrue(any(e.get("class") == "used" for e in pic.root.iter(SVG + "path")))
        self.assertEqual(sum(1 for e in pic.root.iter(SVG + "path") if e.get("class") == "free"), 2)

    def test_path_picks_another_and_binning(self):
        shared = pool([{"address": "0x7f0000000000", "size": 4 * MiB,
                        "blocks": [{"offset": 0, "size": 4 * MiB, "state": "free", "stream": 0}]}])
        fixed = pool([{"address": "0x7f1000000000", "size": MiB,
                       "blocks": [{"offset": i * 4096, "size": 4096, "state": "used" if i % 3 else "free",
                                   "stream": None if i % 3 else 0} for i in range(256)]}], type_="fixed_size", upstream=shared)
        binning = node("binning", shared, bins=[{"bytes": 4096, "resource": fixed}, {"bytes": 65536, "resource": None}])
        path = self.write_dump(dump(node("statistics", binning)))
        pic = self.plot("map", path)
        self.assertIn("drawn: upstream.upstream, pool", pic.all_text())
        self.assertIn("other sub-allocators: upstream.bins.0 (fixed_size)", pic.all_text())
        pic = self.plot("map", path, "--path", "upstream.bins.0")
        self.assertIn("drawn: upstream.bins.0, fixed_size", pic.all_text())
        self.assertIn("used 170 blocks", pic.all_text())
        pic = self.plot("map", path, "--path", "resource.upstream.bins[0].resource")
        self.assertIn("drawn: upstream.bins.0, fixed_size", pic.all_text())
        self.fails("map", path, "--path", "upstream.upstream.upstream", expect=r"is a cuda resource, which has no chunks")
        self.fails("map", path, "--path", "upstream.bins.1", expect=r"no resource in bin 1")
        self.fails("map", path, "--path", "sideways", expect=r"unknown step 'sideways'")
        self.fails("map", self.write_dump(dump(node("logging", node("cuda")))), expect=r"no sub-allocator .* logging > cuda")

    def test_small_blocks_merge_and_totals_stay_exact(self):
        blocks, off = [], 0
        rng = random.Random(3)
        used = free = 0
        while off < 256 * MiB:
            size = min(rng.choice([256, 512, 4096, 16384]), 256 * MiB - off)
            state = "used" if rng.random() < 0.6 else "free"
            blocks.append({"offset": off, "size": size, "state": state, "stream": None if state == "used" else rng.randrange(3)})
            used += size if state == "used" else 0
            free += size if state == "free" else 0
            off += size
            if len(blocks) == 20000:
                blocks.append({"offset": off, "size": 256 * MiB - off, "state": "free", "stream": 0})
                free += 256 * MiB - off
                break
        streams = [{"id": i, "handle": "0x%x" % (0x1000 * i), "kind": "library", "alive": True, "lazy": False,
                    "free_blocks": 0, "free_bytes": 0} for i in range(3)]
        pic = self.plot("map", self.write_dump(dump(pool([{"address": "0x7f0000000000", "size": 256 * MiB, "blocks": blocks}], streams))))
        d = pic.desc()
        self.assertEqual(int(d["used_bytes"]), used)
        self.assertEqual(int(d["free_bytes"]), free)
        self.assertEqual(int(d["used_blocks"]) + int(d["free_blocks"]), len(blocks))
        self.assertEqual(int(d["merged_blocks"]), len(blocks) - 1)  # all but the last: 1 px > 64 KiB here
        self.assertIn(f"{int(d['merged_blocks']):,} blocks narrower than a pixel merged for drawing", pic.all_text())
        self.assertLess(pic.size, 400_000)

    def test_counter_mismatch_and_gaps_are_reported(self):
        p = pool([{"address": "0x7f0000000000", "size": 4 * MiB,
                   "blocks": [{"offset": 0, "size": MiB, "state": "used", "stream": None},
                              {"offset": 2 * MiB, "size": MiB, "state": "free", "stream": 5}]}])
        p["counters"] = {"used_bytes": 2 * MiB}
        pic = self.plot("map", self.write_dump(dump(p)))
        text = pic.all_text()
        self.assertIn(f"note: counters say used_bytes={2 * MiB:,}, the blocks add up to {MiB:,}", text)
        self.assertIn("in no block of the dump: 2.0 MiB", text)
        self.assertIn("free, stream 5 (not in the streams list): 1.0 MiB", text)

    def test_long_chunks_wrap(self):
        chunks = [{"address": "0x%x" % (0x7f0000000000 + i * (1 << 32)), "size": s,
                   "blocks": [{"offset": 0, "size": s // 2, "state": "used", "stream": None},
                              {"offset": s // 2, "size": s - s // 2, "state": "free", "stream": 0}]}
                  for i, s in enumerate([2 * MiB, 64 * MiB, 1024 * MiB])]
        pic = self.plot("map", self.write_dump(dump(pool(chunks))))
        self.assertIn("continued, from offset", pic.all_text())

    def test_bad_dumps(self):
        self.fails("map", os.path.join(self.dir, "missing.json"), expect=r"cannot read dump")
        self.fails("map", self.write("n.json", "{not json"), expect=r"is not JSON")
        self.fails("map", self.write_dump({"hello": 1}), expect=r"is not an rmm.h resource dump")
        self.fails("map", self.write_dump([1, 2]), expect=r"is not an rmm.h resource dump")
        self.fails("map", self.write_dump(dump(pool([]), version=2)), expect=r"schema version 2; this rmm_plot reads version 1")
        self.fails("map", self.write_dump({"schema": "rmm.h resource dump", "version": 1}), expect=r"no \"resource\" object")
        bad = pool([{"address": "0x1", "size": MiB, "blocks": [{"offset": 0, "size": 512, "state": "used", "stream": None},
                                                             {"offset": 512, "state": "free"}]}])
        self.fails("map", self.write_dump(dump(bad)), expect=r"resource\.chunks\[0\]\.blocks\[1\]: not a block")
        self.fails("map", self.write_dump(dump(pool([{"address": "0x1", "size": "big", "blocks": []}]))),
                   expect=r"chunks\[0\]\.size: expected a non-negative integer")
        self.fails("map", self.write_dump(dump(pool([{"address": "0x1", "size": 512,
                                                     "blocks": [{"offset": 0, "size": 512, "state": "lost"}]}]))),
                   expect=r"state 'lost'")
        self.fails("map", self.write_dump(dump(pool([{"address": "0x1", "size": 512,
                                                     "blocks": [{"offset": -256, "size": 512, "state": "used"}]}]))),
                   expect=r"blocks\[0\]: not a block .* negative")
        self.fails("map", TRACE, expect=r"is not JSON")
        # past 2^64, and a stream id that is a list: tracebacks until red team 47
        self.fails("map", self.write_dump(dump(pool([{"address": "0x1", "size": 10 ** 400, "blocks": []}]))),
                   expect=r"chunks\[0\]\.size: expected a non-negative integer")
        odd_id = pool([{"address": "0x1", "size": 1024, "blocks": [{"offset": 0, "size": 512, "state": "used", "stream": None},
                                                                  {"offset": 512, "size": 512, "state": "free", "stream": [1]}]}],
                      streams=[{"id": [1], "handle": "0x1", "kind": "foreign", "alive": True, "lazy": True,
                                "free_blocks": 1, "free_bytes": 512}])
        self.plot("map", self.write_dump(dump(odd_id)))  # (drawn: an id is only a key)
        # JSON nested past the recursion limit: a traceback (RecursionError) (red team 50)
        self.fails("map", self.write("deep.json", "[" * 100000 + "]" * 100000), expect=r"nested too deeply")
        # a stream list that is not a list, a stream's count that is not a number: tracebacks; a
        # block's offset or size that is a float or a bool was drawn as one (red team 50)
        self.fails("map", self.write_dump(dump(pool([{"address": "0x1", "size": 512, "blocks": []}], streams=7))),
                   expect=r"resource\.streams: not a list")
        self.fails("map", self.write_dump(dump(pool([{"address": "0x1", "size": 512, "blocks": []}],
                                                     streams=[{"id": 0, "free_blocks": "x", "free_bytes": 0}]))),
                   expect=r"streams\[0\]\.free_blocks: expected a non-negative integer")
        for off, size in ((1.5, 256), (True, 256), (0, 1e300)):
            self.fails("map", self.write_dump(dump(pool([{"address": "0x1", "size": 512, "blocks": [
                {"offset": off, "size": size, "state": "used"}]}]))), expect=r"blocks\[0\]: not a block .* not an integer")


# ---- the downsampler, against brute force ------------------------------------------------------------

class Downsample(unittest.TestCase):
    def test_every_extreme_of_every_column_is_kept(self):
        rng = random.Random(11)
        for n, ncol in ((10, 1000), (5000, 100), (100000, 700)):
            xs = sorted(rng.uniform(0, 50) for _ in range(n))
            vs = [rng.randrange(1 << 30) for _ in range(n)]
            x0, x1 = 0.0, 50.0
            pts = rmm_plot.step_columns(xs, vs, x0, x1, ncol)
            by_col = {}
            for c, v in pts[1:]:
                by_col.setdefault(c, []).append(v)
            want = {}
            for x, v in zip(xs, vs):
                c = min(int((x - x0) * ncol / (x1 - x0)), ncol - 1)
                want.setdefault(c, []).append(v)
            self.assertEqual(max(v for _, v in pts), max(vs))
            self.assertEqual(min(v for _, v in pts), min(vs + [0]))
            for c, values in want.items():
                self.assertIn(max(values), by_col.get(c, []), (n, c))
                self.assertIn(min(values), by_col.get(c, []), (n, c))
            self.assertLessEqual(len(pts), 4 * ncol + 1)


if __name__ == "__main__":
    from unittest_main import main  # (tests/, this script's folder, is sys.path[0])
    main(__name__)
