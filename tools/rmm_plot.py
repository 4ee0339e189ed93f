#!/usr/bin/env python3
"""rmm_plot: SVG pictures of rmm.h's allocation logs and resource dumps. Python 3.8+, standard library only.

  rmm_plot.py timeline LOG.csv[.gz] [--upstream UPSTREAM.csv[.gz]] [--time] [--title T] -o OUT.svg
      Live bytes over time from a CSV log in RMM's format (rmm_logging_adaptor_create, rmmWriteLog,
      RMM's logging_resource_adaptor): header Thread,Time,Action,Pointer,Size,Stream. The x axis is
      the event index, or wall time with --time. The peak is marked with its value and when it
      happened; allocate failures are marked (a red bar from the live bytes up to what the failed
      request would have made them). --upstream takes a second log of the same run, written by a
      logging adaptor under the sub-allocator (it logs the pool's chunk allocations): it is merged
      by Time and drawn as "held from upstream", with its peak and the ratio held peak / live peak.
      Frees of pointers that are not live in the log (never allocated in it, or freed twice) are
      counted and reported, and change nothing.

  rmm_plot.py map DUMP.json[.gz] [--path upstream.upstream] [--title T] -o OUT.svg
      A map of a sub-allocator (pool, arena, fixed_size) from the JSON that rmm_resource_dump_json
      writes (schema "rmm.h resource dump", version 1): each upstream chunk a bar, wrapped onto
      several rows when long; used blocks in one colour, free blocks in a colour per stream; the
      counters as a caption. If the top resource is an adaptor or a binning resource, the first
      sub-allocator below it (breadth first, upstream before bins) is drawn and the caption says
      which; --path picks another: dot-separated steps from the top resource, each "upstream",
      "bins.N" (bin N's resource) or "resource" (a no-op, so paths may start with it).

Both downsample to at most a few thousand drawn points and keep every extreme exact: the timeline
draws each pixel column's first, lowest, highest and last value, so a peak is drawn at its true
height; the map draws each pixel column of a bar split by the bytes of used and free blocks in it.

Exit status: 0 when the picture was written; 2 for bad usage or input (one line on stderr says why).
"""
import argparse
import bisect
import gzip
import io
import json
import math
import os
import re
import sys
import textwrap
import zlib

LOG_COLUMNS = ["Thread", "Time", "Action", "Pointer", "Size", "Stream"]
DUMP_SCHEMA = "rmm.h resource dump"
DUMP_VERSION = 1
SUBALLOCATORS = ("pool", "arena", "fixed_size")

FONT = 'font-family="DejaVu Sans,Verdana,Arial,sans-serif"'
LIVE_COLOUR = "#4e79a7"
HELD_COLOUR = "#f28e2b"
FAIL_COLOUR = "#d62728"
USED_COLOUR = "#4e79a7"
UNLISTED_COLOUR = "#eeeeee"
STREAM_COLOURS = ["#8cd17d", "#f1ce63", "#ff9d9a", "#a0cbe8", "#d4a6c8", "#ffbe7d",
                  "#86bcb6", "#b6992d", "#fabfd2", "#9d7660", "#bab0ac", "#59a14f"]


class PlotError(Exception):
    """Bad input or usage: main prints the message and exits with 2."""


# ---- formatting ---------------------------------------------------------------------------------

# what XML 1.0 has no character for (C0 controls but tab and line breaks, U+FFFE, U+FFFF) and lone
# surrogates (a file name's undecodable bytes): written as they were, the SVG was not XML (a title, a
# name or a time with a control character) or not UTF-8 (a traceback); red team 50
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def esc(text):
    return _NOT_XML.sub("\ufffd", str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                        .replace('"', "&quot;"))


def fmt_int(n):
    return f"{n:,}"


def fmt_bytes(n):
    """Bytes with a binary unit: '512 B', '37.5 KiB', '5,607.3 MiB', '7.20 GiB'."""
    a = abs(n)
    if a < 1024:
        return f"{n:,} B"
    if a < 1 << 20:
        return f"{n / 1024:,.1f} KiB"
    if a < 1 << 30:
        return f"{n / (1 << 20):,.1f} MiB"
    if a < 1 << 40:
        return f"{n / (1 << 30):,.2f} GiB"
    return f"{n / (1 << 40):,.2f} TiB"


def plural(n, word, words=None):
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


def fmt_in_unit(v, unit, usize):
    """Bytes in the axis unit, for labels that are read against the axis."""
    if usize == 1:
        return f"{v:,} B"
    return f"{v / usize:,.{2 if usize >= 1 << 30 else 1}f} {unit}"


def fmt_num(v):
    """A coordinate: an integer where it is one, else one decimal."""
    r = round(v, 1)
    return str(int(r)) if r == int(r) else f"{r:.1f}"


def nice_step(span, target):
    """A 1-2-2.5-5 x 10^k step that cuts span into about target pieces."""
    if span <= 0:
        return 1.0
    raw = span / target
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def fmt_tick(v, step):
    """A tick label with as many decimals as the step needs."""
    d = 0
    while d < 6 and abs(step * 10 ** d - round(step * 10 ** d)) > 1e-6:
        d += 1
    return f"{v:,.{d}f}"


def byte_unit(peak):
    for name, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if peak >= 2 * size or (name == "KiB" and peak >= size):
            return name, size
    return "B", 1


# ---- input ----------------------------------------------------------------------------------------

def open_input(path, what):
    """A text stream over path, gunzipped if it starts with gzip's magic bytes."""
    try:
        raw = open(path, "rb")
    except OSError as e:
        raise PlotError(f"cannot read {what} '{path}': {e.strerror or e}") from None
    if raw.peek(2)[:2] == b"\x1f\x8b":
        raw.close()
        return gzip.open(path, "rt", encoding="utf-8", errors="strict", newline=None)
    return io.TextIOWrapper(raw, encoding="utf-8", errors="strict", newline=None)


# H:MM:SS or HH:MM:SS, an optional fraction; ASCII digits. Every row's Time is checked with it
# (until red team 51 only the first row's was: a later row's garbage was drawn as the peak's time,
# and with --time read as a time or a traceback: "11:00:5e1234567" infinity, "11:00:      nan")
TIME_OK = re.compile(r"(?:[01]?[0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)(?:\.[0-9]+)?").fullmatch


def time_seconds(t):
    """Seconds past midnight of a Time that TIME_OK accepted."""
    return int(t[:2]) * 3600 + int(t[3:5]) * 60 + float(t[6:]) if len(t) == 15 and t[2] == ":" else _time_slow(t)


def _time_slow(t):
    h, m, s = t.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


class Log:
    """One RMM CSV log, reduced to the live bytes after each event."""

    def __init__(self, path):
        self.path = path
        self.values = []         # live bytes after event i
        self.times = None        # seconds (monotonic, past midnight unwrapped) of event i, when asked for
        self.first_time = self.last_time = ""
        self.allocations = self.frees = 0
        self.peak = 0
        self.peak_index = -1     # the first event at which live bytes reached the peak
        self.peak_time = ""
        self.failures = []       # (event index, requested bytes, live bytes then)
        self.unknown_frees = 0   # frees of pointers not live in the log
        self.unknown_free_bytes = 0
        self.reused_pointers = 0  # allocations of a pointer already live (a free missing from the log)
        self.size_mismatches = 0  # frees whose Size differs from the allocation's
        self.live_at_end = 0
        self.blocks_at_end = 0
        self.cut_last_row = False  # the last row had no end (the writing process stopped mid-row)


def read_log(path, what="log", want_times=False, reference=None):
    """Parses an RMM CSV log. reference: a time in seconds near the log's first event (another log
    of the same run), so that both unwrap midnight the same way."""
    log = Log(path)
    try:
        f = open_input(path, what)
        with f:
            header = f.readline()
            cols = header.strip().lstrip("\ufeff").split(",")
            if cols[:6] != LOG_COLUMNS:
                shown = header.strip()[:60] or "(empty)"
                raise PlotError(f"{what} '{path}' is not an RMM CSV log: its first line is '{shown}', "
                                f"expected '{','.join(LOG_COLUMNS)}'")
            _read_rows(log, f, want_times, reference)
    except (OSError, EOFError, zlib.error) as e:
        raise PlotError(f"cannot read {what} '{path}': {e}") from None
    except UnicodeDecodeError:
        raise PlotError(f"{what} '{path}' is not an RMM CSV log: it is not text") from None
    return log


def _size(text):
    """A Size field: digits only (no sign, no "_"), below 2**64; ValueError otherwise."""
    if not (text.isdigit() and text.isascii()) or len(text) > 20:
        raise ValueError(f"bad size '{text.strip()}'")
    n = int(text)
    if n >= 1 << 64:
        raise ValueError(f"bad size '{text}'")
    return n


def _read_rows(log, f, want_times, reference):
    values = log.values
    append = values.append
    times = [] if want_times else None
    tappend = times.append if want_times else None
    live_map = {}
    last_freed = {}  # pointer -> the size its last matched free took (for a "free failure" row)
    live = peak = 0
    peak_index = -1
    peak_time = ""
    day = 0.0
    last_t = -math.inf
    allocations = frees = unknown = unknown_bytes = reused = mismatches = 0
    failures = []
    i = 0
    lineno = 1
    t = ""
    pending = ""
    pending_lineno = 0
    for lineno, line in enumerate(f, 2):
        if pending or ('"' in line and line.count('"') % 2):  # rmmWriteLog's Location, quoted across a line break (a file name with one)
            if not pending:
                pending_lineno = lineno
            pending += line
            if pending.count('"') % 2 and line.endswith("\n"):
                continue
            line, pending = pending, ""
        if not line.endswith("\n"):  # only the last line can lack one: a writer killed mid-row
            if line.strip():          # (a row cut in its Size would parse, with the wrong size)
                log.cut_last_row = True
            continue
        try:
            p = line.split(",", 6)
            a = p[2]
            if a == "allocate":
                size = _size(p[4])
                last_freed.pop(p[3], None)
                old = live_map.get(p[3])
                if old is not None:
                    reused += 1
                    live -= old
                live_map[p[3]] = size
                live += size
                allocations += 1
                if live > peak:
                    peak = live
                    peak_index = i
                    peak_time = p[1]
            elif a == "free":
                size = live_map.pop(p[3], None)
                frees += 1
                if size is not None:
                    last_freed[p[3]] = size
                else:  # (a failure after it is this free's: nothing to undo)
                    last_freed.pop(p[3], None)
                if size is None:
                    unknown += 1
                    unknown_bytes += _size(p[4])
                else:
                    live -= size
                    if _size(p[4]) != size:
                        mismatches += 1
            elif a == "allocate failure":
                failures.append((i, _size(p[4]), live))
            elif a == "free failure":  # rmm.h: the free logged before it failed
                size = last_freed.pop(p[3], None)
                if size is not None and p[3] not in live_map:  # that free took a live block: live again
                    live_map[p[3]] = size
                    live += size
                    frees -= 1
            else:
                raise ValueError(f"unknown action '{a}'")
            t = p[1]
            if not TIME_OK(t):
                raise ValueError(f"bad time '{t}'")
            if tappend is not None:
                s = time_seconds(t) + day
                if i == 0 and reference is not None:
                    if s - reference > 43200:
                        day = -86400.0
                        s -= 86400.0
                    elif s - reference < -43200:
                        day = 86400.0
                        s += 86400.0
                if s < last_t:
                    if s < last_t - 43200:  # past midnight
                        day += 86400.0
                        s += 86400.0
                    else:  # rows of several threads, a little out of order: keep time monotonic
                        s = last_t
                last_t = s
                tappend(s)
            if i == 0:
                log.first_time = t
            append(live)
            i += 1
        except (IndexError, ValueError) as e:
            if not line.strip():
                continue
            why = str(e) if str(e).startswith(("unknown action", "bad time")) else "not Thread,Time,Action,Pointer,Size,Stream"
            raise PlotError(f"{log.path}:{lineno}: not an RMM log row ({why}): '{line.strip()[:80]}'") from None
    if pending:  # a quote never closed: the last row cut inside its quoted Location, or a broken row
        if pending.count("\n") > 1:  # (that swallowed every row after it: the log was drawn without them)
            raise PlotError(f"{log.path}:{pending_lineno}: not an RMM log row (a quoted field that is never closed, "
                            f"{plural(pending.count(chr(10)), 'line')} to the end of the log): '{pending.splitlines()[0].strip()[:80]}'")
        log.cut_last_row = True
    log.times = times
    log.last_time = t
    log.peak, log.peak_index, log.peak_time = peak, peak_index, peak_time
    log.allocations, log.frees = allocations, frees
    log.unknown_frees, log.unknown_free_bytes = unknown, unknown_bytes
    log.reused_pointers, log.size_mismatches = reused, mismatches
    log.failures = failures
    log.live_at_end, log.blocks_at_end = live, len(live_map)


# ---- downsampling -------------------------------------------------------------------------------

def step_columns(xs, vs, x0, x1, ncol, start=0):
    """Downsamples the step function that takes value vs[i] from xs[i] (xs non-decreasing) to the
    next change, over [x0, x1] cut into ncol pixel columns. Returns (column, value) points in order:
    for each column holding changes, the value entering it, its lowest and highest values in the
    order they came, and the value leaving it; so every extreme is drawn exactly. O(ncol log n)
    plus C-speed min/max over slices."""
    n = len(xs)
    pts = [(0, start)]
    if n == 0:
        return pts
    scale = ncol / (x1 - x0)
    prev = start
    i = 0
    while i < n:
        c = int((xs[i] - x0) * scale)
        if c >= ncol:
            c = ncol - 1
        if c < 0:
            c = 0
        if c == ncol - 1:
            j = n
        else:
            j = bisect.bisect_left(xs, x0 + (c + 1) / scale, i)
            if j <= i:
                j = i + 1
        seg = vs[i:j]
        lo = min(seg)
        hi = max(seg)
        if seg.index(lo) <= seg.index(hi):
            col = (prev, lo, hi, seg[-1])
        else:
            col = (prev, hi, lo, seg[-1])
        for v in col:
            if pts[-1] != (c, v):
                pts.append((c, v))
        prev = seg[-1]
        i = j
    return pts


def path_from_points(pts, xmap, ymap):
    """An SVG path over (x, y) points, with H and V where it can (compact, exact)."""
    out = []
    cx = cy = None
    for x, v in pts:
        px = xmap(x)
        py = ymap(v)
        if cx is None:
            out.append(f"M{fmt_num(px)},{fmt_num(py)}")
        elif px == cx and py == cy:
            continue
        elif px == cx:
            out.append(f"V{fmt_num(py)}")
        elif py == cy:
            out.append(f"H{fmt_num(px)}")
        else:
            out.append(f"L{fmt_num(px)},{fmt_num(py)}")
        cx, cy = px, py
    return "".join(out)


# ---- timeline -------------------------------------------------------------------------------------

PLOT_LEFT, PLOT_WIDTH, PLOT_TOP, PLOT_HEIGHT = 88, 1000, 48, 380


def timeline(args):
    want_times = args.time or args.upstream is not None
    log = read_log(args.log, "log", want_times)
    n = len(log.values)
    if n == 0:
        raise PlotError(f"log '{args.log}' has a header and no events: nothing to draw")
    up = None
    if args.upstream is not None:
        up = read_log(args.upstream, "upstream log", True, reference=log.times[0])
        if up.values and (up.times[0] > log.times[-1] + 1 or up.times[-1] < log.times[0] - 1):
            print(f"rmm_plot: warning: the upstream log ({up.first_time} to {up.last_time}) does not overlap the log "
                  f"({log.first_time} to {log.last_time}) in time: are they of the same run?", file=sys.stderr)

    ncol = PLOT_WIDTH
    if args.time:
        xs = log.times
        x0 = log.times[0]
        x1 = log.times[-1]
        if up is not None and up.values:
            x0 = min(x0, up.times[0])
            x1 = max(x1, up.times[-1])
        if x1 - x0 < 1e-6:
            x1 = x0 + 1e-6
        x1 += (x1 - x0) / ncol  # room for the last change's column
        up_xs = up.times if up is not None else None
    else:
        xs = range(n)
        x0, x1 = 0.0, float(n)
        up_xs = None
        if up is not None:
            # each upstream event at the main log's event index it comes before; on a tie of times
            # chunks are taken before and given back after the log's events of that microsecond
            mt = log.times
            up_xs = []
            last = 0
            for k, t in enumerate(up.times):
                if k and up.values[k] < up.values[k - 1]:
                    x = bisect.bisect_right(mt, t)
                else:
                    x = bisect.bisect_left(mt, t)
                if x < last:
                    x = last
                up_xs.append(x)
                last = x
    live_pts = step_columns(xs, log.values, x0, x1, ncol)
    held_pts = step_columns(up_xs, up.values, x0, x1, ncol) if up is not None else None

    top = max(log.peak, up.peak if up is not None else 0)
    if top == 0:  # nothing allocated: scale to the failed requests, if any
        top = max([live + size for _, size, live in log.failures] + [1])
    unit, usize = byte_unit(top)
    ystep = nice_step(top * 1.08 / usize, 6)
    if usize == 1:
        ystep = max(1, math.ceil(ystep))
    ymax_units = math.ceil(top * 1.08 / usize / ystep) * ystep
    ymax = ymax_units * usize
    L, W, T, H = PLOT_LEFT, PLOT_WIDTH, PLOT_TOP, PLOT_HEIGHT

    def ymap(v):
        return T + H - v / ymax * H

    def cmap(c):
        return L + c

    def col_of(x):
        c = int((x - x0) / (x1 - x0) * ncol)
        return min(max(c, 0), ncol - 1)

    title = args.title or f"{os.path.basename(args.log)}: memory over time"
    parts = []
    add = parts.append
    # axes and grid
    add(f'<g {FONT} font-size="11" fill="#333">')
    k = 0
    while k * ystep <= ymax_units + 1e-9:
        y = ymap(k * ystep * usize)
        add(f'<g class="ytick"><line x1="{L}" y1="{fmt_num(y)}" x2="{L + W}" y2="{fmt_num(y)}" stroke="#e5e5e5"/>'
            f'<text x="{L - 6}" y="{fmt_num(y + 4)}" text-anchor="end">{esc(fmt_tick(k * ystep, ystep))} {unit}</text></g>')
        k += 1
    if args.time:
        span = x1 - x0
        tunit, tdiv = ("min", 60.0) if span >= 600 else ("s", 1.0)
        xstep = nice_step(span / tdiv, 8)
        xlabel = f"time since the first event, {log.first_time} ({tunit})"
        origin = log.times[0]
        first_k = math.ceil((x0 - origin) / tdiv / xstep - 1e-9)
        xticks = []
        k = first_k
        while (origin + k * xstep * tdiv) <= x1 + 1e-9:
            xticks.append((origin + k * xstep * tdiv, fmt_tick(k * xstep, xstep)))
            k += 1
    else:
        xstep = max(1, nice_step(n, 8))
        xlabel = "events (rows of the log)"
        xticks = []
        k = 0
        while k * xstep <= n:
            xticks.append((k * xstep, fmt_tick(k * xstep, xstep)))
            k += 1
    for x, label in xticks:
        px = L + (x - x0) / (x1 - x0) * W
        if px > L + W + 0.5:
            continue
        add(f'<line x1="{fmt_num(px)}" y1="{T + H}" x2="{fmt_num(px)}" y2="{T + H + 5}" stroke="#333"/>')
        add(f'<text class="xtick" x="{fmt_num(px)}" y="{T + H + 18}" text-anchor="middle">{esc(label)}</text>')
    add(f'<text x="{L + W / 2:g}" y="{T + H + 36}" text-anchor="middle">{esc(xlabel)}</text>')
    add(f'<text x="16" y="{T + H / 2:g}" text-anchor="middle" transform="rotate(-90 16 {T + H / 2:g})">bytes ({unit})</text>')
    add("</g>")

    # series
    d = path_from_points(live_pts + [(ncol, log.values[-1])], cmap, ymap)
    add(f'<path id="live" d="{d}H{L + W}V{T + H}H{L}Z" fill="{LIVE_COLOUR}" fill-opacity="0.3" '
        f'stroke="{LIVE_COLOUR}" stroke-width="1" stroke-linejoin="round"/>')
    if held_pts is not None:
        last = up.values[-1] if up.values else 0
        d = path_from_points(held_pts + [(ncol, last)], cmap, ymap)
        add(f'<path id="held" d="{d}" fill="none" stroke="{HELD_COLOUR}" stroke-width="1.5" stroke-linejoin="round"/>')

    # failures: one mark per pixel column, for its largest request
    fail_cols = {}
    for idx, size, live in log.failures:
        c = col_of(xs[idx])
        if c not in fail_cols or size > fail_cols[c][0]:
            fail_cols[c] = (size, live)
    for c in sorted(fail_cols):
        size, live = fail_cols[c]
        ya = ymap(live)
        yb = max(ymap(min(live + size, ymax)), T)
        add(f'<line class="failure" x1="{cmap(c)}" y1="{fmt_num(ya)}" x2="{cmap(c)}" y2="{fmt_num(yb)}" '
            f'stroke="{FAIL_COLOUR}" stroke-width="1.5"/>')
        add(f'<circle cx="{cmap(c)}" cy="{fmt_num(yb)}" r="2.5" fill="{FAIL_COLOUR}"/>')

    # peaks: a dashed line at the height, a ring at the place, the value beside it
    labels_at = []

    def peak_mark(ident, value, c, colour, label):
        y = ymap(value)
        ty = y - 6
        for (oc, oy) in labels_at:  # keep clear of the other peak's label
            if abs(oc - c) < 220 and abs(oy - ty) < 13:
                ty = oy - 14
        labels_at.append((c, ty))
        add(f'<line x1="{L}" y1="{fmt_num(y)}" x2="{L + W}" y2="{fmt_num(y)}" stroke="{colour}" '
            f'stroke-width="0.8" stroke-dasharray="4,3"/>')
        add(f'<circle id="{ident}" cx="{cmap(c)}" cy="{fmt_num(y)}" r="4.5" fill="none" stroke="{colour}" stroke-width="1.5"/>')
        right = c < ncol * 0.6
        tx = cmap(c) + (8 if right else -8)
        anchor = "start" if right else "end"
        for paint in ('fill="#ffffff" stroke="#ffffff" stroke-width="3" stroke-linejoin="round"', f'fill="{colour}"'):
            add(f'<text {FONT} font-size="11" font-weight="bold" {paint} x="{fmt_num(tx)}" y="{fmt_num(ty)}" '
                f'text-anchor="{anchor}">{esc(label)}</text>')

    def when(index, tstr):
        return f"event {fmt_int(index + 1)} of {fmt_int(n)}, {tstr}"

    live_peak_col = col_of(xs[log.peak_index]) if log.peak_index >= 0 else 0
    if up is not None and up.peak_index >= 0:
        held_peak_col = col_of(up_xs[up.peak_index])
        peak_mark("held-peak", up.peak, held_peak_col, "#b25f10", f"held peak {fmt_in_unit(up.peak, unit, usize)}")
    if log.peak_index >= 0:
        peak_mark("live-peak", log.peak, live_peak_col, "#1f3f66", f"peak {fmt_in_unit(log.peak, unit, usize)}")
    # frame last, over the series' edges
    add(f'<rect x="{L}" y="{T}" width="{W}" height="{H}" fill="none" stroke="#333"/>')

    # legend
    legend = []
    def exact(v):  # the legend's figure beside the axis unit: MiB too under GiB (the unit tables use), and bytes
        mib = f"{v / (1 << 20):,.1f} MiB, " if usize > 1 << 20 else ""
        return f"{fmt_in_unit(v, unit, usize)} ({mib}{fmt_int(v)} B)"
    legend.append((LIVE_COLOUR, f"live bytes: peak {exact(log.peak)} at "
                   f"{when(log.peak_index, log.peak_time) if log.peak_index >= 0 else 'no allocation'}; "
                   f"{fmt_int(log.allocations)} allocations, {fmt_int(log.frees)} frees; "
                   f"{fmt_bytes(log.live_at_end)} in {plural(log.blocks_at_end, 'block')} still live at the end"))
    if up is not None:
        ratio = f"{up.peak / log.peak:.3f}" if log.peak else "n/a"
        if up.peak_index >= 0:
            upwhen = f"{up.peak_time} (upstream event {fmt_int(up.peak_index + 1)} of {fmt_int(len(up.values))})"
        else:
            upwhen = "never (no allocation in the upstream log)"
        legend.append((HELD_COLOUR, f"held from upstream ({os.path.basename(args.upstream)}): peak {exact(up.peak)} "
                       f"at {upwhen}; held peak / live peak = {ratio}"))
    if log.failures:
        big = max(log.failures, key=lambda f: f[1])
        legend.append((FAIL_COLOUR, f"allocate failures: {fmt_int(len(log.failures))}; the largest asked for "
                       f"{fmt_bytes(big[1])} at event {fmt_int(big[0] + 1)} with {fmt_bytes(big[2])} live "
                       f"(each bar rises from the live bytes by the bytes asked for)"))
    if up is not None and up.failures:
        legend.append((FAIL_COLOUR, f"upstream allocate failures: {fmt_int(len(up.failures))}"))
    notes = []
    for lg, name in ((log, ""), (up, "upstream log: ")):
        if lg is None:
            continue
        if lg.unknown_frees:
            notes.append(f"{name}{plural(lg.unknown_frees, 'free')} of pointers not live in the log "
                         f"({fmt_bytes(lg.unknown_free_bytes)}), left out")
        if lg.reused_pointers:
            notes.append(f"{name}{plural(lg.reused_pointers, 'allocation')} of a pointer already live "
                         f"(a free missing from the log): the earlier block counted as freed")
        if lg.size_mismatches:
            notes.append(f"{name}{plural(lg.size_mismatches, 'free')} whose Size differs from the allocation's "
                         f"(the allocation's counted)")
        if lg.cut_last_row:
            notes.append(f"{name}the last row is cut off (its writer stopped mid-row), left out")
    notes.append(f"drawn from {plural(n, 'event')}"
                 + (f" and {plural(len(up.values), 'upstream event')}" if up is not None else "")
                 + "; each pixel column shows the lowest and highest value of its events, so peaks are exact")
    ly = T + H + 60
    add(f'<g {FONT} font-size="12" fill="#222">')
    for colour, text in legend:
        for k, line in enumerate(textwrap.wrap(text, 150)):
            if k == 0:
                add(f'<rect x="{L}" y="{ly - 10}" width="14" height="10" fill="{colour}"/>')
            add(f'<text class="legend" x="{L + 22}" y="{ly}">{esc(line)}</text>')
            ly += 17
    for note in notes:
        for line in textwrap.wrap(note, 160):
            add(f'<text class="note" x="{L + 22}" y="{ly}" fill="#555">{esc(line)}</text>')
            ly += 16
    add("</g>")
    height = ly + 4
    width = L + W + 24
    desc = (f"peak_live_bytes={log.peak} peak_event={log.peak_index + 1} events={n} failures={len(log.failures)} "
            f"unknown_frees={log.unknown_frees}")
    if up is not None:
        desc += f" peak_held_bytes={up.peak} upstream_events={len(up.values)}"
    write_svg(args.output, width, height, title, desc, parts)


def write_svg(path, width, height, title, desc, parts, title_x=PLOT_LEFT):
    head = (f'<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{width}" height="{fmt_num(height)}" '
            f'viewBox="0 0 {width} {fmt_num(height)}">\n'
            f'<title>{esc(title)}</title>\n<desc>{esc(desc)}</desc>\n'
            f'<rect width="100%" height="100%" fill="#ffffff"/>\n'
            f'<text {FONT} font-size="16" font-weight="bold" x="{title_x}" y="28" fill="#111">{esc(title)}</text>\n')
    text = head + "\n".join(parts) + "\n</svg>\n"
    try:
        if path == "-":
            if sys.stdout is None:  # (closed: a traceback until red team 50)
                raise OSError("standard output is closed")
            sys.stdout.write(text)
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    except OSError as e:
        raise PlotError(f"cannot write '{path}': {e.strerror or e}") from None


# ---- dumps ---------------------------------------------------------------------------------------

def load_dump(path):
    f = open_input(path, "dump")
    try:
        with f:
            doc = json.load(f)
    except UnicodeDecodeError:
        raise PlotError(f"dump '{path}' is not JSON: it is not text") from None
    except json.JSONDecodeError as e:
        raise PlotError(f"dump '{path}' is not JSON: {e}") from None
    except RecursionError:  # (arrays or objects nested past Python's recursion limit: a traceback until red team 50)
        raise PlotError(f"dump '{path}' is not a resource dump: its JSON is nested too deeply to read") from None
    except (OSError, EOFError, zlib.error) as e:
        raise PlotError(f"cannot read dump '{path}': {e}") from None
    if not isinstance(doc, dict) or doc.get("schema") != DUMP_SCHEMA:
        raise PlotError(f"dump '{path}' is not an rmm.h resource dump (it has no \"schema\": \"{DUMP_SCHEMA}\")")
    version = doc.get("version")
    if version != DUMP_VERSION:
        raise PlotError(f"dump '{path}' has schema version {json.dumps(version)}; this rmm_plot reads version {DUMP_VERSION}")
    if not isinstance(doc.get("resource"), dict):
        raise PlotError(f"dump '{path}' has no \"resource\" object")
    return doc


def children(node, path):
    """(path, node) of each resource directly below node: upstream first, then bins."""
    out = []
    up = node.get("upstream")
    if isinstance(up, dict):
        out.append((path + ["upstream"], up))
    bins = node.get("bins")
    if isinstance(bins, list):
        for i, b in enumerate(bins):
            if isinstance(b, dict) and isinstance(b.get("resource"), dict):
                out.append((path + ["bins", str(i)], b["resource"]))
    return out


def path_name(path):
    return ".".join(path) if path else "resource"


def find_suballocators(root):
    """Every sub-allocator in the dump, breadth first (upstream before bins), each address once."""
    found, seen = [], set()
    level = [([], root)]
    while level:
        nxt = []
        for path, node in level:
            if node.get("type") in SUBALLOCATORS or ("chunks" in node and node.get("type") != "binning"):
                key = node.get("address") or id(node)
                if key not in seen:
                    seen.add(key)
                    found.append((path, node))
            nxt.extend(children(node, path))
        level = nxt
    return found


def resolve_path(root, text):
    node, path = root, []
    steps = [s for s in re.split(r"[.\[\]]+", text.strip()) if s]
    k = 0
    while k < len(steps):
        s = steps[k]
        where = path_name(path)
        if s == "resource":
            k += 1
            continue
        if s == "upstream":
            nxt = node.get("upstream")
            if not isinstance(nxt, dict):
                raise PlotError(f"--path {text}: {where} ({node.get('type')}) has no upstream")
            node, path = nxt, path + ["upstream"]
            k += 1
        elif s == "bins":
            bins = node.get("bins")
            if not isinstance(bins, list):
                raise PlotError(f"--path {text}: {where} ({node.get('type')}) has no bins")
            if k + 1 >= len(steps) or not steps[k + 1].isdigit():
                raise PlotError(f"--path {text}: 'bins' must be followed by a bin number (0 to {len(bins) - 1})")
            i = int(steps[k + 1])
            if i >= len(bins) or not isinstance(bins[i], dict) or not isinstance(bins[i].get("resource"), dict):
                raise PlotError(f"--path {text}: {where} has no resource in bin {i} ({len(bins)} bins)")
            node, path = bins[i]["resource"], path + ["bins", str(i)]
            k += 2
        else:
            raise PlotError(f"--path {text}: unknown step '{s}' (steps are upstream, bins.N, resource)")
    return path, node


def as_int(v, where):
    if isinstance(v, bool) or not isinstance(v, int) or v < 0 or v >= 1 << 64:
        raise PlotError(f"{where}: expected a non-negative integer, found {json.dumps(v)[:40]}")
    return v


MAP_WIDTH, MAP_LEFT, BAR_HEIGHT, LABEL_BAND, ROW_GAP, CHUNK_GAP, MIN_CHUNK_PX = 1000, 20, 18, 13, 5, 4, 3


def fmt_field(key, value):
    if isinstance(value, bool) or value is None:
        return f"{key}={json.dumps(value)}"
    if isinstance(value, int) and (key.endswith("bytes") or key in ("largest_free_block",)) and value >= 1024:
        return f"{key}={fmt_bytes(value)}"
    if isinstance(value, int):
        return f"{key}={fmt_int(value)}"
    if isinstance(value, (dict, list)):
        return f"{key}={json.dumps(value, separators=(',', ':'))[:60]}"
    return f"{key}={value}"


def map_cmd(args):
    doc = load_dump(args.dump)
    root = doc["resource"]
    subs = find_suballocators(root)
    if args.path is not None:
        path, node = resolve_path(root, args.path)
        if not isinstance(node.get("chunks"), list):
            others = ", ".join(f"{path_name(p)} ({n.get('type')})" for p, n in subs) or "none"
            raise PlotError(f"--path {args.path}: {path_name(path)} is a {node.get('type')} resource, which has no "
                            f"chunks to draw; sub-allocators in this dump: {others}")
        how = "picked by --path"
    else:
        if not subs:
            raise PlotError(f"dump '{args.dump}' has no sub-allocator (pool, arena, fixed_size) to draw: its resources are "
                            + " > ".join(str(n.get("type")) for _, n in _chain(root)))
        path, node = subs[0]
        how = "the top resource" if not path else "the first sub-allocator below the top resource"
        if not isinstance(node.get("chunks"), list):
            raise PlotError(f"dump '{args.dump}': {path_name(path)} ({node.get('type')}) has no \"chunks\" list")
    others = [f"{path_name(p)} ({n.get('type')})" for p, n in subs if n is not node]
    draw_map(args, doc, path, node, how, others)


def _chain(root):
    out, node = [], root
    while isinstance(node, dict) and len(out) < 64:
        out.append((None, node))
        node = node.get("upstream")
    return out


def draw_map(args, doc, path, node, how, others):
    where = path_name(path)
    chunks = node["chunks"]
    ntype = node.get("type")
    sizes = []
    for ci, ch in enumerate(chunks):
        if not isinstance(ch, dict):
            raise PlotError(f"{where}.chunks[{ci}]: not an object")
        sizes.append(as_int(ch.get("size"), f"{where}.chunks[{ci}].size"))
        if not isinstance(ch.get("blocks", []), list):
            raise PlotError(f"{where}.chunks[{ci}].blocks: not a list")
    total = sum(sizes)

    # streams: colours for free blocks, in the order the dump lists them
    def stream_key(sid):  # (an id that is a list or an object is keyed by its JSON: a traceback until red team 47)
        return json.dumps(sid, sort_keys=True) if isinstance(sid, (list, dict)) else sid

    stream_info = {}
    streams = node.get("streams") or []
    if not isinstance(streams, list):
        raise PlotError(f"{where}.streams: not a list")
    for si, s in enumerate(streams):
        if isinstance(s, dict):
            for key in ("free_blocks", "free_bytes"):
                if key in s:
                    as_int(s[key], f"{where}.streams[{si}].{key}")
        if isinstance(s, dict) and "id" in s:
            stream_info[stream_key(s["id"])] = s
    colour_of = {}

    def stream_colour(sid):
        c = colour_of.get(sid)
        if c is None:
            c = colour_of[sid] = len(colour_of) % len(STREAM_COLOURS)
        return c
    for sid in stream_info:
        stream_colour(sid)

    # scale: the smallest chunk at least a few pixels wide, within 4 to 48 rows of MAP_WIDTH
    RW = MAP_WIDTH
    if total > 0:
        smallest = min((s for s in sizes if s > 0), default=total)
        want_px = total / max(smallest / 6.0, 1.0)
        rows_target = min(48.0, max(4.0, want_px / RW))
        bpp = total / (rows_target * RW)
    else:
        bpp = 1.0
    # layout: chunks flow like words; one longer than a row starts a row and wraps. Thousands of
    # chunks (on-demand growth) get narrower gaps and minimum widths, so that they stay a few rows
    gap, min_px = (CHUNK_GAP, MIN_CHUNK_PX) if len(sizes) <= 1000 else (2, 2) if len(sizes) <= 5000 else (1, 1)
    layout = []  # (chunk index, global start px, width px)
    row, x = 0, 0
    for ci, size in enumerate(sizes):
        w = max(min_px, int(round(size / bpp)))
        if x > 0 and x + w > RW:
            row, x = row + 1, 0
        layout.append((ci, row * RW + x, w))
        end = row * RW + x + w
        row, x = divmod(end, RW)
        if x > 0:
            x += gap
            if x >= RW:
                row, x = row + 1, 0
    rows = (row + 1) if x > 0 or not layout else row
    rows = max(rows, 1)
    pitch = LABEL_BAND + BAR_HEIGHT + ROW_GAP

    used_n = free_n = used_b = free_b = 0
    largest_free = 0
    merged = overlaps = beyond = 0
    unlisted_b = 0
    free_by_stream = {}
    used_paths = []
    free_paths = [[] for _ in STREAM_COLOURS]
    seps = []
    frames = []
    labels = []
    top0 = 48
    H = BAR_HEIGHT

    def place(g):
        r, xx = divmod(g, RW)
        return MAP_LEFT + xx, top0 + r * pitch + LABEL_BAND

    for ci, gstart, w in layout:
        ch = chunks[ci]
        addr = str(ch.get("address", "?"))
        size = sizes[ci]
        blocks = ch.get("blocks") or []
        k = w / size if size else 0.0  # px per byte
        used = [0.0] * w
        free = [0.0] * w
        fbig = [0.0] * w
        fcol = [0] * w
        prev_end = 0
        last_wide = False
        c_used_b = c_free_b = 0
        try:
            for bi, b in enumerate(blocks):
                off = b["offset"]
                bs = b["size"]
                st = b["state"]
                for v in (off, bs):
                    if isinstance(v, bool) or not isinstance(v, int):
                        raise ValueError(f"an offset or size that is not an integer: {json.dumps(v)[:40]}")
                if off < 0 or bs < 0:
                    raise ValueError("a negative offset or size")
                if off < prev_end:
                    overlaps += 1
                end = off + bs
                if end > size:
                    beyond += 1
                    end = size
                prev_end = off + bs
                if st == "used":
                    used_n += 1
                    c_used_b += bs
                    is_used = True
                elif st == "free":
                    free_n += 1
                    c_free_b += bs
                    if bs > largest_free:
                        largest_free = bs
                    sid = stream_key(b.get("stream"))
                    fb = free_by_stream.get(sid)
                    free_by_stream[sid] = (fb or 0) + bs
                    colour = colour_of.get(sid)
                    if colour is None:
                        colour = stream_colour(sid)
                    is_used = False
                else:
                    raise ValueError(f"state '{st}'")
                if end <= off:
                    continue
                a = off * k
                z = end * k
                ca = int(a)
                cz = int(z)
                if cz >= w:
                    cz = w - 1
                if ca >= w:
                    ca = w - 1
                if z - a < 1.0:
                    merged += 1
                if ca == cz:
                    amount = end - off
                    if is_used:
                        used[ca] += amount
                    else:
                        free[ca] += amount
                        if amount > fbig[ca]:
                            fbig[ca] = amount
                            fcol[ca] = colour
                    last_wide = False
                    continue
                # spans columns ca..cz: the partial ends, the full middle
                per_col = 1.0 / k
                first = (ca + 1 - a) * per_col
                lastpart = (z - cz) * per_col
                target = used if is_used else free
                target[ca] += first
                target[cz] += lastpart
                for c in range(ca + 1, cz):
                    target[c] = per_col
                if not is_used:
                    for c, part in ((ca, first), (cz, lastpart)):
                        if part > fbig[c]:
                            fbig[c] = part
                            fcol[c] = colour
                    for c in range(ca + 1, cz):
                        fbig[c] = per_col
                        fcol[c] = colour
                wide = z - a >= 4.0
                if wide and last_wide and off > 0:
                    seps.append(gstart + a)
                last_wide = wide
        except (KeyError, TypeError, ValueError) as e:
            raise PlotError(f"{where}.chunks[{ci}].blocks[{bi}]: not a block "
                            f"({{\"offset\": N, \"size\": N, \"state\": \"used\"|\"free\", \"stream\": ...}}): {e}") from None
        used_b += c_used_b
        free_b += c_free_b
        unlisted_b += max(0, size - c_used_b - c_free_b)

        # columns to runs of equal heights and colour, then to rectangles on each row
        cap = 1.0 / k if k else 1.0
        runs = []
        prev_key = None
        for c in range(w):
            u = used[c]
            f = free[c]
            ccap = cap if c < w - 1 else max(size - (w - 1) * cap, 1e-9)
            hu = round(u / ccap * H)
            hf = round(f / ccap * H)
            if u > 0 and hu == 0:
                hu = 1
            if f > 0 and hf == 0:
                hf = 1
            if hu + hf > H:
                if hu >= hf:
                    hu = H - hf
                else:
                    hf = H - hu
            key = (hu, hf, fcol[c] if hf else -1)
            if key == prev_key:
                runs[-1][1] += 1
            else:
                runs.append([c, 1, key])
                prev_key = key
        for c0, cn, (hu, hf, col) in runs:
            g = gstart + c0
            remaining = cn
            while remaining > 0:
                xx, ytop = place(g)
                span = min(remaining, RW - (g % RW))
                if hu:
                    used_paths.append(f"M{xx},{ytop + H - hu}h{span}v{hu}h-{span}z")
                if hf:
                    free_paths[col].append(f"M{xx},{ytop + H - hu - hf}h{span}v{hf}h-{span}z")
                g += span
                remaining -= span
        # the chunk's frame on each row it crosses; a row it continues on says from which offset
        g, remaining = gstart, w
        while remaining > 0:
            xx, ytop = place(g)
            span = min(remaining, RW - (g % RW))
            frames.append(f"M{xx},{ytop}h{span}v{H}h-{span}z")
            if g != gstart:
                labels.append(f'<text x="{xx}" y="{ytop - 3}" fill="#888">{esc(addr)} continued, from offset '
                              f'{esc(fmt_bytes(int((g - gstart) / k)) if k else 0)}</text>')
            g += span
            remaining -= span
        xx, ytop = place(gstart)
        label = f"{addr}  {fmt_bytes(size)}"
        room = min(w, RW - (gstart % RW))
        if room >= 7 * len(label):
            labels.append(f'<text x="{xx}" y="{ytop - 3}">{esc(label)}</text>')
        elif room >= 7 * len(fmt_bytes(size)):
            labels.append(f'<text x="{xx}" y="{ytop - 3}">{esc(fmt_bytes(size))}</text>')

    parts = []
    add = parts.append
    add(f'<g stroke="none">')
    add(f'<path d="{"".join(frames)}" fill="{UNLISTED_COLOUR}"/>')
    if used_paths:
        add(f'<path class="used" d="{"".join(used_paths)}" fill="{USED_COLOUR}"/>')
    for col, ps in enumerate(free_paths):
        if ps:
            add(f'<path class="free" d="{"".join(ps)}" fill="{STREAM_COLOURS[col]}"/>')
    if seps:
        d = []
        for gx in seps:
            g = int(gx)
            xx, ytop = place(g)
            d.append(f"M{xx}.5,{ytop}v{H}")
        add(f'<path d="{"".join(d)}" stroke="#ffffff" stroke-width="1" stroke-opacity="0.8"/>')
    add(f'<path d="{"".join(frames)}" fill="none" stroke="#555" stroke-width="0.6"/>')
    add("</g>")
    add(f'<g {FONT} font-size="10" fill="#444">' + "".join(labels) + "</g>")

    # legend and caption under the bars
    y = top0 + rows * pitch + 14
    add(f'<g {FONT} font-size="12" fill="#222">')
    entries = [(USED_COLOUR, f"used: {fmt_int(used_n)} blocks, {fmt_bytes(used_b)}")]
    shown = 0
    ids = list(stream_info) + [s for s in free_by_stream if s not in stream_info]
    for sid in ids:
        if shown == 11 and len(ids) > 12:
            entries.append((None, f"... and {len(ids) - shown} more streams"))
            break
        s = stream_info.get(sid)
        fb = free_by_stream.get(sid, 0)
        if s is not None:
            flags = [s.get("kind", "?")]
            if s.get("alive") is False:
                flags.append("destroyed")
            if s.get("lazy"):
                flags.append("lazy events")
            text = (f"free, stream {sid} ({', '.join(str(f) for f in flags)}, handle {s.get('handle', '?')}): "
                    f"{fmt_bytes(fb)} in the chunks drawn")
            if "free_blocks" in s or "free_bytes" in s:
                text += f"; the stream's lists: {fmt_int(s.get('free_blocks', 0))} blocks, {fmt_bytes(s.get('free_bytes', 0))}"
        elif sid is None:
            text = f"free, no stream given: {fmt_bytes(fb)}"
        else:
            text = f"free, stream {sid} (not in the streams list): {fmt_bytes(fb)}"
        entries.append((STREAM_COLOURS[colour_of[sid]] if sid in colour_of else "#cccccc", text))
        shown += 1
    if unlisted_b:
        entries.append((UNLISTED_COLOUR, f"in no block of the dump: {fmt_bytes(unlisted_b)}"))
    for colour, text in entries:
        if colour:
            add(f'<rect x="{MAP_LEFT}" y="{y - 10}" width="14" height="10" fill="{colour}" stroke="#555" stroke-width="0.5"/>')
        add(f'<text class="legend" x="{MAP_LEFT + 22}" y="{y}">{esc(text)}</text>')
        y += 17
    y += 6
    caption = []
    caption.append(f"drawn: {where}, {ntype} '{node.get('name', '?')}' at {node.get('address', '?')} ({how})"
                   + (f"; other sub-allocators: {', '.join(others)}" if others else ""))
    cfg = node.get("config")
    if isinstance(cfg, dict) and cfg:
        caption.append("config: " + ", ".join(fmt_field(k2, v) for k2, v in cfg.items()))
    cnt = node.get("counters")
    if isinstance(cnt, dict) and cnt:
        caption.append("counters: " + ", ".join(fmt_field(k2, v) for k2, v in cnt.items()))
    caption.append(f"in the blocks: {fmt_int(len(chunks))} chunks, {fmt_bytes(total)} ({fmt_int(total)} B); "
                   f"used {fmt_int(used_n)} blocks, {fmt_bytes(used_b)} ({fmt_int(used_b)} B); "
                   f"free {fmt_int(free_n)} blocks, {fmt_bytes(free_b)} ({fmt_int(free_b)} B), largest {fmt_bytes(largest_free)}")
    caption.append(f"scale: 1 px = {fmt_bytes(int(bpp))}; chunks under {min_px} px drawn {min_px} px wide; "
                   f"{plural(merged, 'block')} narrower than a pixel merged for drawing (a pixel column holding "
                   f"used and free blocks is split by their bytes)")
    if isinstance(cnt, dict):
        checks = [("used_bytes", used_b), ("free_bytes", free_b), ("pool_bytes", total), ("free_blocks", free_n)]
        if isinstance(cfg, dict) and cfg.get("growth") == "virtual":
            checks = checks[:1]  # the chunk is the address range; the counters count mapped pages
        for key, have in checks:
            v = cnt.get(key)
            if isinstance(v, int) and not isinstance(v, bool) and v != have and ntype != "arena":
                caption.append(f"note: counters say {key}={fmt_int(v)}, the blocks add up to {fmt_int(have)}")
    if overlaps:
        caption.append(f"warning: {plural(overlaps, 'block')} overlap the one before or are out of offset order")
    if beyond:
        caption.append(f"warning: {plural(beyond, 'block')} reach past the end of their chunk")
    caption.append(f"dump: {os.path.basename(args.dump)}, rmm.h {doc.get('rmm_version', '?')}")
    for text in caption:
        for line in textwrap.wrap(text, 165):
            add(f'<text class="caption" x="{MAP_LEFT}" y="{y}" fill="#333">{esc(line)}</text>')
            y += 16
    add("</g>")
    title = args.title or f"{os.path.basename(args.dump)}: {ntype} at {where}"
    desc = (f"path={where} type={ntype} chunks={len(chunks)} chunk_bytes={total} used_blocks={used_n} used_bytes={used_b} "
            f"free_blocks={free_n} free_bytes={free_b} merged_blocks={merged}")
    write_svg(args.output, MAP_LEFT * 2 + MAP_WIDTH, y + 4, title, desc, parts, title_x=MAP_LEFT)


# ---- command line ----------------------------------------------------------------------------------

class Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"rmm_plot: error: {message}", file=sys.stderr)
        sys.exit(2)


def main(argv=None):
    ap = Parser(prog="rmm_plot.py", description="SVG pictures of rmm.h allocation logs and resource dumps.")
    sub = ap.add_subparsers(dest="command", required=True, parser_class=Parser)
    t = sub.add_parser("timeline", help="memory over time from an RMM CSV log")
    t.add_argument("log", help="the log (CSV, or gzipped CSV)")
    t.add_argument("--upstream", metavar="UPSTREAM_LOG", help="a log of the same run taken under the sub-allocator")
    t.add_argument("--time", action="store_true", help="x axis in wall time, not event index")
    t.add_argument("--title")
    t.add_argument("-o", "--output", required=True, metavar="OUT.svg")
    m = sub.add_parser("map", help="a map of a sub-allocator's chunks and blocks from a JSON dump")
    m.add_argument("dump", help="the JSON that rmm_resource_dump_json wrote (or gzipped)")
    m.add_argument("--path", help="which resource to draw: e.g. upstream.upstream, bins.0 (default: the first sub-allocator)")
    m.add_argument("--title")
    m.add_argument("-o", "--output", required=True, metavar="OUT.svg")
    args = ap.parse_args(argv)
    try:
        if args.command == "timeline":
            timeline(args)
        else:
            map_cmd(args)
    except PlotError as e:
        print(f"rmm_plot: error: {e}", file=sys.stderr)
        return 2
    except MemoryError:
        print("rmm_plot: error: out of memory", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
