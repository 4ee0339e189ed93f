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


class _Device:
    def get_device_identity(self):
        return {}


class _IpcContext:
    device = _Device()


class _Cycle:
    """A Numba array kept in a reference cycle: its MemoryPointer dies when the collector runs."""

    def __init__(self, mp):
        self.mp, self.me = mp, self


def test_get_ipc_handle_of_a_view_while_the_collector_frees_arrays(monkeypatch):
    """get_ipc_handle of a view looks for the block holding it among the manager's allocations;
    a collection during that search runs the finalizers of arrays in reference cycles, which take
    their entries out of the same dict. The search iterated the live dict, and the export failed
    with RuntimeError: dictionary changed size during iteration (a red team's find). Python 3.11
    and earlier collect during allocation; from 3.12 the collector runs only between bytecodes,
    where the old search could not be interrupted, and this passes on either code."""
    import rmmh.allocators.numba as rn
    monkeypatch.setattr(rn, "_ipc_mem_handle", lambda base: ("handle", base))
    m = rn.RMMNumbaManager(context=_IpcContext())
    live = [m.memalloc(64) for _ in range(40)]
    view = live[-1].view(8, 16)
    gc.collect()
    cycles = [_Cycle(m.memalloc(64)) for _ in range(5)]
    gc.collect(0)  # (the cycles now wait in the middle generation)
    del cycles
    thresholds = gc.get_threshold()
    gc.set_threshold(1, 3, 1 << 30)  # a middle-generation collection within the search
    try:
        h = m.get_ipc_handle(view)
    finally:
        gc.set_threshold(*thresholds)
    assert h.handle[1] + h.offset == _address(live[-1]) + 8
    del live, view, h
    gc.collect()
    assert not m.allocations
