"""CuPy and PyTorch allocating through rmmh, beside their own allocators and RMM's, on one GPU.

    python3 python/bench/bench_frameworks.py [--size 1024] [--iters 20000] [--repeats 5]
                                             [--steps 30] [--out FILE]

Table 1, ns per allocation+free pair (median of --repeats runs of --iters pairs, garbage collector
paused), each row with its ratio to the framework's own allocator:
  CuPy, in this process: cupy.cuda.alloc(size) then dropped, with CuPy's MemoryPool, rmmh's
    rmm_cupy_allocator (a DeviceBuffer each), rmmh's C fast path (CFunctionAllocator), RMM's
    rmm_cupy_allocator; and cupy.empty(size // 4, float32) with each.
  PyTorch, one fresh process per allocator (change_current_allocator must come first):
    torch.empty(size, uint8, device="cuda") then dropped, with PyTorch's caching allocator,
    rmmh's rmm_torch_allocator and RMM's, each over a pool.
Table 2, a training step: torchvision resnet18, batch --batch of 3x224x224, SGD, forward +
backward + step, the same seed and data; --warmup steps, then --steps steps timed each with CUDA
events (median and mean ms). Peak memory: for PyTorch's allocator torch.cuda.max_memory_reserved()
(segments held from cudaMalloc); for rmmh, PoolMemoryResource(growth="on_demand", initial 0)'s
peak_pool_bytes (chunks held from cudaMalloc). "peak allocated" is the most the tensors held at
once (torch.cuda.max_memory_allocated(), rmmh's hook counters). Each configuration runs --rounds
times, alternating; the best median is reported.

Rows whose framework or RMM's package is missing are skipped, with the reason. Markdown tables;
--out also writes them to FILE.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_IN_TREE = os.path.join(os.path.dirname(HERE), "rmmh")
if "rmmh" not in sys.modules and not os.environ.get("RMMH_BENCH_INSTALLED") and any(
        f.startswith("librmmh") for f in os.listdir(_IN_TREE)):
    sys.path.insert(0, os.path.dirname(HERE))  # the in-tree package, where it was built (make python)


from _timing import cpu_model, gpu_name, timeit  # noqa: E402  (the scripts' folder is sys.path[0])


def first_line(e):
    return (str(e).splitlines() or [type(e).__name__])[0][:120]


# ---- CuPy (this process) ------------------------------------------------------------------------

def cupy_rows(size, iters, repeats):
    try:
        import cupy
    except Exception as e:
        return [("CuPy", "all", None, None, "skipped: cupy not importable (%s)" % first_line(e))]
    import rmmh
    rows = []
    pool = rmmh.mr.PoolMemoryResource(rmmh.mr.CudaMemoryResource(), "256MiB")
    rmmh.mr.set_current_device_resource(pool)
    allocators = [("CuPy MemoryPool", lambda: cupy.cuda.MemoryPool().malloc, "baseline")]
    from rmmh.allocators import cupy as rc
    allocators.append(("rmmh rmm_cupy_allocator", lambda: rc.rmm_cupy_allocator,
                       "DeviceBuffer per allocation"))
    allocators.append(("rmmh C fast path", lambda: rc.rmm_cupy_fast_allocator, None))
    try:
        import rmm
        rmm_pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(),
                                             initial_pool_size=256 << 20)
        from rmm.allocators.cupy import rmm_cupy_allocator as rmm_alloc

        def rmm_allocator():
            rmm.mr.set_current_device_resource(rmm_pool)
            return rmm_alloc
        allocators.append(("RMM rmm_cupy_allocator", rmm_allocator,
                           "rmm %s" % getattr(rmm, "__version__", "?")))
    except Exception as e:
        rows.append(("CuPy", "RMM rmm_cupy_allocator", None, None,
                     "skipped: RMM's package not importable (%s)" % first_line(e)))
    n = max(1, size // 4)
    for name, make, note in allocators:
        try:
            cupy.cuda.set_allocator(make())
            alloc = cupy.cuda.memory.alloc
            empty = cupy.empty

            def pairs(k):
                for _ in range(k):
                    alloc(size)

            def arrays(k):
                for _ in range(k):
                    empty(n, dtype=cupy.float32)

            if name == "rmmh C fast path":
                note = "raises OOM from C" if rc.FAST_PATH_RAISES else "Python NULL check"
            rows.append(("CuPy", name + ": cupy.cuda.alloc(%d)" % size,
                         timeit(pairs, iters, repeats), None, note or ""))
            rows.append(("CuPy", name + ": cupy.empty(%d, float32)" % n,
                         timeit(arrays, iters, repeats), None, ""))
        except Exception as e:
            rows.append(("CuPy", name, None, None, "skipped: %s" % first_line(e)))
        finally:
            cupy.cuda.set_allocator(cupy.get_default_memory_pool().malloc)
    rmmh.mr.set_current_device_resource(rmmh.mr.CudaMemoryResource())
    return relative(rows, "CuPy MemoryPool")


def relative(rows, baseline_prefix):
    """Fills each row's ratio to the baseline row of the same operation."""
    base = {}
    for _, name, ns, _, _ in rows:
        if ns is not None and name.startswith(baseline_prefix):
            base[name.split(": ", 1)[-1]] = ns
    out = []
    for fw, name, ns, _, note in rows:
        b = base.get(name.split(": ", 1)[-1])
        out.append((fw, name, ns, ns / b if ns is not None and b else None, note))
    return out


# ---- PyTorch (one process per configuration) ----------------------------------------------------

def child_torch_setup(which, growth="geometric", initial="256MiB"):
    """Installs `which` as PyTorch's allocator; returns a function giving pool statistics."""
    import torch
    if which == "rmmh-geometric":
        which, growth = "rmmh", "geometric"
    if which == "rmmh":
        import rmmh
        from rmmh.allocators.torch import rmm_torch_allocator, memory_stats
        pool = rmmh.mr.PoolMemoryResource(rmmh.mr.CudaMemoryResource(),
                                          0 if growth == "on_demand" else initial,
                                          growth=growth)
        rmmh.mr.set_current_device_resource(pool)
        torch.cuda.memory.change_current_allocator(rmm_torch_allocator)

        def stats():
            info = pool.info()
            s = memory_stats()
            return {"peak_reserved": info.peak_pool_bytes, "reserved": info.pool_bytes,
                    "peak_allocated": s["allocated_bytes.all.peak"],
                    "chunks": info.upstream_chunks}
        return stats
    if which == "rmm":
        import rmm
        from rmm.allocators.torch import rmm_torch_allocator
        pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(),
                                         initial_pool_size=256 << 20)
        rmm.mr.set_current_device_resource(pool)
        torch.cuda.memory.change_current_allocator(rmm_torch_allocator)
        return lambda: {}

    def stats():
        return {"peak_reserved": torch.cuda.max_memory_reserved(),
                "reserved": torch.cuda.memory_reserved(),
                "peak_allocated": torch.cuda.max_memory_allocated()}
    return stats


def child_torch_alloc(which, size, iters, repeats):
    import torch
    child_torch_setup(which)
    empty, u8, dev = torch.empty, torch.uint8, torch.device("cuda")
    torch.zeros(1, device=dev)

    def pairs(k):
        for _ in range(k):
            empty(size, dtype=u8, device=dev)

    return {"ns": timeit(pairs, iters, repeats), "torch": torch.__version__}


def child_train(which, batch, warmup, steps):
    import torch
    import torchvision
    stats = child_torch_setup(which, growth="on_demand")  # "rmmh-geometric": RMM's growth rule
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=1000).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    g = torch.Generator(device="cuda").manual_seed(0)
    data = torch.randn(batch, 3, 224, 224, device="cuda", generator=g)
    target = torch.randint(0, 1000, (batch,), device="cuda", generator=g)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(data), target)
        loss.backward()
        opt.step()
        return loss

    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(steps)]
    for start, end in events:
        start.record()
        loss = step()
        end.record()
    torch.cuda.synchronize()
    ms = [s.elapsed_time(e) for s, e in events]
    out = {"median_ms": statistics.median(ms), "mean_ms": statistics.mean(ms),
           "loss": float(loss.item())}
    out.update(stats())
    return out


def run_child(args):
    cmd = [sys.executable, os.path.abspath(__file__), "--child"] + [str(a) for a in args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    lines = [line for line in r.stdout.splitlines() if line.startswith("{")]
    if r.returncode != 0 or not lines:
        raise RuntimeError((r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1])
    return json.loads(lines[-1])


def torch_rows(size, iters, repeats):
    try:
        import torch  # noqa: F401  (only to know it is there; the work runs in children)
    except Exception as e:
        return [("PyTorch", "all", None, None, "skipped: torch not importable (%s)"
                 % first_line(e))]
    rows = []
    for which, name in (("torch", "PyTorch caching allocator"),
                        ("rmmh", "rmmh rmm_torch_allocator, pool"),
                        ("rmm", "RMM rmm_torch_allocator, pool")):
        try:
            r = run_child(["torch-alloc", which, size, iters, repeats])
            rows.append(("PyTorch", name + ": torch.empty(%d, uint8)" % size, r["ns"], None,
                         "torch %s" % r["torch"] if which == "torch" else ""))
        except Exception as e:
            rows.append(("PyTorch", name, None, None, "skipped: %s" % first_line(e)))
    return relative(rows, "PyTorch caching allocator")


def train_rows(batch, warmup, steps, rounds):
    try:
        import torchvision  # noqa: F401
    except Exception as e:
        return [("all", None, "skipped: torchvision not importable (%s)" % first_line(e))]
    best = {}
    errors = {}
    for _ in range(rounds):
        for which in ("torch", "rmmh", "rmmh-geometric"):
            try:
                r = run_child(["train", which, batch, warmup, steps])
            except Exception as e:
                errors[which] = first_line(e)
                continue
            if which not in best or r["median_ms"] < best[which]["median_ms"]:
                best[which] = r
    rows = []
    names = {"torch": "PyTorch caching allocator",
             "rmmh": "rmmh rmm_torch_allocator, on-demand pool",
             "rmmh-geometric": "rmmh rmm_torch_allocator, geometric pool (256 MiB initial)"}
    for which in ("torch", "rmmh", "rmmh-geometric"):
        if which in best:
            rows.append((names[which], best[which], ""))
        else:
            rows.append((names[which], None, "skipped: %s" % errors.get(which, "?")))
    return rows


# ---- report ---------------------------------------------------------------------------------

def machine():
    gpu, cpu = gpu_name() or "none", cpu_model()
    import rmmh
    return "GPU %s; CPU %s; Python %s; rmmh %s (rmm.h %s, %s)" % (
        gpu, cpu, platform.python_version(), rmmh.__version__, rmmh.RMM_H_VERSION,
        "extension" if rmmh.ACCELERATED else "ctypes")


def fmt(v, digits=0):
    return "" if v is None else ("%.*f" % (digits, v))


def mib(v):
    return "" if v is None else "%.0f" % (v / 2**20)


def report(alloc_rows, train, args):
    lines = ["# rmmh frameworks benchmark", "", machine(), "",
             "## ns per allocation+free pair (size %d, median of %d x %d)"
             % (args.size, args.repeats, args.iters), "",
             "| framework | allocator: operation | ns per pair | x own allocator | note |",
             "|---|---|---:|---:|---|"]
    for fw, name, ns, ratio, note in alloc_rows:
        lines.append("| %s | %s | %s | %s | %s |" % (fw, name, fmt(ns), fmt(ratio, 2), note))
    lines += ["", "## training step: torchvision resnet18, batch %d x 3x224x224, SGD "
              "(%d warm-up, %d timed steps, best of %d rounds)"
              % (args.batch, args.warmup, args.steps, args.rounds), "",
              "| allocator | median ms | mean ms | x PyTorch | peak reserved MiB | "
              "peak allocated MiB | x PyTorch peak reserved | note |",
              "|---|---:|---:|---:|---:|---:|---:|---|"]
    base = next((r for n, r, _ in train if r and n.startswith("PyTorch")), None)
    for name, r, note in train:
        if r is None:
            lines.append("| %s | | | | | | | %s |" % (name, note))
            continue
        ratio = r["median_ms"] / base["median_ms"] if base else None
        mem = r["peak_reserved"] / base["peak_reserved"] if base else None
        extra = note or ("%d chunks" % r["chunks"] if "chunks" in r else "")
        lines.append("| %s | %.2f | %.2f | %s | %s | %s | %s | %s |" % (
            name, r["median_ms"], r["mean_ms"], fmt(ratio, 3), mib(r["peak_reserved"]),
            mib(r["peak_allocated"]), fmt(mem, 3), extra))
    lines += ["", "Peak reserved: PyTorch's torch.cuda.max_memory_reserved(); rmmh's pool "
              "peak_pool_bytes (both: bytes held from cudaMalloc at the peak). Peak allocated: "
              "torch.cuda.max_memory_allocated(); rmmh's hook counters (requested bytes)."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--no-train", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--child", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    if args.child:
        kind, which, *rest = args.child
        if kind == "torch-alloc":
            out = child_torch_alloc(which, *map(int, rest))
        else:
            out = child_train(which, *map(int, rest))
        print(json.dumps(out))
        return 0
    import rmmh
    if rmmh.BACKEND != "cuda" or rmmh._cuda.gpu.getDeviceCount() == 0:
        print("bench_frameworks: needs a GPU and RMMH_BACKEND=cuda (backend %s)" % rmmh.BACKEND)
        return 0
    rows = cupy_rows(args.size, args.iters, args.repeats)
    rows += torch_rows(args.size, args.iters, args.repeats)
    train = [] if args.no_train else train_rows(args.batch, args.warmup, args.steps, args.rounds)
    text = report(rows, train, args)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
