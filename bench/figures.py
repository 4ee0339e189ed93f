#!/usr/bin/env python3
"""bench/figures.py - the README's performance tables from the logs of `make gpu-check`'s figures part.

    GPU_CHECK_PARTS=figures make gpu-check        (on a GPU machine; logs in $OUT/figures)
    python3 bench/figures.py $OUT/figures         (prints the tables as Markdown)

Reads the `csv,` lines of random_allocations_{foreign,created,default,foreign_lag}.log, replay.log,
replay_gpt2_generate*.log, adaptors.log and stream_churn_{created,foreign}.log, and the tables of stream_identity.log, many_streams.log
and vmm_costs.log (printed as they are). Nothing is computed but ratios and medians already in the
logs; a missing log or row prints as "n/a". Python 3.8+, no dependencies.
"""
import os
import sys

KINDS = ("foreign", "created", "default")
ALLOCATORS = [("pool", "rmm.h pool"), ("binning", "rmm.h binning"), ("arena", "rmm.h arena"),
              ("fixed", "rmm.h fixed-size"), ("rmm::pool", "RMM pool"), ("rmm::binning", "RMM binning"),
              ("rmm::arena", "RMM arena"), ("cudaMallocAsync", "`cudaMallocAsync`")]
WORKLOADS = [("lifo_256B", "lifo 256 B"), ("churn_small", "churn_small (1000 live, 256 B-64 KiB)"),
             ("churn_mixed", "churn_mixed (1000 live, 256 B-64 MiB)"),
             ("threads16", "threads16 (16 threads, 100 live each, 256 B-1 MiB)")]


def csv_rows(path):
    """The csv lines of a log as dicts keyed by its csv header line."""
    rows, header = [], None
    if not os.path.exists(path):
        return rows
    with open(path, errors="replace") as f:
        for line in f:
            if not line.startswith("csv,"):
                continue
            cells = line.rstrip("\n").split(",")[1:]
            if header is None or cells[0] == header[0]:
                header = cells
                continue
            rows.append(dict(zip(header, cells)))
    return rows


def head(path, lines=("# command", "# started", "# gpu", "# cuda", "# host")):
    """The log's provenance lines."""
    if not os.path.exists(path):
        return []
    with open(path, errors="replace") as f:
        return [l.rstrip("\n") for l in f if l.startswith(lines)]


def fmt(x, digits=None):
    if x is None:
        return "n/a"
    if digits is None:
        digits = 1 if x < 100 else 0
    return "%.*f" % (digits, x)


def allocations(d):
    table = {}
    for kind in KINDS + ("foreign_lag",):
        for r in csv_rows(os.path.join(d, "random_allocations_%s.log" % kind)):
            if r.get("status") == "ok":
                table[(r["workload"], r["resource"], kind)] = float(r["ns_per_pair"])
    out = ["| workload | allocator | **foreign** | foreign, device behind (`--lag`) | created | default |",
           "|---|---|---:|---:|---:|---:|"]
    for w, wname in WORKLOADS:
        for a, aname in ALLOCATORS:
            vals = [table.get((w, a, k)) for k in ("foreign", "foreign_lag", "created", "default")]
            if all(v is None for v in vals):
                continue
            out.append("| %s | %s | **%s** | %s | %s | %s |" % ((wname, aname) + tuple(fmt(v) for v in vals)))
    out += ["", "RMM's random_allocations (N allocations of up to S MiB), ns per operation, created stream:", "",
            "| N x S | rmm.h pool | RMM pool | cudaMallocAsync | RMM `cuda_async` |", "|---|---:|---:|---:|---:|"]
    ops = {}
    for r in csv_rows(os.path.join(d, "random_allocations_created.log")):
        if r["workload"].startswith("rmm_random_") and r.get("status") == "ok":
            ops[(r["workload"], r["resource"])] = float(r["ns_per_op"])
    for nxs in ("1000x1MiB", "10000x1MiB", "1000x4MiB", "1000x64MiB"):
        w = "rmm_random_" + nxs
        out.append("| %s | **%s** | %s | %s | %s |" % (nxs.replace("x", " x ").replace("MiB", " MiB"),
                   *[fmt(ops.get((w, a))) for a in ("pool", "rmm::pool", "cudaMallocAsync", "rmm::async")]))
    extra = {}
    for r in csv_rows(os.path.join(d, "random_allocations_foreign.log")):
        if r["workload"] == "threads16" and r.get("status") == "ok":
            extra[r["resource"]] = float(r["ns_per_pair"])
    out += ["", "threads16, foreign, with streams promised to outlive the resource: pool(outlive) %s, arena(outlive) %s"
            % (fmt(extra.get("pool(outlive)")), fmt(extra.get("arena(outlive)")))]
    return out


REPLAY_COLS = [("pool-virtual", "virtual"), ("pool-virtual-extent", "virtual, 128 MiB extents"), ("pool", "on-demand"),
               ("pool-geometric", "geometric"), ("rmm::pool", "RMM pool"), ("binning", "binning"),
               ("rmm::binning", "RMM binning"), ("async", "cudaMallocAsync"), ("rmm::async", "RMM `cuda_async`")]
TRACES = ["resnet50_train", "gpt2_train", "bert_encode", "gpt2_generate"]


def replay(d):
    res, backend = {}, {}
    for name in ("replay.log", "replay_gpt2_generate.log", "replay_gpt2_generate_host.log"):
        for r in csv_rows(os.path.join(d, name)):
            if r.get("status") != "ok":
                continue
            key = (r["trace"], r["resource"])
            if key in res and r.get("backend") == "host":
                continue  # the GPU's row wins
            res[key] = r
            backend[r["trace"]] = r.get("backend")
    out = ["| trace | " + " | ".join(c for _, c in REPLAY_COLS) + " |", "|---|" + "---:|" * len(REPLAY_COLS)]
    for t in TRACES:
        cells = []
        for c, _ in REPLAY_COLS:
            r = res.get((t, c))
            if not r:
                cells.append("n/a")
                continue
            eff = float(r["efficiency"])
            ns = float(r["ns_per_event"])
            if c == "async" and r.get("async_reserved_high_bytes", "0") not in ("0", ""):
                eff = float(r["async_reserved_high_bytes"]) / float(r["peak_upstream_bytes"])
            cells.append("%s ns, %s" % (fmt(ns), "%.3f" % eff if eff > 0 else "peak n/a"))
        label = t + (" (host backend)" if backend.get(t) == "host" else "")
        out.append("| %s | %s |" % (label, " | ".join(cells)))
    out += ["", "(cudaMallocAsync's efficiency: the driver pool's cudaMemPoolAttrReservedMemHigh / peak live)"]
    return out


def adaptors(d):
    rows = csv_rows(os.path.join(d, "adaptors.log"))
    added = {(r["workload"], r["adaptor"]): float(r["added_ns_per_event"]) for r in rows if r.get("status") == "ok"}
    out = ["| adaptor | lifo 256 B | churn_small |", "|---|---:|---:|"]
    for a in ("limiting", "statistics", "tracking", "tracking(stacks)", "logging(buffered)", "logging(auto_flush)", "thread_safe"):
        out.append("| %s | %s | %s |" % (a, fmt(added.get(("lifo_256B", a)), 0), fmt(added.get(("churn_small", a)), 0)))
    return out


CHURN_RESOURCES = [("pool", "rmm.h pool"), ("pool-virtual", "rmm.h pool, virtual growth"), ("arena", "rmm.h arena"),
                   ("rmm::pool", "RMM pool"), ("rmm::arena", "RMM arena"), ("async", "`cudaMallocAsync`"),
                   ("rmm::async", "RMM `cuda_async`")]
CHURN_LOOPS = [("own", "own (us an iteration)"), ("handoff", "handoff"), ("consumer", "consumer"),
               ("grow4", "grow4 (us a round)"), ("mixed16", "mixed16 (us a step)")]


def stream_churn(d):
    """us per iteration, created / foreign streams, from stream_churn_{created,foreign}.log's csv
    lines (resource, loop, streams, iterations, us, state at the end)."""
    us = {}
    for kind in ("created", "foreign"):
        path = os.path.join(d, "stream_churn_%s.log" % kind)
        if not os.path.exists(path):
            continue
        with open(path, errors="replace") as f:
            for line in f:
                cells = line.rstrip("\n").split(",", 6)
                if line.startswith("csv,") and len(cells) >= 6:
                    us[(cells[1], cells[2], cells[3])] = float(cells[5])
    out = ["| loop | " + " | ".join(c for _, c in CHURN_RESOURCES) + " |", "|---|" + "---:|" * len(CHURN_RESOURCES)]
    for loop, label in CHURN_LOOPS:
        cells = ["%s / %s" % (fmt(us.get((r, loop, "created"))), fmt(us.get((r, loop, "foreign")))) for r, _ in CHURN_RESOURCES]
        out.append("| %s | %s |" % (label, " | ".join(cells)))
    out += ["", "(created / foreign streams; each stream_churn_*.log has the memory held and, for the virtual pool, its driver calls)"]
    return out


def verbatim(d, name, start):
    path = os.path.join(d, name)
    if not os.path.exists(path):
        return ["(%s: missing)" % name]
    with open(path, errors="replace") as f:
        lines = [l.rstrip("\n") for l in f if not l.startswith(("csv,", "  ", "# "))]
    i = next((k for k, l in enumerate(lines) if l.startswith(start)), 0)
    return ["```"] + lines[i:] + ["```"]


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print(__doc__)
        return 2
    d = argv[1]
    for title, lines in (("provenance", sum((head(os.path.join(d, n)) for n in sorted(os.listdir(d)) if n.endswith(".log")), [])),
                         ("allocate + free, ns per pair", allocations(d)),
                         ("trace replay: ns per event, efficiency", replay(d)),
                         ("adaptors over the pool: added ns per event", adaptors(d)),
                         ("stream_churn: streams that come and go", stream_churn(d)),
                         ("stream_identity", verbatim(d, "stream_identity.log", "query")),
                         ("many_streams (GPU)", verbatim(d, "many_streams.log", "mr ")),
                         ("many_streams (host backend)", verbatim(d, "many_streams_host.log", "mr ")),
                         ("vmm_costs", verbatim(d, "vmm_costs.log", "pages"))):
        print("## " + title + "\n")
        print("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
