"""The pool configuration string (rmm.h's rmm_pool_desc_parse): RMM_ALLOC_CONF applied by
rmmh.reinitialize(pool_allocator=True) over its arguments, a bad one refused with a message naming
it, and the live maximum of a pool and a limiting adaptor (PoolMemoryResource.set_maximum,
LimitingResourceAdaptor.set_allocation_limit). Runs on either backend."""
import pytest

import rmmh as rmm

MiB = 1 << 20


@pytest.fixture
def restore():
    yield
    rmm.reinitialize()


def test_reinitialize_applies_rmm_alloc_conf(monkeypatch, restore):
    monkeypatch.setenv("RMM_ALLOC_CONF", "maximum:64MiB, growth:on_demand")
    rmm.reinitialize(pool_allocator=True, initial_pool_size=4 * MiB)
    mr = rmm.mr.get_current_device_resource()
    assert isinstance(mr, rmm.mr.PoolMemoryResource)
    assert mr.growth == "on_demand"
    assert mr.pool_size() == 4 * MiB  # the argument, not overridden
    with pytest.raises(MemoryError):
        rmm.DeviceBuffer(size=80 * MiB)  # beyond the configured maximum
    buf = rmm.DeviceBuffer(size=32 * MiB)
    assert buf.size == 32 * MiB


def test_reinitialize_conf_overrides_arguments(monkeypatch, restore):
    monkeypatch.setenv("RMM_ALLOC_CONF", "initial:2MiB")
    rmm.reinitialize(pool_allocator=True, initial_pool_size=4 * MiB, maximum_pool_size=16 * MiB)
    mr = rmm.mr.get_current_device_resource()
    assert mr.pool_size() == 2 * MiB
    with pytest.raises(MemoryError):
        rmm.DeviceBuffer(size=20 * MiB)


def test_conf_alone_keeps_the_default_initial_size_sensible(monkeypatch, restore):
    monkeypatch.setenv("RMM_ALLOC_CONF", "maximum:8MiB")  # below half the device: held to it
    rmm.reinitialize(pool_allocator=True)
    assert rmm.mr.get_current_device_resource().pool_size() == 8 * MiB
    monkeypatch.setenv("RMM_ALLOC_CONF", "growth:on_demand")  # the on-demand default: empty
    rmm.reinitialize(pool_allocator=True)
    mr = rmm.mr.get_current_device_resource()
    assert mr.growth == "on_demand" and mr.pool_size() == 0


def test_bad_conf_leaves_the_resources_alone(monkeypatch, restore):
    rmm.reinitialize(pool_allocator=True, initial_pool_size=2 * MiB)
    before = rmm.mr.get_current_device_resource()
    monkeypatch.setenv("RMM_ALLOC_CONF", "maximum:lots")
    with pytest.raises(ValueError):
        rmm.reinitialize(pool_allocator=True)
    assert rmm.mr.get_current_device_resource() is before


def test_reinitialize_without_pool_ignores_conf(monkeypatch, restore):
    monkeypatch.setenv("RMM_ALLOC_CONF", "nonsense")
    rmm.reinitialize()
    assert not isinstance(rmm.mr.get_current_device_resource(), rmm.mr.PoolMemoryResource)


@pytest.mark.parametrize("conf, named", [
    ("maximum:64MiB,oops:1", "oops:1"),
    ("initial:lots", "initial:lots"),
    ("initial:1000", "multiple of 256"),
    ("growth:fast", "growth:fast"),
])
def test_bad_rmm_alloc_conf_is_refused_by_name(monkeypatch, restore, conf, named):
    monkeypatch.setenv("RMM_ALLOC_CONF", conf)
    with pytest.raises(ValueError) as e:
        rmm.reinitialize(pool_allocator=True, initial_pool_size=2 * MiB)
    assert "RMM_ALLOC_CONF" in str(e.value) and named in str(e.value)


def test_pool_set_maximum():
    pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), 2 * MiB, 4 * MiB)
    with pytest.raises(MemoryError):
        pool.allocate(6 * MiB)
    pool.set_maximum(16 * MiB)
    p = pool.allocate(6 * MiB)
    pool.set_maximum(2 * MiB)  # below what it holds: it keeps that, and grows no more
    with pytest.raises(MemoryError):
        pool.allocate(12 * MiB)
    pool.deallocate(p, 6 * MiB)
    pool.set_maximum(None)
    pool.deallocate(pool.allocate(12 * MiB), 12 * MiB)
    with pytest.raises(ValueError, match="256"):
        pool.set_maximum(1000)


def test_limiting_set_allocation_limit():
    lim = rmm.mr.LimitingResourceAdaptor(rmm.mr.CudaMemoryResource(), 4096)
    with pytest.raises(MemoryError):
        lim.allocate(8192)
    lim.set_allocation_limit("16KiB")
    assert lim.get_allocation_limit() == 16384
    p = lim.allocate(8192)
    lim.set_allocation_limit(4096)
    with pytest.raises(MemoryError):
        lim.allocate(256)
    lim.deallocate(p, 8192)
    lim.deallocate(lim.allocate(256), 256)
    with pytest.raises((ValueError, TypeError)):
        lim.set_allocation_limit(-1)


@pytest.mark.parametrize("conf, kwargs", [
    ("growth:virtual", dict(initial_pool_size=64 * MiB)),
    ("growth:virtual,initial:8MiB", {}),
    ("initial:64MiB,maximum:8MiB", {}),
])
def test_a_conf_the_pool_refuses_leaves_the_resources_alone(monkeypatch, restore, conf, kwargs):
    """A configuration whose parts are each valid but together refused by the pool (growth:virtual
    with an initial size; an initial size above the maximum) raises before any device's resource
    changes (red team of 2026-11-29: the previous pool was gone when the call raised)."""
    rmm.reinitialize(pool_allocator=True, initial_pool_size=2 * MiB)
    before = rmm.mr.get_current_device_resource()
    monkeypatch.setenv("RMM_ALLOC_CONF", conf)
    with pytest.raises(ValueError) as e:
        rmm.reinitialize(pool_allocator=True, **kwargs)
    assert "RMM_ALLOC_CONF" in str(e.value)
    assert rmm.mr.get_current_device_resource() is before


def _pool_config(mr):
    """The "config" object of rmm.h's JSON dump of a pool (rmm_resource_dump_json through libc's
    FILE: rmmh's Python API has no dump)."""
    import ctypes
    import json
    import os
    import tempfile
    from rmmh import _lib
    libc = ctypes.CDLL(None)
    libc.fopen.restype, libc.fopen.argtypes = ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_char_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    dump = _lib.lib.rmm_resource_dump_json
    dump.restype, dump.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p]
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        f = libc.fopen(os.fsencode(path), b"w")
        assert f
        try:
            assert dump(mr._h, f) == 0
        finally:
            libc.fclose(f)
        with open(path) as text:
            return json.load(text)["resource"]["config"]
    finally:
        os.unlink(path)


def test_rmm_alloc_conf_extent_reaches_the_pool(monkeypatch, restore):
    """RMM_ALLOC_CONF's extent: key (virtual growth's physical allocations, rmm_pool_desc's
    virtual_extent_bytes; the README's table) is applied by reinitialize as every other key is
    (it was parsed, checked and dropped: the pool had the default two-page extents), and
    PoolMemoryResource takes it as virtual_extent_size."""
    monkeypatch.setenv("RMM_ALLOC_CONF", "growth:virtual, virtual:1GiB, extent:64MiB")
    try:
        rmm.reinitialize(pool_allocator=True)
    except NotImplementedError as e:  # a device or driver without VMM
        pytest.skip(str(e))
    config = _pool_config(rmm.mr.get_current_device_resource())
    assert config["growth"] == "virtual" and config["virtual_bytes"] == 1 << 30
    assert config["virtual_extent_bytes"] == 64 * MiB
    monkeypatch.delenv("RMM_ALLOC_CONF")
    pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), growth="virtual",
                                     virtual_size="1GiB", virtual_extent_size="8MiB")
    assert _pool_config(pool)["virtual_extent_bytes"] == 8 * MiB
    for bad, error in (("5GiB", rmm.InvalidArgumentError), (1000, rmm.InvalidArgumentError),
                       (0, rmm.InvalidArgumentError), (-256, OverflowError)):
        with pytest.raises(error):
            rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), growth="virtual",
                                      virtual_extent_size=bad)
