"""PyTorch allocating through rmmh's CUDAPluggableAllocator (GPU only; skipped without PyTorch).
change_current_allocator must run before the process allocates any CUDA tensor, so each case runs
in a fresh interpreter: tensors in rmmh memory, its streams, memory_stats, a resource replaced
while PyTorch holds its blocks, a torchvision training step, out of memory (NULL to PyTorch; a
clean torch.OutOfMemoryError through torch.cuda.MemPool), torch.cuda.graph capture with an
rmmh.GraphPool, and two GPUs."""
import pytest

from conftest import requires_gpu, requires_two_gpus

pytestmark = requires_gpu

CHILD = """
import gc, sys, weakref
import rmmh as rmm
import rmmh.allocators as allocators
import torch
from rmmh.allocators.torch import rmm_torch_allocator, memory_stats

mode = sys.argv[1]
assert rmm_torch_allocator is not None
devices = [0, 1] if mode == "two" else [0]
rmm.reinitialize(pool_allocator=True, initial_pool_size="64MiB", devices=devices)
if mode != "mempool":
    torch.cuda.memory.change_current_allocator(rmm_torch_allocator)

if mode == "basic":
    stats = rmm.mr.StatisticsResourceAdaptor(rmm.mr.get_current_device_resource())
    rmm.mr.set_current_device_resource(stats)
    x = torch.randn(512, 512, device="cuda")
    y = x @ x
    ref = x.cpu() @ x.cpu()
    assert torch.allclose(y.cpu(), ref, rtol=1e-3, atol=1e-3)
    assert allocators.lookup(x.data_ptr())[:2] == (512 * 512 * 4, 0)
    assert stats.allocation_counts.current_bytes >= 2 * 512 * 512 * 4
    s = memory_stats()
    assert s["allocated_bytes.all.current"] >= 2 * 512 * 512 * 4
    assert s["reserved_bytes.all.current"] >= 64 << 20 and s["statistics.peak_bytes"] > 0
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        z = torch.ones(1000, device="cuda")
    assert allocators.lookup(z.data_ptr())[2] == side.cuda_stream
    side.synchronize()
    before = memory_stats()["allocated_bytes.all.current"]
    del x, y, z
    assert memory_stats()["allocated_bytes.all.current"] == before - 2 * 512 * 512 * 4 - 4000
    print(torch.__version__, "basic ok")

elif mode == "swap":
    pool = rmm.mr.get_current_device_resource()
    ref = weakref.ref(pool)
    a = torch.ones(1 << 20, device="cuda")
    rmm.mr.set_current_device_resource(
        rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), "32MiB"))
    del pool
    b = torch.ones(1 << 20, device="cuda")
    gc.collect()
    assert ref() is not None and ref().info().used_bytes >= 4 << 20
    assert any(m is ref() for m in allocators.held_resources())
    assert (a + b).sum().item() == 2 * (1 << 20)
    del a
    torch.cuda.synchronize()
    gc.collect()
    assert ref() is None and allocators.held_resources() == []
    print("swap ok")

elif mode == "train":
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    data = torch.randn(16, 3, 64, 64, device="cuda")
    target = torch.randint(0, 10, (16,), device="cuda")
    losses = []
    for _ in range(5):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(data), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(l == l and l < 100 for l in losses), losses
    assert losses[-1] < losses[0], losses
    s = memory_stats()
    print("train ok", losses[0], losses[-1], s["allocated_bytes.all.peak"],
          s["reserved_bytes.all.peak"])

elif mode == "oom":
    rmm.mr.set_current_device_resource(
        rmm.mr.LimitingResourceAdaptor(rmm.mr.get_current_device_resource(), "32MiB"))
    failed = allocators.hook_statistics().failed
    try:
        t = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    except RuntimeError as e:  # a PyTorch that checks the NULL itself
        print("PyTorch refused the NULL:", str(e).splitlines()[0])
    else:
        # PyTorch's pluggable path does not check the NULL: the tensor has no memory
        assert t.data_ptr() == 0
        print("PyTorch made a tensor at address 0 (never use it)")
        del t
    assert allocators.hook_statistics().failed == failed + 1
    ok = torch.ones(100, device="cuda")
    assert ok.sum().item() == 100
    print("oom ok")

elif mode == "mempool":
    # PyTorch's caching allocator stays; segments of this MemPool come from rmmh
    rmm.mr.set_current_device_resource(
        rmm.mr.LimitingResourceAdaptor(rmm.mr.get_current_device_resource(), "48MiB"))
    pool = torch.cuda.MemPool(rmm_torch_allocator.allocator())
    with torch.cuda.use_mem_pool(pool):
        x = torch.ones(1 << 20, device="cuda")
        assert allocators.hook_statistics().current_bytes >= 4 << 20
        try:
            torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
        except torch.OutOfMemoryError as e:
            print("mempool oom ok:", str(e).splitlines()[0])
        else:
            raise AssertionError("no OutOfMemoryError")
    assert x.sum().item() == 1 << 20
    del x
    print("mempool ok")

elif mode == "graph":
    # torch.cuda.graph through the hook: PyTorch's pluggable allocator cannot be told about the
    # capture (its graph-pool hooks are C++ only), so rmmh.GraphPool registers the capture stream
    gp = rmm.GraphPool(reserve="16MiB")
    s = torch.cuda.Stream()
    x = torch.ones(1 << 16, device="cuda")
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up on the capture stream, as PyTorch's docs ask
        y = x * 2 + 1
    torch.cuda.current_stream().wait_stream(s)
    del y
    g = torch.cuda.CUDAGraph()
    with gp.capture(s):
        with torch.cuda.graph(g, stream=s):
            y = x * 2 + 1
            z = y.sum()
    reserved, used = gp.info()
    assert used >= (1 << 16) * 4, gp.info()  # y and z live in the graph pool
    for i in range(20):
        x.fill_(float(i))
        g.replay()
        w = torch.full((1 << 16,), -5.0, device="cuda")  # other work, same size, meanwhile
        torch.cuda.synchronize()
        assert z.item() == (2 * i + 1) * (1 << 16), (i, z.item())
        assert bool((y == 2 * i + 1).all())
        del w
    del g, y, z
    torch.cuda.synchronize()
    assert gp.info()[1] == 0, gp.info()
    gp.release()
    print("graph ok", reserved, used)

elif mode == "two":
    torch.cuda.set_device(0)
    p1 = rmm.mr.get_per_device_resource(1)
    a = torch.ones(1000, device="cuda:1")
    assert torch.cuda.current_device() == 0
    assert allocators.lookup(a.data_ptr())[1] == 1 and p1.info().used_bytes >= 4000
    b = a.to("cuda:0")
    assert b.sum().item() == 1000
    torch.cuda.synchronize(1)
    del a  # freed with device 0 current
    assert p1.info().used_bytes == 0 and torch.cuda.current_device() == 0
    print("two ok")
"""


def torch_child(mode, needs=()):
    """A spec for EARLY_CHILDREN: the child of `mode`, or None where torch (or a module of
    `needs`) is missing (the test then skips)."""
    import importlib.util

    def spec():
        if any(importlib.util.find_spec(m) is None for m in ("torch",) + needs):
            return None
        return CHILD, (mode,), {}
    return spec


# each case imports PyTorch in its own interpreter (seconds): they start together (conftest)
EARLY_CHILDREN = {
    "test_torch[basic]": torch_child("basic"),
    "test_torch[swap]": torch_child("swap"),
    "test_torch[oom]": torch_child("oom"),
    "test_torch_training_step": torch_child("train", ("torchvision",)),
    "test_torch_mempool": torch_child("mempool"),
    "test_torch_two_gpus": torch_child("two"),
    "test_torch_cuda_graph": torch_child("graph"),
}


def run_torch(request, early_children):
    pytest.importorskip("torch")
    print(early_children.wait(request.node.name))


@pytest.mark.parametrize("mode", ["basic", "swap", "oom"])
def test_torch(mode, request, early_children):
    run_torch(request, early_children)


@pytest.mark.long
def test_torch_training_step(request, early_children):
    pytest.importorskip("torchvision")
    run_torch(request, early_children)


def test_torch_mempool(request, early_children):
    torch = pytest.importorskip("torch")
    if not hasattr(torch.cuda, "MemPool") or not hasattr(torch.cuda, "use_mem_pool"):
        pytest.skip("this PyTorch has no torch.cuda.MemPool")
    run_torch(request, early_children)


@requires_two_gpus
def test_torch_two_gpus(request, early_children):
    run_torch(request, early_children)


def test_torch_cuda_graph(request, early_children):
    torch = pytest.importorskip("torch")
    if not hasattr(torch.cuda, "graph"):
        pytest.skip("this PyTorch has no torch.cuda.graph")
    run_torch(request, early_children)
