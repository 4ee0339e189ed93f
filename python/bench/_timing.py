"""The timing loop both Python benchmarks use (imported from the scripts' own folder)."""
import gc
import statistics
import time


def timeit(body, iters, repeats):
    """Median ns per call of body(iters) over repeats runs, after one warm-up run of a tenth, with
    the garbage collector off while timing."""
    body(max(1, iters // 10))
    runs = []
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            t0 = time.perf_counter_ns()
            body(iters)
            runs.append((time.perf_counter_ns() - t0) / iters)
    finally:
        if enabled:
            gc.enable()
    return statistics.median(runs)
