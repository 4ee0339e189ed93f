"""Shared fixtures, and the closing line `make test` counts.

The suite runs against the library RMMH_BACKEND selects: `make test` runs it on the host backend
(twice: with the C accelerator and with ctypes alone, RMMH_NO_ACCEL=1), gpu_check.sh on the CUDA
backend. Tests that need a GPU, or a framework (CuPy, Numba, PyTorch) that is missing, skip and
say why.

The last line pytest prints is "N passed, N failed[, N skipped]", the format tests/run.sh sums.
"""
import os
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
# rmm.h's debug log (errors the tests provoke on purpose) goes to a temporary file, not ./
os.environ.setdefault("RMM_DEBUG_LOG_FILE",
                      os.path.join(tempfile.gettempdir(), "rmmh_tests_debug_log.txt"))
# the package next to the tests (make python builds it), unless RMMH_TEST_INSTALLED=1 asks for
# the one Python finds (gpu_check.sh tests what pip installed)
if os.environ.get("RMMH_TEST_INSTALLED") != "1":
    sys.path.insert(0, os.path.dirname(HERE))

import rmmh  # noqa: E402
import rmmh.statistics  # noqa: E402
from rmmh import _lib  # noqa: E402

HOST = rmmh.BACKEND == "host"
HAVE_GPU = not HOST and _lib.rmmh_device_count() > 0

requires_gpu = pytest.mark.skipif(not HAVE_GPU, reason="needs a GPU and RMMH_BACKEND=cuda")
# the host backend simulates two devices; a machine with two GPUs runs these on the CUDA backend
TWO_DEVICES = (HOST or HAVE_GPU) and _lib.rmmh_device_count() >= 2
requires_two_devices = pytest.mark.skipif(
    not TWO_DEVICES, reason="needs two devices (the host backend simulates two; this machine has "
    "%d GPU(s) on the %s backend)" % (_lib.rmmh_device_count(), rmmh.BACKEND))
TWO_GPUS = HAVE_GPU and _lib.rmmh_device_count() >= 2
requires_two_gpus = pytest.mark.skipif(
    not TWO_GPUS, reason="needs two GPUs (%d here)" % (_lib.rmmh_device_count() if HAVE_GPU else 0))
host_only = pytest.mark.skipif(not HOST, reason="host backend behaviour (RMMH_BACKEND=host)")


# ---- child processes (PyTorch's allocator must be set before any CUDA allocation, Numba's before
# its context exists, and CUDA IPC needs a second process) ---------------------------------------
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(rmmh.__file__)))


def child_env(**extra):
    """This process's environment with the rmmh under test first on PYTHONPATH."""
    env = dict(os.environ)
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = PACKAGE_PARENT + (os.pathsep + path if path else "")
    env.update({k: str(v) for k, v in extra.items()})
    return env


_gc_held = [False]  # (fail_next turned the collector off)


def fail_next(call, times=1, status=0, nth=1):
    """Host backend: `times` simulated CUDA calls in a row named `call`, the first being the nth
    from now, fail with `status` (0 or RMM_ERROR_CUDA: a CUDA error); fail_next(None) clears what
    is armed. Arming collects garbage first and keeps the cyclic collector off until it is
    cleared: a buffer of an earlier test collected inside the armed window made its own free (a
    cudaFree) and used up the failure meant for the test's call (seen once in red team 51's runs:
    "DID NOT RAISE")."""
    import ctypes
    import gc
    if call:
        gc.collect()
        if gc.isenabled():
            gc.disable()
            _gc_held[0] = True
    elif _gc_held[0]:
        _gc_held[0] = False
        gc.enable()
    f = _lib.lib.rmm_host_backend_fail_calls
    f.argtypes = (ctypes.c_char_p, ctypes.c_uint, ctypes.c_uint, ctypes.c_int)
    f.restype = None
    f(call.encode() if call else None, nth if call else 0, times, status)


def start_child(code, *args, env=None, path=None, **kwargs):
    """Starts code (a script, dedented; written to `path` when given, so multiprocessing's spawn
    can import its functions) in a new interpreter with args, its output going to temporary files
    (so a chatty child never blocks on a pipe). wait_child collects it."""
    import subprocess
    import textwrap
    code = textwrap.dedent(code)
    if path is not None:
        with open(path, "w") as f:
            f.write(code)
        cmd = [sys.executable, str(path)]
    else:
        cmd = [sys.executable, "-c", code]
    out, err = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
    proc = subprocess.Popen(cmd + [str(a) for a in args], stdout=out, stderr=err, text=True,
                            env=env or child_env(), **kwargs)
    return proc, out, err


def wait_child(child, timeout=240):
    """Waits for a child of start_child; fails the test with its output unless it exits 0.
    Returns its stdout."""
    proc, out, err = child
    try:
        rc = proc.wait(timeout=timeout)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    out.seek(0)
    err.seek(0)
    stdout, stderr = out.read(), err.read()
    out.close()
    err.close()
    if rc != 0:
        pytest.fail("child process exited %d\n--- stdout\n%s\n--- stderr\n%s"
                    % (rc, stdout[-4000:], stderr[-6000:]), pytrace=False)
    return stdout


def run_child(code, *args, timeout=240, env=None, path=None, **kwargs):
    """Runs code in a new interpreter with args (start_child, then wait_child): fails the test
    with its output unless it exits 0. Returns its stdout."""
    return wait_child(start_child(code, *args, env=env, path=path, **kwargs), timeout=timeout)


class EarlyChildren:
    """The children of one module's tests, started together when its first test asks (see the
    early_children fixture); wait(name) collects one, or runs it then if it was not started."""

    def __init__(self, specs):
        self.specs, self.started = specs, {}

    def start(self, name):
        spec = self.specs[name]()
        if spec is not None:
            code, args, kwargs = spec
            self.started[name] = start_child(code, *args, **kwargs)

    def wait(self, name, timeout=240):
        if name not in self.started:
            self.start(name)
        return wait_child(self.started.pop(name), timeout=timeout)

    def close(self):
        for proc, out, err in self.started.values():
            proc.kill()
            proc.wait()
            out.close()
            err.close()
        self.started.clear()


@pytest.fixture(scope="module")
def early_children(request):
    """Child processes that each spend seconds importing a framework (PyTorch, Numba) run side by
    side rather than one after another: the module's EARLY_CHILDREN maps a test's name to a
    function returning (code, args, kwargs for start_child), or None when that child cannot run
    here. At the module's first test that asks, the child of every selected test not marked to
    skip starts; each test then waits for its own. What runs is the same, in less wall time."""
    early = EarlyChildren(getattr(request.module, "EARLY_CHILDREN", {}))
    for item in request.session.items:
        if item.module is not request.module or item.name not in early.specs:
            continue
        if any(m.args and m.args[0] for m in item.iter_markers("skipif")):
            continue
        early.start(item.name)
    yield early
    early.close()


def pytest_configure(config):
    # make test's CUDA job runs `-m "not backend_independent"`: these tests check the tooling (the
    # RMM-suite runner, the wheel build), the same on every backend, and its host jobs run them
    config.addinivalue_line("markers", "backend_independent: the same on every backend; make test "
                            "runs it on the host backend only")
    # a GPU integration test of many seconds (a framework's training step): make test leaves it to
    # make gpu-check's frameworks part (python/tests/gpu_frameworks.sh) and to make test-long
    config.addinivalue_line("markers", "long: many seconds on a GPU; make test runs it only under "
                            "RMM_TEST_LONG=1 (make test-long), make gpu-check always")


def pytest_collection_modifyitems(config, items):
    """On the CUDA backend without a usable GPU only the backend tests can run."""
    if HOST or HAVE_GPU:
        return
    why = pytest.mark.skip(reason="RMMH_BACKEND=cuda but no usable GPU (%s)" % _lib.last_error())
    for item in items:
        if "test_backends" not in item.nodeid:
            item.add_marker(why)


def pytest_report_header(config):
    return ("rmmh: backend %s, accelerator %s, library %s"
            % (rmmh.BACKEND, "on" if rmmh.ACCELERATED else "off (ctypes alone)",
               _lib.LIBRARY_PATH))


@pytest.fixture(autouse=True)
def rmm_auto_reinitialize():
    """Every test starts from, and leaves, the default resources (as RMM's suite does)."""
    yield
    if _gc_held[0]:  # (a test that armed fail_next and never cleared it: the collector back on)
        import gc
        _gc_held[0] = False
        gc.enable()
    rmmh.reinitialize()


@pytest.fixture
def stats_mr():
    """A StatisticsResourceAdaptor made current for the test."""
    with rmmh.statistics.statistics():
        yield rmmh.mr.get_current_device_resource()


@pytest.fixture
def host_capacity():
    """Sets the host backend's simulated device size for one test (restored after)."""
    if not HOST:
        pytest.skip("the simulated capacity exists on the host backend only")
    yield lambda n: _lib.check(_lib.rmmh_set_host_capacity(n))
    _lib.rmmh_set_host_capacity(4 << 30)


_counts = {}


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_sessionfinish(session, exitstatus):
    yield
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if tr is not None:
        stats = tr.stats
        _counts.update(passed=len(stats.get("passed", [])),
                       failed=len(stats.get("failed", [])) + len(stats.get("error", [])),
                       skipped=len(stats.get("skipped", [])))


def pytest_unconfigure(config):
    if _counts:
        line = "%d passed, %d failed" % (_counts["passed"], _counts["failed"])
        if _counts["skipped"]:
            line += ", %d skipped" % _counts["skipped"]
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
