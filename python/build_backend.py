"""rmmh's PEP 517 build backend, in the tree: it needs nothing but Python and gcc.

pip runs it for `pip install ./python` (and `pip wheel`, `pip install -e`, sdists). It compiles
the native libraries with build_native.py and zips the package into a wheel itself, so the build
needs no setuptools, wheel or network: the same command works with and without build isolation,
offline, on any pip >= 21.3 (which builds local directories in place). The package's metadata
is here (NAME, VERSION, ...), not in pyproject.toml.
"""
import base64
import hashlib
import io
import os
import shutil
import sys
import sysconfig
import tarfile
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import build_native  # noqa: E402

NAME = "rmmh"
VERSION = "0.1.0"
SUMMARY = "RAPIDS RMM's Python API over rmm.h, CUDA memory management in one C header"
REQUIRES_PYTHON = ">=3.9"
REQUIRES = ["numpy"]
EXTRAS = {"test": ["pytest"]}
PACKAGE = os.path.join(HERE, "rmmh")
DIST_INFO = "%s-%s.dist-info" % (NAME, VERSION)


def _metadata():
    lines = ["Metadata-Version: 2.1", "Name: " + NAME, "Version: " + VERSION,
             "Summary: " + SUMMARY, "License: MIT", "Requires-Python: " + REQUIRES_PYTHON]
    lines += ["Requires-Dist: " + r for r in REQUIRES]
    for extra, reqs in EXTRAS.items():
        lines.append("Provides-Extra: " + extra)
        lines += ['Requires-Dist: %s; extra == "%s"' % (r, extra) for r in reqs]
    lines += ["Classifier: Programming Language :: Python :: 3",
              "Classifier: Operating System :: POSIX :: Linux",
              "Classifier: Environment :: GPU :: NVIDIA CUDA", ""]
    return "\n".join(lines)


def _tag():
    """cpXY-cpXY-<platform>: the wheel holds native code, and the optional extension is built
    for this interpreter."""
    impl = "cp%d%d" % sys.version_info[:2]
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "%s-%s-%s" % (impl, impl, plat)


def _wheel_text(tag):
    return "Wheel-Version: 1.0\nGenerator: rmmh build_backend\nRoot-Is-Purelib: false\nTag: %s\n" % tag


def _package_files():
    """(archive name, path) of the package's Python files and its py.typed marker (PEP 561: type
    checkers read the package's annotations)."""
    for root, dirs, files in os.walk(PACKAGE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py") or f == "py.typed":
                path = os.path.join(root, f)
                yield os.path.relpath(path, HERE), path


class _Wheel:
    def __init__(self, path):
        self.zip = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED)
        self.record = []

    def add(self, arcname, data):
        if isinstance(data, str):
            data = data.encode()
        info = zipfile.ZipInfo(arcname, date_time=(2026, 1, 1, 0, 0, 0))
        info.external_attr = (0o755 if arcname.endswith(".so") else 0o644) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.record.append("%s,sha256=%s,%d" % (arcname, digest, len(data)))

    def close(self, tag):
        self.add(DIST_INFO + "/METADATA", _metadata())
        self.add(DIST_INFO + "/WHEEL", _wheel_text(tag))
        self.add(DIST_INFO + "/top_level.txt", NAME + "\n")
        self.record.append(DIST_INFO + "/RECORD,,")
        self.zip.writestr(DIST_INFO + "/RECORD", "\n".join(self.record) + "\n")
        self.zip.close()


def _read(path):
    with open(path, "rb") as f:
        return f.read()


# ---- PEP 517 -------------------------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    d = os.path.join(metadata_directory, DIST_INFO)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w") as f:
        f.write(_metadata())
    with open(os.path.join(d, "WHEEL"), "w") as f:
        f.write(_wheel_text(_tag()))
    return DIST_INFO


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """Builds the native libraries into a temporary directory and zips them with the package."""
    tag = _tag()
    name = "%s-%s-%s.whl" % (NAME, VERSION, tag)
    with tempfile.TemporaryDirectory(prefix="rmmh_build_") as tmp:
        built = build_native.build(tmp, verbose=True)
        build_native.copy_headers(os.path.join(tmp, "include"))
        wheel = _Wheel(os.path.join(wheel_directory, name))
        for arcname, path in _package_files():
            wheel.add(arcname, _read(path))
        for path in sorted(p for p in built.values() if p):
            wheel.add("rmmh/" + os.path.basename(path), _read(path))
        for h in build_native.HEADERS:
            wheel.add("rmmh/include/" + h, _read(os.path.join(tmp, "include", h)))
        wheel.close(tag)
    return name


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 660: builds the native libraries in place (python/rmmh/) and installs a .pth file
    pointing at python/, so edits to the Python files take effect at once."""
    build_native.build(PACKAGE, verbose=True)
    build_native.copy_headers(os.path.join(PACKAGE, "include"))
    tag = _tag()
    name = "%s-%s-%s.whl" % (NAME, VERSION, tag)
    wheel = _Wheel(os.path.join(wheel_directory, name))
    wheel.add("__editable___rmmh.pth", HERE + "\n")
    wheel.close(tag)
    return name


def build_sdist(sdist_directory, config_settings=None):
    """python/ as a source archive, with rmm.h and rmm_cuda.h in src/ so it builds anywhere."""
    base = "%s-%s" % (NAME, VERSION)
    name = base + ".tar.gz"
    hdr = build_native.find_headers()
    files = ["pyproject.toml", "build_backend.py", "build_native.py"]
    for sub in ("src", "rmmh", "tests", "bench"):
        for root, dirs, names in os.walk(os.path.join(HERE, sub)):
            dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "include"))
            for f in sorted(names):
                if (f.endswith((".py", ".c", ".h", ".map", ".sh")) or f == "py.typed") \
                        and f not in build_native.HEADERS:
                    files.append(os.path.relpath(os.path.join(root, f), HERE))
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        def add_bytes(arcname, data):
            info = tarfile.TarInfo(base + "/" + arcname)
            info.size, info.mtime, info.mode = len(data), 1767225600, 0o644
            tar.addfile(info, io.BytesIO(data))
        add_bytes("PKG-INFO", _metadata().encode())
        for f in files:
            if os.path.exists(os.path.join(HERE, f)):
                add_bytes(f, _read(os.path.join(HERE, f)))
        for h in build_native.HEADERS:
            add_bytes("src/" + h, _read(os.path.join(hdr, h)))
    return name
