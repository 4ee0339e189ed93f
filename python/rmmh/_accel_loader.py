"""Loads the optional accelerator (src/_accel.c) before the classes it is a base of are defined.

ACCEL is the extension module when it exists, was built for this Python, and finds in the loaded
librmmh the helpers it needs; else None, and everything runs through ctypes. RMMH_NO_ACCEL=1
forces None. Its Python objects (types, helpers) are handed to it by _device_buffer once they
exist (bind_objects); until then its functions refuse to run.
"""
import os

from . import _lib

ACCEL = None
if os.environ.get("RMMH_NO_ACCEL") != "1":
    try:
        from . import _accel as _module
        _module.bind_library(_lib.LIBRARY_PATH, _lib.ABI_VERSION)
    except ImportError:
        pass
    else:
        ACCEL = _module

ResourceBase = ACCEL.ResourceBase if ACCEL is not None else None
BufferBase = ACCEL.BufferBase if ACCEL is not None else None
