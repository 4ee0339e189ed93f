"""The two native libraries and their selection: what librmmh exports, the static CUDA runtime,
RMMH_BACKEND, the CUDA library on a machine without a GPU, and the accelerator switch. Run in
subprocesses, since a process loads one backend."""
import os
import shutil
import subprocess
import sys

import pytest

import rmmh
from conftest import HAVE_GPU

PKG = os.path.dirname(os.path.abspath(rmmh.__file__))
ROOT = os.path.dirname(PKG)


def run(code, **env):
    e = dict(os.environ)
    e.update({k: v for k, v in env.items() if v is not None})
    for k, v in env.items():
        if v is None:
            e.pop(k, None)
    e["PYTHONPATH"] = ROOT + os.pathsep + e.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True,
                          timeout=120)


def exports(lib):
    if not shutil.which("nm"):
        pytest.skip("nm (binutils) is not installed")
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True)
    return {line.split()[-1] for line in out.stdout.splitlines() if line.strip()}


@pytest.mark.parametrize("name", ["librmmh_host.so", "librmmh.so"])
def test_exports_only_rmm_names(name):
    lib = os.path.join(PKG, name)
    if not os.path.exists(lib):
        pytest.skip("%s was not built (no CUDA toolkit)" % name)
    names = exports(lib)
    assert {"rmm_allocate", "rmm_pool_create", "rmmh_alloc", "rmmInitialize"} <= names
    assert all(n.startswith("rmm") for n in names), sorted(n for n in names
                                                          if not n.startswith("rmm"))


def test_cuda_runtime_is_static():
    lib = os.path.join(PKG, "librmmh.so")
    if not os.path.exists(lib):
        pytest.skip("librmmh.so was not built (no CUDA toolkit)")
    if not shutil.which("readelf"):
        pytest.skip("readelf (binutils) is not installed")
    dyn = subprocess.run(["readelf", "-d", lib], capture_output=True, text=True).stdout
    assert "libcudart" not in dyn
    assert not any(n.startswith("cuda") for n in exports(lib))


def test_unknown_backend_is_an_import_error():
    r = run("import rmmh", RMMH_BACKEND="gpu")
    assert r.returncode != 0 and "RMMH_BACKEND" in r.stderr


def test_host_backend_selected():
    r = run("import rmmh; print(rmmh.BACKEND)", RMMH_BACKEND="host")
    assert r.returncode == 0 and r.stdout.strip() == "host"


def test_cuda_backend_without_a_gpu():
    if not os.path.exists(os.path.join(PKG, "librmmh.so")):
        pytest.skip("librmmh.so was not built (no CUDA toolkit)")
    if HAVE_GPU:
        pytest.skip("this machine has a GPU")
    # HAVE_GPU is False on the host backend whatever the machine has: ask the CUDA library
    probe = run("from rmmh import _lib; print(_lib.rmmh_device_count())", RMMH_BACKEND="cuda")
    if probe.returncode == 0 and probe.stdout.strip() not in ("", "0"):
        pytest.skip("this machine has a GPU")
    code = "\n".join([
        "import warnings, rmmh",
        "assert rmmh.BACKEND == 'cuda'",
        "try:",
        "    rmmh.DeviceBuffer(size=10)",
        "except rmmh.RMMError as e:",
        "    print('error', type(e).__name__)",
        "with warnings.catch_warnings(record=True) as w:",
        "    warnings.simplefilter('always')",
        "    rmmh.reinitialize()",
        "    print('warned', len(w))",
        "try:",
        "    rmmh.mr.CudaMemoryResource()",
        "except rmmh.RMMError as e:",
        "    print('resource', type(e).__name__)",
    ])
    r = run(code, RMMH_BACKEND="cuda")
    assert r.returncode == 0, r.stderr
    assert "error CUDAError" in r.stdout and "warned 1" in r.stdout
    assert "resource CUDAError" in r.stdout


def test_missing_cuda_library_says_how_to_fix(tmp_path):
    copy = tmp_path / "rmmh"
    shutil.copytree(PKG, copy, ignore=shutil.ignore_patterns("librmmh.so", "__pycache__"))
    e = dict(os.environ, PYTHONPATH=str(tmp_path))
    e.pop("RMMH_BACKEND", None)
    r = subprocess.run([sys.executable, "-c", "import rmmh"], env=e, capture_output=True,
                       text=True, cwd=str(tmp_path))
    assert r.returncode != 0 and "RMMH_BACKEND=host" in r.stderr and "CUDA toolkit" in r.stderr


def test_accelerator_switch():
    have = any(f.startswith("_accel") and f.endswith(".so") for f in os.listdir(PKG))
    r = run("import rmmh; print(rmmh.ACCELERATED)", RMMH_BACKEND="host", RMMH_NO_ACCEL=None)
    assert r.stdout.strip() == str(have)
    r = run("import rmmh; print(rmmh.ACCELERATED, rmmh.DeviceBuffer.__mro__[1].__name__)",
            RMMH_BACKEND="host", RMMH_NO_ACCEL="1")
    assert r.stdout.split() == ["False", "_PyBufferBase"]


def test_an_unbound_accelerator_refuses_its_calls():
    # the extension imported but not bound (RMMH_NO_ACCEL=1, or a refused binding): its buffer's
    # __init__ and alloc/free called the library through NULL and crashed (red team 36c)
    if not any(f.startswith("_accel") and f.endswith(".so") for f in os.listdir(PKG)):
        pytest.skip("no C extension built")
    code = ("import rmmh, rmmh._accel as A\n"
            "for f in (lambda: A.BufferBase.__new__(A.BufferBase).__init__(size=8), lambda: A.alloc(0, 8, 0),\n"
            "          lambda: A.free(0, 0, 8, 0, 0)):\n"
            "    try:\n"
            "        f()\n"
            "    except RuntimeError as e:\n"
            "        print('refused', 'not bound' in str(e))\n")
    r = run(code, RMMH_BACKEND="host", RMMH_NO_ACCEL="1")
    assert r.returncode == 0 and r.stdout.split() == ["refused", "True"] * 3, r.stdout + r.stderr


def test_import_does_not_touch_the_device():
    # importing rmmh (and creating nothing) must not initialize CUDA: safe before fork()
    r = run("import rmmh, rmmh._device_buffer as m; print(m._ndev)", RMMH_BACKEND=None)
    if "built without the CUDA toolkit" in r.stderr:
        pytest.skip("no CUDA library")
    assert r.returncode == 0 and r.stdout.strip() == "None"


SMOKE = """
import gc, rmmh
assert rmmh.ACCELERATED
pool = rmmh.mr.PoolMemoryResource(rmmh.mr.CudaMemoryResource(), 1 << 20)
rmmh.mr.set_current_device_resource(pool)
s = rmmh.Stream()
bufs = [rmmh.DeviceBuffer.to_device(bytes([i]) * (100 + i), stream=s) for i in range(50)]
bufs[0].resize(5000, stream=rmmh.DEFAULT_STREAM)
s.synchronize()
assert all(b.tobytes()[:100] == bytes([i]) * 100 for i, b in enumerate(bufs))
try:
    rmmh.DeviceBuffer(size=-1)
except OverflowError:
    pass
p = pool.allocate(1000); pool.deallocate(p, 1000)
cycle = [bufs, pool, s]; cycle.append(cycle)
del bufs, pool, s, cycle
rmmh.mr.set_current_device_resource(rmmh.mr.CudaMemoryResource())
gc.collect()
print("ok")
"""


def test_accelerator_built_without_python_h(tmp_path):
    """The accelerator compiled against src/pyabi.h (for Pythons without their headers) works."""
    build_native = pytest.importorskip("build_native",
                                       reason="python/build_native.py is not on the path "
                                       "(testing an installed package)")
    if not shutil.which(os.environ.get("CC", "gcc")):
        pytest.skip("no C compiler")
    if build_native.accelerator_unavailable() is not None:
        pytest.skip("no accelerator for this Python: %s" % build_native.accelerator_unavailable())
    pkg = tmp_path / "rmmh"
    shutil.copytree(PKG, pkg, ignore=shutil.ignore_patterns("_accel.*", "__pycache__"))
    env = dict(os.environ, RMMH_PYTHON_H="0")
    subprocess.run([sys.executable, build_native.__file__, "--out", str(pkg),
                    "--quiet"], env=env, check=True, capture_output=True)
    e = dict(os.environ, PYTHONPATH=str(tmp_path), RMMH_BACKEND="host")
    e.pop("RMMH_NO_ACCEL", None)
    r = subprocess.run([sys.executable, "-c", SMOKE], env=e, capture_output=True, text=True,
                       cwd=str(tmp_path))
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


@pytest.mark.backend_independent
def test_wheel_and_sdist(tmp_path):
    """The in-tree PEP 517 backend: a wheel holding the package, its py.typed marker, both
    libraries (when CUDA is there), the headers and a RECORD that matches; an sdist carrying rmm.h
    and py.typed."""
    if os.environ.get("RMMH_NO_ACCEL") == "1":
        pytest.skip("built once per make test (in the run with the accelerator)")
    build_backend = pytest.importorskip("build_backend", reason="python/build_backend.py is not "
                                        "on the path (testing an installed package)")
    import base64
    import hashlib
    import tarfile
    import zipfile
    name = build_backend.build_wheel(str(tmp_path))
    with zipfile.ZipFile(tmp_path / name) as z:
        names = set(z.namelist())
        assert {"rmmh/__init__.py", "rmmh/py.typed", "rmmh/librmmh_host.so", "rmmh/include/rmm.h",
                "rmmh-0.1.0.dist-info/METADATA", "rmmh-0.1.0.dist-info/RECORD"} <= names
        record = z.read("rmmh-0.1.0.dist-info/RECORD").decode().splitlines()
        for line in record:
            path, digest, size = line.rsplit(",", 2)
            if digest:
                data = z.read(path)
                want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
                assert digest == "sha256=" + want.decode() and int(size) == len(data)
        assert "Requires-Dist: numpy" in z.read("rmmh-0.1.0.dist-info/METADATA").decode()
    sdist = build_backend.build_sdist(str(tmp_path))
    with tarfile.open(tmp_path / sdist) as t:
        members = set(t.getnames())
    assert {"rmmh-0.1.0/src/rmm.h", "rmmh-0.1.0/src/rmmh.c", "rmmh-0.1.0/build_backend.py",
            "rmmh-0.1.0/pyproject.toml", "rmmh-0.1.0/PKG-INFO",
            "rmmh-0.1.0/rmmh/py.typed"} <= members
