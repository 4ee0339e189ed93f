"""What both Python benchmarks share (imported from the scripts' own folder): the timing loop and
the machine they ran on."""
import gc
import platform
import statistics
import subprocess
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


def cpu_model():
    """The CPU's model name (from /proc/cpuinfo), else platform.processor(), else "?"."""
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return cpu


def gpu_name():
    """nvidia-smi's "name, driver_version" of the first GPU, or None."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stdout.strip().splitlines() if out.returncode == 0 else []
    return lines[0] if lines else None
