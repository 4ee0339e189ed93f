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


CHILD_SECOND = """
import ctypes, pickle, sys, types
class CupyOOM(MemoryError):
    def __init__(self, size, total, limit=0):
        super().__init__("Out of memory allocating %d bytes" % size)
_MALLOC = ctypes.PYFUNCTYPE(ctypes.c_ssize_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
_FREE = ctypes.PYFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)
class Memory:  # CuPy's CFunctionAllocatorMemory: a checked C call, the free in __del__
    def __init__(self, size, malloc, free):
        self.free, self.ptr = free, 0
        self.ptr = _MALLOC(malloc)(None, size, 0)
    def __del__(self):
        if self.ptr:
            _FREE(self.free)(None, self.ptr, 0)
class CFunctionAllocator:
    def __init__(self, param, malloc, free, owner):
        self.m, self.f = malloc, free
    def malloc(self, size):
        return types.SimpleNamespace(mem=Memory(size, self.m, self.f))
cupy = types.ModuleType("cupy")
cupy.cuda = types.SimpleNamespace(memory=types.SimpleNamespace(OutOfMemoryError=CupyOOM, CFunctionAllocator=CFunctionAllocator),
                                  stream=types.SimpleNamespace(is_ptds_enabled=lambda: False))
sys.modules["cupy"] = cupy
import rmmh as rmm
import rmmh.allocators as A
import rmmh.allocators.cupy as rc
M = rmm.mr
before = A.hook_statistics().failed
alloc = rc.fast_allocator()
assert rc.FAST_PATH_RAISES is True
assert A.hook_statistics().failed == before, "the probe counted as a failed allocation"
malloc = rc.rmm_cupy_fast_allocator
oom = rc.OutOfMemoryError

def spill(nbytes):
    raise RuntimeError("spill callback failed")
M.set_current_device_resource(M.FailureCallbackResourceAdaptor(M.LimitingResourceAdaptor(M.CudaMemoryResource(), 1000), spill))
for where in ("plain", "except", "finally"):
    try:
        if where == "plain":
            malloc(5000)
        elif where == "except":
            try:
                raise KeyError("being handled")
            except KeyError:
                malloc(5000)
        else:
            try:
                pass
            finally:
                malloc(5000)
    except BaseException as e:
        got = e
    assert isinstance(got, RuntimeError) and "spill callback" in str(got), (where, repr(got))

M.set_current_device_resource(M.LimitingResourceAdaptor(M.CudaMemoryResource(), 1000))
try:
    try:
        raise KeyError("being handled")
    except KeyError:
        malloc(5000)
except BaseException as e:
    got = e
assert type(got) is oom and "limiting" in str(got), repr(got)
assert A.hook_statistics().failed == before + 4  # (three with the callback, one out of memory)
rmm._lib.rmm_set_last_error(3, b"an unrelated later failure")
back = pickle.loads(pickle.dumps(got))
assert type(back) is oom and str(back) == str(got) and back.status == got.status, (repr(back), repr(got))
assert isinstance(back, MemoryError) and isinstance(back, CupyOOM)
print("OK", flush=True)
"""


def test_the_fast_path_errors_while_another_is_handled_pickle_and_the_probe():
    """The fast path's error raised inside an except or finally block is the real one (Python 3.10
    and 3.11 built the out-of-memory type a second time from it: a TypeError), its out-of-memory
    error pickles with its message (a worker process's reached the parent as AttributeError), and
    making the fast allocator counts no failed allocation (its probe did; red team 33)."""
    assert "OK" in run_child(CHILD_SECOND)


CHILD_PINNED = """
import ctypes, gc, sys, types, weakref
cupy = types.ModuleType("cupy")
cupy.cuda = types.SimpleNamespace(memory=types.SimpleNamespace(OutOfMemoryError=type("OutOfMemoryError", (MemoryError,), {})))
sys.modules["cupy"] = cupy
import rmmh as rmm
import rmmh.allocators.cupy as rc
rc._configure_raise(True)
alive = weakref.ref(rc._oom_type())
rc._OOMType = None  # (as the module's globals are cleared at interpreter shutdown)
gc.collect()
assert alive() is not None, "the type the C hook raises was freed while configured"
print("OK", flush=True)
"""


def test_the_fast_path_holds_a_reference_to_the_type_it_raises():
    """The C hook keeps the address of the out-of-memory type it raises; it held no reference, so
    once the module's global went (interpreter shutdown) an allocation failing late used a freed
    type (a red team's find)."""
    assert "OK" in run_child(CHILD_PINNED)


def test_the_per_thread_default_stream_variable_is_read_as_cupy_reads_it(monkeypatch):
    """CuPy turns per-thread default streams on where int(CUPY_CUDA_PER_THREAD_DEFAULT_STREAM) is
    not 0; rmmh read any value but "" and "0" as on, so "00" put rmmh's allocations on the
    per-thread stream while CuPy's work ran on the legacy one (a red team's find)."""
    import types
    import rmmh.allocators.cupy as rc
    monkeypatch.setattr(rc, "cupy", types.SimpleNamespace(cuda=types.SimpleNamespace()), raising=False)
    for value, on in (("00", False), ("0", False), ("1", True), ("2", True), (" 1 ", True)):
        monkeypatch.setenv("CUPY_CUDA_PER_THREAD_DEFAULT_STREAM", value)
        assert rc._ptds() is on, value
    monkeypatch.delenv("CUPY_CUDA_PER_THREAD_DEFAULT_STREAM")
    assert rc._ptds() is False
