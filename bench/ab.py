#!/usr/bin/env python3
"""bench/ab.py - before and after: random_allocations built from another commit's rmm.h and from the
working tree, run in turn in one session, medians per (workload, resource, stream kind, build).

Host-side timings on a VM move 10-50 % between processes (the same binary can come out 1.5x slower
in one process than in the next), so one run of each build says little. This runs the two builds
alternately, ROUNDS times each, and prints the median and the spread of every row, with the ratios
new / old of the medians and of the minima, and each round's figures in run order under the table
(on some instances a whole process runs fast or slow, about 1.5x apart: the medians then follow how
many slow processes each side drew, and the minima, or the rounds, tell more). Nothing is kept but
the table.

    python3 bench/ab.py --base 3f7eab3                       (CUDA build: run it on a GPU machine)
    python3 bench/ab.py --base HEAD~1 --host --rounds 3      (host backend: anywhere)
    python3 bench/ab.py --base 3f7eab3 --stream foreign,created --workload churn_small,threads16 \\
        --resource pool,arena --rounds 5

--base is any commit git knows (its rmm.h, rmm_cuda.h and bench/ sources are taken with `git show`
into a temporary folder), or a folder that holds those files (a copy made beforehand, for a
machine the checkout reaches without .git); --new likewise names the other side (default: the
working tree). --lag and --full pass random_allocations' own --lag (the device kept behind the
host) and run its full length instead of --quick; --taskset CPUS runs each process on those CPUs
(taskset -c): a single-threaded run that lands on another core or socket from one process to the
next moves by 1.5x on the GPU machines, and pinning takes that out. Options --stream (default foreign), --workload (default
lifo_256B,churn_small,churn_mixed,threads16), --resource (default pool,binning,arena,fixed) and
--rounds (default 3) are random_allocations' own (each run is --quick). Exit status 0 iff every
build and run succeeded. Python 3.8+, no dependencies; needs git and a C compiler (gcc, or $CC).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROWS = ("lifo_256B", "lifo_1MiB", "churn_small", "churn_mixed", "threads16", "rmm_random")


def build(src_root, out, host, cc):
    """Compiles src_root/bench/random_allocations.c into out; True on success."""
    flags = ["-std=c11", "-O2", "-DNDEBUG"]
    if host:
        flags.append("-DRMM_BACKEND_HOST")
        libs = ["-lpthread", "-lm"]
    else:
        cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
        flags += ["-isystem", cuda + "/include", "-L" + cuda + "/lib64", "-Wl,-rpath," + cuda + "/lib64"]
        libs = ["-lcudart", "-lpthread", "-lm"]
    cmd = [cc] + flags + [os.path.join(src_root, "bench", "random_allocations.c"), "-o", out] + libs
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write("ab: build failed: %s\n%s" % (" ".join(cmd), r.stderr[-2000:]))
    return r.returncode == 0


def checkout(commit, dest):
    """Writes commit's rmm.h, rmm_cuda.h and bench/*.c|h files (peer/ included) under dest."""
    names = subprocess.run(["git", "ls-tree", "-r", "--name-only", commit, "--", "rmm.h", "rmm_cuda.h", "bench"],
                           capture_output=True, text=True, check=True).stdout.split()
    for name in names:
        if not name.endswith((".h", ".c", ".cu")):
            continue
        data = subprocess.run(["git", "show", "%s:%s" % (commit, name)], capture_output=True, check=True).stdout
        path = os.path.join(dest, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)


def row_of(workload):
    """The ROWS entry a workload name belongs to (rmm_random_1000x1MiB: rmm_random), or None."""
    for r in ROWS:
        if workload == r or workload.startswith(r + "_"):
            return r
    return None


def parse(text):
    """(workload, resource) -> ns_per_pair from random_allocations' table lines; a cell that is not
    a number (oom, error) maps to that text (until red team 47 such rows were dropped without a
    word, and rmm_random's rows, named rmm_random_NxS, never matched)."""
    out = {}
    for line in text.splitlines():
        cells = line.split()
        if len(cells) >= 3 and row_of(cells[0]):
            try:
                out[(cells[0], cells[1])] = float(cells[2])
            except ValueError:
                out[(cells[0], cells[1])] = cells[2]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description="interleaved before/after runs of random_allocations")
    ap.add_argument("--base", required=True, help="the commit (or a folder with rmm.h and bench/) to compare against")
    ap.add_argument("--new", default=None, help="a folder with rmm.h and bench/ to run as new (default: the working tree)")
    ap.add_argument("--lag", action="store_true", help="random_allocations --lag: the device kept behind the host")
    ap.add_argument("--full", action="store_true", help="full-length runs (default: --quick)")
    ap.add_argument("--taskset", default=None, help="run each process with taskset -c CPUS (a list such as 2,3)")
    ap.add_argument("--host", action="store_true", help="build for the host backend (no GPU needed)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--stream", default="foreign")
    ap.add_argument("--workload", default="lifo_256B,churn_small,churn_mixed,threads16")
    ap.add_argument("--resource", default="pool,binning,arena,fixed")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per run")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    if args.new:
        root = args.new
    else:
        root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True).stdout.strip()
    cc = os.environ.get("CC", "gcc")
    tmp = tempfile.mkdtemp(prefix="rmm_ab_")
    try:
        base_root = os.path.join(tmp, "base")
        try:
            if os.path.isdir(args.base):
                base_root = args.base
            else:
                checkout(args.base, base_root)
        except subprocess.CalledProcessError as e:
            err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
            sys.stderr.write("ab: git cannot show %s: %s\n" % (args.base, err.strip()))
            return 2
        bins = {"old": os.path.join(tmp, "ra_old"), "new": os.path.join(tmp, "ra_new")}
        if not (build(base_root, bins["old"], args.host, cc) and build(root, bins["new"], args.host, cc)):
            return 1
        kinds = [k for k in args.stream.split(",") if k]
        samples = {}
        failed = {}  # (stream, workload, resource) -> {"old oom", ...}
        ok = True
        for rnd in range(args.rounds):
            for kind in kinds:
                for which in ("old", "new"):
                    cmd = (["taskset", "-c", args.taskset] if args.taskset else []) + [bins[which]] + ([] if args.full else ["--quick"]) + (["--lag"] if args.lag else []) + \
                        ["--stream", kind, "--workload", args.workload, "--resource", args.resource]
                    try:
                        r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
                    except FileNotFoundError as e:
                        sys.stderr.write("ab: cannot run %s: %s\n" % (cmd[0], e))
                        return 1
                    except subprocess.TimeoutExpired:
                        sys.stderr.write("ab: %s ran past %d s\n" % (" ".join(cmd), args.timeout))
                        ok = False
                        continue
                    if r.returncode != 0:
                        sys.stderr.write("ab: %s exited %d\n%s" % (" ".join(cmd), r.returncode, r.stderr[-1000:]))
                        ok = False
                    for key, ns in parse(r.stdout).items():
                        if isinstance(ns, str):
                            failed.setdefault((kind,) + key, set()).add("%s %s" % (which, ns))
                        else:
                            samples.setdefault((kind,) + key + (which,), []).append(ns)
            sys.stderr.write("ab: round %d of %d done\n" % (rnd + 1, args.rounds))
        print("# %s (%s) against %s: random_allocations%s%s%s, %d rounds, old and new in turn; ns per pair: median [min-max];"
              " new / old of the medians and of the minima (a process runs wholly fast or slow on some"
              " instances: the medians then follow how many slow processes each side drew)"
              % (args.new or "working tree", "host backend" if args.host else "CUDA", args.base,
                 "" if args.full else " --quick", " --lag" if args.lag else "",
                 " (taskset -c %s)" % args.taskset if args.taskset else "", args.rounds))
        print("| stream | workload | resource | old | new | new / old | min / min |")
        print("|---|---|---|---:|---:|---:|---:|")
        rounds = []
        keys = sorted({k[:3] for k in samples} | set(failed), key=lambda k: (kinds.index(k[0]), ROWS.index(row_of(k[1])), k[1], k[2]))
        for kind, workload, resource in keys:
            old = samples.get((kind, workload, resource, "old"), [])
            new = samples.get((kind, workload, resource, "new"), [])
            bad = failed.get((kind, workload, resource))
            if bad or not old or not new:  # (shown, and the run fails: a row a change broke is not left out)
                print("| %s | %s | %s | %s | %s | n/a%s | n/a |" % (
                    kind, workload, resource, "%.1f" % statistics.median(old) if old else "-",
                    "%.1f" % statistics.median(new) if new else "-",
                    " (%s)" % ", ".join(sorted(bad)) if bad else " (a side without it)"))
                ok = False
                continue
            mo, mn = statistics.median(old), statistics.median(new)
            print("| %s | %s | %s | %.1f [%.1f-%.1f] | %.1f [%.1f-%.1f] | %.2f | %.2f |"
                  % (kind, workload, resource, mo, min(old), max(old), mn, min(new), max(new), mn / mo if mo else float("nan"),
                     min(new) / min(old) if min(old) else float("nan")))
            rounds.append("# rounds, %s %s %s: old %s; new %s" % (kind, workload, resource, " ".join("%.1f" % v for v in old),
                                                                 " ".join("%.1f" % v for v in new)))
        for line in rounds:
            print(line)
        if not keys:
            sys.stderr.write("ab: no rows came out\n")
            ok = False
        return 0 if ok else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
