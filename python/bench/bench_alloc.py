"""rmmh's per-call cost beside CuPy's pool and RMM's own Python package, in one process.

    python3 python/bench/bench_alloc.py [--size 1000] [--iters 100000] [--repeats 7] [--csv]

Rows (ns per allocate+free pair, the median of --repeats runs of --iters pairs each, garbage
collector paused while timing):
  rmmh DeviceBuffer(size) created and collected, the current resource a PoolMemoryResource
  rmmh pool.allocate(size) / pool.deallocate(...)
  the same two with ctypes alone (RMMH_NO_ACCEL=1, measured in a child process)
  rmmh DeviceBuffer over CudaMemoryResource (cudaMalloc) and CudaAsyncMemoryResource
  (cudaMallocAsync), for scale
  cupy.cuda.MemoryPool().malloc(size) and its free
  rmm.DeviceBuffer(size) and rmm pool.allocate/deallocate, when RMM's package imports
On the host backend (RMMH_BACKEND=host) the CuPy and RMM rows are skipped, with the reason.
The table is Markdown (one row per line, columns split by '|'); --csv prints CSV instead.
"""
import argparse
import json
import os
import platform
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_IN_TREE = os.path.join(os.path.dirname(HERE), "rmmh")
if not os.environ.get("RMMH_BENCH_INSTALLED") and any(
        f.startswith("librmmh") for f in os.listdir(_IN_TREE)):
    sys.path.insert(0, os.path.dirname(HERE))  # the in-tree package, where it was built (make python)


from _timing import cpu_model, gpu_name, timeit  # noqa: E402  (the scripts' folder is sys.path[0])


def rmmh_rows(size, iters, repeats, label=""):
    import rmmh
    try:
        return _rmmh_rows(size, iters, repeats, label)
    except rmmh.RMMError as e:  # e.g. the CUDA backend without a usable GPU
        return [("rmmh" + label, None, "skipped: %s" % str(e).splitlines()[0])]


def _pool_pair_ns(mod, size, iters, repeats):
    """(DeviceBuffer, mr.allocate/deallocate) ns per pair over a 64 MiB pool made current, for
    rmmh or RMM's own package (the same API)."""
    pool = mod.mr.PoolMemoryResource(mod.mr.CudaMemoryResource(), initial_pool_size=1 << 26)
    mod.mr.set_current_device_resource(pool)
    DB = mod.DeviceBuffer

    def buffers(n):
        for _ in range(n):
            DB(size=size)

    def raw(n, a=pool.allocate, d=pool.deallocate):
        for _ in range(n):
            d(a(size), size)

    return timeit(buffers, iters, repeats), timeit(raw, iters, repeats)


def _rmmh_rows(size, iters, repeats, label):
    import rmmh
    DB = rmmh.DeviceBuffer
    buffers_ns, raw_ns = _pool_pair_ns(rmmh, size, iters, repeats)
    rows = [("rmmh DeviceBuffer, pool" + label, buffers_ns, ""),
            ("rmmh mr.allocate/deallocate, pool" + label, raw_ns, "")]
    if label:
        return rows
    for name, make in (("cudaMalloc", rmmh.mr.CudaMemoryResource),
                       ("cudaMallocAsync", lambda: rmmh.mr.CudaAsyncMemoryResource(0))):
        try:
            mr = make()
        except rmmh.RMMError as e:
            rows.append(("rmmh DeviceBuffer, " + name, None, "skipped: %s" % e))
            continue

        def over(n, mr=mr):
            for _ in range(n):
                DB(size=size, mr=mr)

        rows.append(("rmmh DeviceBuffer, " + name, timeit(over, max(1, iters // 20), repeats),
                     "for scale"))
    rmmh.mr.set_current_device_resource(rmmh.mr.CudaMemoryResource())
    return rows


def cupy_rows(size, iters, repeats, backend):
    name = "cupy MemoryPool.malloc/free"
    if backend == "host":
        return [(name, None, "skipped: host backend (no GPU)")]
    try:
        import cupy
    except Exception as e:  # ImportError, or a CUDA error at import
        return [(name, None, "skipped: cupy not importable (%s)" % str(e).splitlines()[0])]
    pool = cupy.cuda.MemoryPool()

    def body(n, malloc=pool.malloc):
        for _ in range(n):
            malloc(size)

    try:
        return [(name, timeit(body, iters, repeats), "cupy %s" % cupy.__version__)]
    except Exception as e:
        return [(name, None, "skipped: %s" % str(e).splitlines()[0])]


def rmm_rows(size, iters, repeats, backend):
    names = ("rmm DeviceBuffer, pool", "rmm mr.allocate/deallocate, pool")
    if backend == "host":
        return [(n, None, "skipped: host backend (no GPU)") for n in names]
    try:
        import rmm
    except Exception as e:
        why = "skipped: RMM's package not importable (%s)" % str(e).splitlines()[0]
        return [(n, None, why) for n in names]
    try:
        buffers_ns, raw_ns = _pool_pair_ns(rmm, size, iters, repeats)
        note = "rmm %s" % getattr(rmm, "__version__", "?")
        return [(names[0], buffers_ns, note), (names[1], raw_ns, note)]
    except Exception as e:
        return [(n, None, "skipped: %s" % str(e).splitlines()[0]) for n in names]


def machine():
    cpu, gpu = cpu_model(), gpu_name()
    gpu = gpu.replace(", ", ", driver ") if gpu else "none"
    import rmmh
    cuda = rmmh._cuda.gpu.runtimeGetVersion()
    return {"cpu": "%s, %d cores" % (cpu, os.cpu_count() or 0), "gpu": gpu,
            "cuda_runtime": "%d.%d" % (cuda // 1000, cuda % 1000 // 10) if cuda else "none",
            "python": platform.python_version(), "backend": rmmh.BACKEND,
            "accelerator": "on" if rmmh.ACCELERATED else "off (ctypes)"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--iters", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--csv", action="store_true")
    ap.add_argument("--child-ctypes", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.child_ctypes:  # the ctypes-only rows, in a process that never loaded the extension
        print(json.dumps(rmmh_rows(args.size, args.iters, args.repeats, " (ctypes only)")))
        return 0

    import rmmh
    info = machine()
    rows = rmmh_rows(args.size, args.iters, args.repeats)
    if rmmh.ACCELERATED:
        env = dict(os.environ, RMMH_NO_ACCEL="1")
        child = subprocess.run([sys.executable, os.path.abspath(__file__), "--child-ctypes",
                                "--size", str(args.size), "--iters", str(args.iters),
                                "--repeats", str(args.repeats)],
                               env=env, capture_output=True, text=True)
        if child.returncode == 0:
            rows += [tuple(r) for r in json.loads(child.stdout.strip().splitlines()[-1])]
        else:
            rows.append(("rmmh (ctypes only)", None, "skipped: child failed: %s"
                         % child.stderr.strip().splitlines()[-1:]))
    rows += cupy_rows(args.size, args.iters, args.repeats, info["backend"])
    rows += rmm_rows(args.size, args.iters, args.repeats, info["backend"])

    if args.csv:
        print("row,ns_per_pair,note")
        for name, ns, note in rows:
            print('"%s",%s,"%s"' % (name, "" if ns is None else "%.1f" % ns, note))
        return 0
    print("# rmmh per-call cost: allocate+free of %d bytes, ns per pair (median of %d runs of "
          "%d pairs)" % (args.size, args.repeats, args.iters))
    for k in ("cpu", "gpu", "cuda_runtime", "python", "backend", "accelerator"):
        print("# %-13s %s" % (k + ":", info[k]))
    width = max(len(r[0]) for r in rows)
    print("| %-*s | %10s | %s" % (width, "row", "ns/pair", "note"))
    print("|-%s-|-%s-|-%s" % ("-" * width, "-" * 10, "-" * 4))
    for name, ns, note in rows:
        print("| %-*s | %10s | %s" % (width, name, "-" if ns is None else "%.0f" % ns, note))
    return 0


if __name__ == "__main__":
    sys.exit(main())
