"""Numba's External Memory Management plugin over rmmh (RMM's ``rmm.allocators.numba``).

    from numba import cuda
    from rmmh.allocators.numba import RMMNumbaManager
    cuda.set_memory_manager(RMMNumbaManager)        # before Numba makes its context

or ``NUMBA_CUDA_MEMORY_MANAGER=rmmh.allocators.numba`` in the environment. Every device array Numba
allocates is then a DeviceBuffer of the current device's resource (on the default stream), freed
when Numba drops it. ``get_ipc_handle`` exports a block inside a pool, arena or fixed-size resource
at its right offset: it asks rmm.h for the base of the block's underlying allocation (the
resource knows it; RMM asks the driver, cuMemGetAddressRange), so the importer, which opens the
base, finds the block at base + offset.

Interface version 1: memalloc, get_memory_info, get_ipc_handle, initialize, reset, defer_cleanup
(host allocations are Numba's own, HostOnlyCUDAMemoryManager's).
"""
import contextlib
import weakref

from numba import cuda
from numba.cuda import HostOnlyCUDAMemoryManager, IpcHandle, MemoryPointer

from .._device_buffer import DeviceBuffer
from .._memory_resource import available_device_memory

try:
    from numba.cuda import MemoryInfo
except ImportError:  # older Numba keeps it in the driver module only
    from numba.cuda.cudadrv.driver import MemoryInfo

__all__ = ["RMMNumbaManager"]


def _driver():
    from numba.cuda.cudadrv import driver
    return driver


def _nv_binding():
    return getattr(_driver(), "USE_NV_BINDING", True)


def _device_pointer(addr):
    """A device pointer of the type this Numba's MemoryPointer expects."""
    if _nv_binding():
        try:
            from cuda.bindings.driver import CUdeviceptr
        except ImportError:  # older cuda-python
            from cuda.cuda import CUdeviceptr
        return CUdeviceptr(addr)
    import ctypes
    return ctypes.c_uint64(addr)


def _address(pointer):
    """The int address of a Numba MemoryPointer's handle, whatever its type."""
    h = pointer.handle
    return int(h) if _nv_binding() else int(h.value)


def _ipc_mem_handle(base):
    """cuIpcGetMemHandle(base) through Numba's driver, in the handle type its IpcHandle takes."""
    drv = _driver()
    if _nv_binding():
        return drv.driver.cuIpcGetMemHandle(_device_pointer(base))
    import ctypes
    handle = drv.drvapi.cu_ipc_mem_handle()
    drv.driver.cuIpcGetMemHandle(ctypes.byref(handle), base)
    return handle


class RMMNumbaManager(HostOnlyCUDAMemoryManager):
    """Numba's device memory from rmmh (an EMM plugin, interface version 1)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._deferred = 0
        self._pending = []

    def initialize(self):
        """Nothing to set up: rmmh's per-device resources are ready once rmmh is imported. May
        be called many times."""

    def memalloc(self, size):
        """A MemoryPointer over a DeviceBuffer of ``size`` bytes from the current resource."""
        buf = DeviceBuffer(size=size)
        ptr = buf.ptr
        if not ptr:  # 0 bytes: nothing to keep or free
            return MemoryPointer(self.context, _device_pointer(0), size)
        allocations = self.allocations
        allocations[ptr] = buf
        mine = weakref.ref(buf)  # (not the buffer: a context reset frees it at once)

        def finalizer(ptr=ptr, allocations=allocations, manager=self, mine=mine):
            # only its own buffer: after a context reset the address may hold a new allocation,
            # which a pointer from before the reset must not free (RMM's finalizer frees it: a
            # red team's find, two live arrays then shared one block)
            buf = allocations.get(ptr)
            if buf is None or buf is not mine():
                return
            del allocations[ptr]
            if manager._deferred:
                manager._pending.append(buf)  # freed when defer_cleanup ends

        return MemoryPointer(self.context, _device_pointer(ptr), size, finalizer=finalizer)

    def _buffer_of(self, addr):
        """The DeviceBuffer holding the device address addr (a block or a view into one), or
        None. O(allocations) for a view."""
        buf = self.allocations.get(addr)
        if isinstance(buf, DeviceBuffer):
            return buf
        # a copy, which allocates no object per entry: a collection while list() built its pairs
        # ran finalizers that delete entries (arrays in reference cycles), and the search failed
        # with "dictionary changed size during iteration" (a red team's find)
        for start, b in self.allocations.copy().items():
            if isinstance(b, DeviceBuffer) and start <= addr < start + max(b.size, 1):
                return b
        return None

    def get_ipc_handle(self, memory):
        """An IpcHandle for ``memory``: the handle of the underlying device allocation, and the
        block's offset in it (rmm.h's allocation base, through pools and adaptors).
        NotSupportedError for a pool with growth='virtual' and for CallbackMemoryResource.
        Memory this manager did not allocate (the 2019 API's, Numba's IPC imports) is exported
        as Numba does it, from the driver's address range."""
        addr = _address(memory)
        buf = self._buffer_of(addr)
        if buf is None:
            return _driver().GetIpcHandleMixin.get_ipc_handle(self, memory)
        base, offset = buf.mr.allocation_base(buf.ptr)
        offset += addr - buf.ptr
        handle = _ipc_mem_handle(base)
        source_info = self.context.device.get_device_identity()
        return IpcHandle(memory, handle, memory.size, source_info, offset=offset)

    def get_memory_info(self):
        """(free, total) bytes of the device, from cudaMemGetInfo. Memory a pool holds free is
        not in ``free`` (RMM raises NotImplementedError here instead)."""
        free, total = available_device_memory()
        return MemoryInfo(free=free, total=total)

    def reset(self):
        """Frees every allocation of this context (Numba's context reset) and Numba's host
        allocations."""
        self._pending.clear()
        super().reset()

    @contextlib.contextmanager
    def defer_cleanup(self):
        """While active (it nests), device memory Numba drops is kept and freed at the end of the
        outermost block, as are Numba's host allocations."""
        with super().defer_cleanup():
            self._deferred += 1
            try:
                yield
            finally:
                self._deferred -= 1
                if not self._deferred:
                    self._pending = []  # the buffers kept go now

    @property
    def interface_version(self):
        return 1


# NUMBA_CUDA_MEMORY_MANAGER=rmmh.allocators.numba selects the plugin
_numba_memory_manager = RMMNumbaManager

del cuda
