"""Dask workers with rmmh: one worker process per GPU, each with its own rmmh pool, CuPy allocating
from it, a computation across them, and each worker's statistics read back.

    python3 python/examples/dask_rmmh.py [--pool-size 256MiB] [--n 4096]

1. start_cluster: a dask.distributed LocalCluster with one worker process per GPU, each seeing
   only its own GPU (CUDA_VISIBLE_DEVICES set per worker, so each uses its device 0; see
   worker_specs);
2. client.run(rmmh.reinitialize, pool_allocator=True, initial_pool_size=...) on every worker
   (RMM's 2019 README did the same), then client.run(use_rmmh) wraps each pool in a statistics
   adaptor and makes rmmh's CuPy allocator CuPy's;
3. compute: a dask array computation in CuPy blocks, spread over the workers;
4. client.run(worker_statistics): what each worker's resources allocated.

Without a GPU (RMMH_BACKEND=host) the same runs with two workers on the host backend, one for
each device it simulates, and the blocks are NumPy arrays copied through rmmh DeviceBuffers
instead of CuPy arrays. Those devices exist only inside each process's rmmh: a worker uses its
own simulated device 0, nothing names a GPU for it (no CUDA_VISIBLE_DEVICES), and dask's GPU
diagnostics are off in it (distributed.diagnostics.nvml: False), so that neither dask nor NVML
asks the driver about a device the machine may not have (on a machine with one GPU, NVML was
asked for device 1 and the worker failed to start). The scheduler and nannies, in this process,
keep the diagnostics of the machine's real GPUs. Needs dask and distributed (pure-Python wheels).
"""
import argparse
import os
import sys

import rmmh


def devices(backend=None):
    """The devices to start a worker for: on the CUDA backend the GPUs, CUDA_VISIBLE_DEVICES's
    list, else every device; on the host backend the simulated devices, "0" and "1" (whatever
    CUDA_VISIBLE_DEVICES says: it names real GPUs)."""
    if (backend or rmmh.BACKEND) == "cuda":
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        if visible:
            return [d.strip() for d in visible.split(",") if d.strip()]
    return [str(i) for i in range(rmmh._cuda.gpu.getDeviceCount())]


def worker_specs(gpus=None, env=None, backend=None):
    """{worker name: (environment, dask config)} for each device, what start_cluster gives the
    worker processes. On the CUDA backend, "gpu<id>": CUDA_VISIBLE_DEVICES=<id>, so the worker's
    device 0 is that GPU. On the host backend, "sim<i>": the environment as it is (`env` added)
    and distributed.diagnostics.nvml False, since the device is simulated in the worker's own
    rmmh (its device 0): naming it to CUDA or NVML would ask the driver about a GPU that may not
    exist."""
    backend = backend or rmmh.BACKEND
    gpus = devices(backend) if gpus is None else gpus
    if backend == "cuda":
        return {"gpu" + gpu: (dict(env or {}, CUDA_VISIBLE_DEVICES=gpu), {}) for gpu in gpus}
    return {"sim" + gpu: (dict(env or {}), {"distributed.diagnostics.nvml": False})
            for gpu in gpus}


def start_cluster(gpus=None, env=None):
    """A LocalCluster with one single-threaded worker process per device (worker_specs), and a
    Client; waits for every worker."""
    from dask.distributed import Client, LocalCluster
    specs = worker_specs(gpus, env)
    cluster = LocalCluster(n_workers=0, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    # the workers are spawned processes with this process's sys.path: they import rmmh, and this
    # file when it was imported as a module (run as a script, its functions travel by value).
    # A nanny's `config` is applied in its worker process after the environment (dotted keys)
    for name, (worker_env, config) in specs.items():
        spec = cluster.new_spec
        cluster.worker_spec[name] = {
            "cls": spec["cls"], "options": dict(spec["options"], env=worker_env, config=config)}
    cluster.sync(cluster._correct_state)
    client = Client(cluster)
    client.wait_for_workers(len(specs), timeout=180)
    return cluster, client


def use_rmmh():
    """On a worker, after rmmh.reinitialize: count what the pool allocates, and make rmmh CuPy's
    allocator. Returns what the worker uses."""
    import rmmh.statistics
    rmmh.statistics.enable_statistics()
    if rmmh.BACKEND == "cuda":
        import cupy
        from rmmh.allocators.cupy import rmm_cupy_allocator
        cupy.cuda.set_allocator(rmm_cupy_allocator)
        return "cupy"
    return "numpy (host backend)"


def _through_rmmh(block):
    """Host backend: a NumPy block copied into an rmmh DeviceBuffer and back."""
    import numpy as np
    buf = rmmh.DeviceBuffer.to_device(np.ascontiguousarray(block).ravel().view("u1"))
    return np.frombuffer(buf.tobytes(), block.dtype).reshape(block.shape)


def compute(client, n=4096, chunks=16):
    """sum(2 * ones((n, n)) + 1) over dask blocks of CuPy arrays (NumPy blocks through rmmh on
    the host backend); returns (result, expected)."""
    import dask.array as da
    x = da.ones((n, n), chunks=(max(1, n // chunks), n), dtype="f8")
    if rmmh.BACKEND == "cuda":
        import cupy
        x = x.map_blocks(cupy.asarray)
    else:
        x = x.map_blocks(_through_rmmh)
    total = (x * 2 + 1).sum(axis=1).sum()
    result = client.compute(total).result(timeout=180)
    return float(result), 3.0 * n * n


def worker_statistics():
    """On a worker: its device, resource and rmmh's counters (a dict)."""
    import dask
    import rmmh.statistics
    mr = rmmh.mr.get_current_device_resource()
    stats = rmmh.statistics.get_statistics()
    pool = getattr(mr, "upstream_mr", None)
    return {
        "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "nvml": dask.config.get("distributed.diagnostics.nvml"),
        "device": rmmh._cuda.gpu.getDevice(),
        "pid": os.getpid(),
        "resource": type(mr).__name__,
        "pool_bytes": pool.pool_size() if isinstance(pool, rmmh.mr.PoolMemoryResource) else None,
        "total_bytes": stats.total_bytes if stats else None,
        "total_count": stats.total_count if stats else None,
        "peak_bytes": stats.peak_bytes if stats else None,
        "current_bytes": stats.current_bytes if stats else None,
    }


def run(pool_size="256MiB", n=4096, gpus=None, env=None):
    """The whole example; returns (result, expected, {worker: statistics})."""
    cluster, client = start_cluster(gpus, env)
    try:
        client.run(rmmh.reinitialize, pool_allocator=True, initial_pool_size=pool_size)
        client.run(use_rmmh)
        result, expected = compute(client, n)
        return result, expected, client.run(worker_statistics)
    finally:
        client.close()
        cluster.close()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pool-size", default="256MiB")
    ap.add_argument("--n", type=int, default=4096)
    args = ap.parse_args(argv)
    result, expected, stats = run(args.pool_size, args.n)
    print("result %.1f (expected %.1f) on %d workers" % (result, expected, len(stats)))
    for worker, s in sorted(stats.items()):
        print(worker, s)
    return 0 if result == expected else 1


if __name__ == "__main__":
    sys.exit(main())
