"""rmmh's CuPy fast path's errors without CuPy (the GPU tests with CuPy are in
test_allocators_cupy.py): a stand-in ``cupy`` module gives the base class, and rmmh_cupy_malloc is
called in raise mode as CuPy's Cython calls it (through PyDLL, the GIL held)."""
from conftest import run_child

CHILD = """
import ctypes, sys, types
cupy = types.ModuleType("cupy")
cupy.cuda = types.SimpleNamespace(memory=types.SimpleNamespace(OutOfMemoryError=type("OutOfMemoryError", (MemoryError,), {})))
sys.modules["cupy"] = cupy
import rmmh as rmm
from rmmh import _lib
import rmmh.allocators.cupy as rc
rc._configure_raise(True)
V, S, I = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
malloc = ctypes.PyDLL(_lib.LIBRARY_PATH).rmmh_cupy_malloc
malloc.restype, malloc.argtypes = V, [V, S, I]
oom = rc._oom_type()
M = rmm.mr

def fails(n, device=0):
    try:
        malloc(None, n, device)
    except BaseException as e:
        return e
    raise AssertionError("no exception")

M.set_current_device_resource(M.LimitingResourceAdaptor(M.CudaMemoryResource(), 1000))
e = fails(5000)
assert type(e) is oom and isinstance(e, MemoryError) and "limiting" in str(e), repr(e)
e = fails(100, device=7)  # no such device: not out of memory
assert not isinstance(e, oom) and isinstance(e, rmm.InvalidArgumentError), repr(e)

def spill(nbytes):
    raise RuntimeError("spill callback failed")
M.set_current_device_resource(M.FailureCallbackResourceAdaptor(M.LimitingResourceAdaptor(M.CudaMemoryResource(), 1000), spill))
e = fails(5000)  # the callback's own exception, as rmm_cupy_allocator raises it
assert isinstance(e, RuntimeError) and "spill callback" in str(e), repr(e)
M.set_current_device_resource(M.CudaMemoryResource())
try:
    M.LimitingResourceAdaptor(M.CudaMemoryResource(), 10).allocate(100)
except MemoryError as later:
    assert "spill" not in str(later)
print("OK", flush=True)
"""


def test_the_fast_path_raises_the_error_of_the_failure():
    """Out of memory (CuPy's type: it frees its caches and retries) only where memory ran out; a
    missing device is InvalidArgumentError and a callback's exception is raised as it is (every
    failure was CuPy's out-of-memory type; a red team's find)."""
    assert "OK" in run_child(CHILD)
