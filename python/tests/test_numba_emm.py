"""rmmh's Numba EMM plugin without a Numba context (the GPU tests are in test_allocators_numba.py):
the manager's own bookkeeping, with a stand-in for the context, which memalloc only passes on to
Numba's MemoryPointer."""
import gc

import pytest

import rmmh as rmm

pytest.importorskip("numba")


class _Context:
    pass


def _address(mp):
    p = mp.device_pointer
    return p.value if hasattr(p, "value") else int(p)


def test_a_pointer_from_before_a_reset_does_not_free_the_new_allocation_at_its_address():
    """Numba's Context.reset() frees every allocation and keeps the manager; a MemoryPointer from
    before it that dies later must not free the new allocation that now sits at its address (RMM's
    finalizer does: two live arrays then shared one block; a red team's find)."""
    from rmmh.allocators.numba import RMMNumbaManager
    stats = rmm.mr.StatisticsResourceAdaptor(rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 1 << 20))
    previous = rmm.mr.get_current_device_resource()
    rmm.mr.set_current_device_resource(stats)
    try:
        m = RMMNumbaManager(context=_Context())
        m.initialize()
        old = m.memalloc(256)
        m.reset()
        assert stats.allocation_counts.current_count == 0
        new = m.memalloc(256)
        assert _address(new) == _address(old)  # (the pool's LIFO: else this tests nothing)
        del old
        gc.collect()
        assert stats.allocation_counts.current_count == 1 and _address(new) in m.allocations
        other = m.memalloc(256)
        assert _address(other) != _address(new)
        del new, other
        gc.collect()
        assert stats.allocation_counts.current_count == 0 and not m.allocations
    finally:
        rmm.mr.set_current_device_resource(previous)
