"""rmmh.GraphPool (rmm.h's graph pools): allocations on a registered stream come from the graph
pool whatever resource is current, its blocks free back to it, nothing else gets its memory, and
release() returns it upstream. The capture itself is tested with PyTorch in
test_allocators_torch.py and in C (tests/test_suballoc.c)."""
import pytest

import rmmh as rmm


def test_graph_pool_routes_a_registered_stream():
    upstream = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), "32MiB")
    rmm.mr.set_current_device_resource(upstream)
    try:
        pool = rmm.GraphPool(reserve="1MiB")
        assert pool.info() == (1 << 20, 0)
        s, t = rmm.Stream(), rmm.Stream()
        before = rmm.DeviceBuffer(size=5000, stream=s)  # from before the capture
        with pool.capture(s):
            buf = rmm.DeviceBuffer(size=1000, stream=s)
            assert pool.info()[1] == 1024
            other = rmm.DeviceBuffer(size=1000, stream=t)  # not registered: upstream
            assert pool.info()[1] == 1024
            with pytest.raises(rmm.InvalidArgumentError):
                with pool.capture(s):  # registered already
                    pass
            with pytest.raises(rmm.InvalidArgumentError):
                pool.release()  # a capture is registered
            del before  # freed on s inside the capture: made when the registration ends
        del other
        assert pool.info()[1] == 1024
        del buf  # back to the graph pool
        assert pool.info()[1] == 0
        with pool.capture(s):
            with pytest.raises(MemoryError, match="larger reserve"):
                rmm.DeviceBuffer(size=4 << 20, stream=s)  # past the reserve: a pool cannot grow it
            kept = rmm.DeviceBuffer(size=512 << 10, stream=s)
        assert pool.info() == (1 << 20, 512 << 10)
        pool.release()  # with a live block: the memory returns when it is freed
        pool.release()  # a no-op the second time
        with pytest.raises(ValueError):
            pool.info()
        del kept
        # a cudaMalloc upstream grows it
        grown = rmm.GraphPool(reserve="64KiB", upstream=rmm.mr.CudaMemoryResource())
        with grown.capture(s):
            big = rmm.DeviceBuffer(size=4 << 20, stream=s)
        assert grown.info() == ((64 << 10) + (4 << 20), 4 << 20)
        del big
        grown.release()
        s.synchronize()
    finally:
        rmm.mr.set_current_device_resource(rmm.mr.CudaMemoryResource())


def test_graph_pool_bad_arguments():
    with pytest.raises(ValueError):
        rmm.GraphPool(reserve=-1)
    with pytest.raises(TypeError):
        rmm.GraphPool(reserve=1.5)
    pool = rmm.GraphPool()
    with pytest.raises(TypeError):
        with pool.capture(None):
            pass
    pool.release()
    with pytest.raises(ValueError):
        with pool.capture(rmm.Stream()):
            pass


@pytest.mark.parametrize("upstream", ["x", 5, rmm.mr.DeviceMemoryResource])
def test_graph_pool_upstream_must_be_a_resource(upstream):
    with pytest.raises(TypeError, match="upstream"):
        rmm.GraphPool(upstream=upstream)


def test_graph_pool_is_not_copied_or_pickled():
    """A copy would share the C graph pool and release it twice."""
    import copy
    import pickle
    pool = rmm.GraphPool(reserve="1MiB")
    for make_copy in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError):
            make_copy(pool)
    assert pool.info()[0] >= 1 << 20
    pool.release()
