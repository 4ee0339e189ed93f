"""Builds the native half of rmmh with gcc alone (never nvcc).

    python3 python/build_native.py [--out DIR] [--force] [--werror]

Compiles src/rmmh.c, which defines RMM_IMPLEMENTATION and includes rmm.h, into
  librmmh_host.so  the host backend (-DRMM_BACKEND_HOST): no GPU, no CUDA; always built;
  librmmh.so       the CUDA backend, with the CUDA runtime linked statically (libcudart_static.a)
                   so that it cannot clash with the cudart of CuPy or PyTorch in the same process;
                   built when the CUDA toolkit is found ($CUDA_HOME, default /usr/local/cuda);
  _accel*.so       an optional CPython extension: DeviceBuffer's constructor and deallocator and
                   the resources' allocate/deallocate in C (the package works without it, with
                   ctypes alone). Built for Python 3.10+ with the GIL, against Python.h or, where
                   that is not installed, against src/pyabi.h (the stable ABI's declarations);
                   RMMH_NO_ACCEL=1 skips it.
Only rmm_*, rmmh_* and the 2019 rmm* names are exported (src/rmmh.map).

rmm.h and rmm_cuda.h are taken from $RMMH_RMM_H_DIR, else from the repository root (the parent
of this directory), else from src/ (where an sdist carries them). build_backend.py (what pip
runs) calls build() and also copies the headers into the package (rmmh/include/); `make python`
runs this file for in-place builds.
"""
import argparse
import os
import shutil
import subprocess
import sys
import sysconfig

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "src")
HEADERS = ("rmm.h", "rmm_cuda.h")


def find_headers():
    """The directory holding rmm.h and rmm_cuda.h."""
    candidates = [os.environ.get("RMMH_RMM_H_DIR"), os.path.dirname(HERE), SRC]
    for d in candidates:
        if d and all(os.path.isfile(os.path.join(d, h)) for h in HEADERS):
            return d
    raise SystemExit("rmmh: rmm.h and rmm_cuda.h not found (looked in %s); set RMMH_RMM_H_DIR"
                     % ", ".join(c for c in candidates if c))


def find_cuda():
    """CUDA_HOME when it has the runtime headers and the static runtime, else None."""
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    inc = os.path.join(home, "include", "cuda_runtime_api.h")
    for libdir in ("lib64", "lib", os.path.join("targets", "x86_64-linux", "lib")):
        lib = os.path.join(home, libdir, "libcudart_static.a")
        if os.path.isfile(inc) and os.path.isfile(lib):
            return home, lib
    return None


def python_include():
    """The directory of Python.h, or None (RMMH_PYTHON_H=0 pretends it is missing)."""
    inc = sysconfig.get_paths().get("include")
    if os.environ.get("RMMH_PYTHON_H") == "0":
        return None
    if inc and os.path.isfile(os.path.join(inc, "Python.h")):
        return inc
    return None


def accelerator_unavailable(wanted=True):
    """Why the accelerator cannot be built for this Python, or None."""
    if not wanted or os.environ.get("RMMH_NO_ACCEL") == "1":
        return "disabled (RMMH_NO_ACCEL=1)"
    if sys.version_info < (3, 10):
        return "it needs Python 3.10 or later"
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        return "free-threaded Python"
    if not os.path.isfile(os.path.join(SRC, "_accel.c")):
        return "src/_accel.c missing"
    return None


def _stale(target, sources):
    if not os.path.exists(target):
        return True
    t = os.path.getmtime(target)
    return any(os.path.getmtime(s) > t for s in sources)


def _run(cmd, verbose):
    if verbose:
        print(" ".join(cmd), flush=True)
    subprocess.check_call(cmd)


def build(out_dir, force=False, werror=False, verbose=True, accel=True):
    """Builds the libraries into out_dir; returns {name: path or None} and prints what it skipped."""
    cc = os.environ.get("CC", "gcc")
    hdr = find_headers()
    os.makedirs(out_dir, exist_ok=True)
    src = os.path.join(SRC, "rmmh.c")
    mapfile = os.path.join(SRC, "rmmh.map")
    deps = [src, os.path.join(SRC, "rmmh_hooks.c"), mapfile, __file__] + [os.path.join(hdr, h) for h in HEADERS]
    # (an undeclared function is an error in every build: pyabi.h lacked PyDict_Values once, and the
    # accelerator built without Python.h called it as an int function: a crash; red team 46)
    warn = ["-Wall", "-Wextra", "-Wno-unused-function", "-Werror=implicit-function-declaration"] + (["-Werror"] if werror else [])
    common = [cc, "-std=c11", "-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-I", hdr] + warn
    link = ["-Wl,--version-script=" + mapfile, "-Wl,--exclude-libs,ALL", "-Wl,-z,defs"]
    built = {}

    host = os.path.join(out_dir, "librmmh_host.so")
    if force or _stale(host, deps):
        _run(common + ["-DRMM_BACKEND_HOST", src, "-o", host] + link + ["-lpthread"], verbose)
    built["librmmh_host.so"] = host

    cuda = find_cuda()
    target = os.path.join(out_dir, "librmmh.so")
    if cuda:
        home, static = cuda
        if force or _stale(target, deps):
            _run(common + ["-isystem", os.path.join(home, "include"), src, "-o", target] + link
                 + [static, "-ldl", "-lrt", "-lpthread"], verbose)
        built["librmmh.so"] = target
    else:
        print("rmmh: CUDA toolkit not found (set CUDA_HOME); building the host backend only",
              flush=True)
        built["librmmh.so"] = None

    acc = os.path.join(out_dir, "_accel" + (sysconfig.get_config_var("EXT_SUFFIX") or ".so"))
    why = accelerator_unavailable(accel)
    if why is None:
        pyinc = python_include()
        flags = ["-I", pyinc] if pyinc else ["-DRMMH_NO_PYTHON_H", "-I", SRC]
        acc_src = os.path.join(SRC, "_accel.c")
        if force or _stale(acc, [acc_src, os.path.join(SRC, "pyabi.h"), __file__]):
            _run([cc, "-std=c11", "-O2", "-fPIC", "-shared", "-fvisibility=hidden"] + flags
                 + warn + [acc_src, "-o", acc], verbose)
        if not pyinc:
            print("rmmh: Python.h not found: the accelerator was built with src/pyabi.h "
                  "(the stable ABI's declarations)", flush=True)
        built["_accel"] = acc
    else:
        print("rmmh: optional accelerator not built (%s); ctypes alone will be used" % why,
              flush=True)
        built["_accel"] = None
    return built


def copy_headers(dest_dir):
    """Copies rmm.h and rmm_cuda.h into dest_dir (the package's include/ or src/ for an sdist)."""
    hdr = find_headers()
    os.makedirs(dest_dir, exist_ok=True)
    for h in HEADERS:
        s, d = os.path.join(hdr, h), os.path.join(dest_dir, h)
        if os.path.abspath(s) != os.path.abspath(d):
            shutil.copyfile(s, d)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "rmmh"))
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--werror", action="store_true")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    build(args.out, force=args.force, werror=args.werror, verbose=not args.quiet)
    copy_headers(os.path.join(args.out, "include"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
