"""setup.py: the package is pure Python plus the native libraries build_native.py compiles with
gcc (no nvcc, no Cython, no CMake) into the wheel's rmmh/ directory:

    pip install ./python                      # from the repository root (pip >= 21.3)
    CUDA_HOME=/opt/cuda pip install ./python  # the CUDA toolkit elsewhere than /usr/local/cuda

Without the CUDA toolkit only the host backend is built (and importing rmmh without
RMMH_BACKEND=host then says so). Without Python.h the optional accelerator is skipped.
"""
import os
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist
from setuptools.dist import Distribution

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_native  # noqa: E402


class BuildPyWithNative(build_py):
    """build_py, then the native libraries into the built package (or, for an editable
    install, into the source package)."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rmmh")
        else:
            out = os.path.join(self.build_lib, "rmmh")
        build_native.build(out, verbose=True)
        build_native.copy_headers(os.path.join(out, "include"))


class SdistWithHeaders(sdist):
    """sdist, carrying rmm.h and rmm_cuda.h in src/ so the sdist builds outside the repository."""

    def run(self):
        build_native.copy_headers(build_native.SRC)
        super().run()


class BinaryDistribution(Distribution):
    """The wheel holds native libraries: tag it for this platform and Python."""

    def has_ext_modules(self):
        return True


setup(
    distclass=BinaryDistribution,
    cmdclass={"build_py": BuildPyWithNative, "sdist": SdistWithHeaders},
)
