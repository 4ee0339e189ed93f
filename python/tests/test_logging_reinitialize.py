"""reinitialize (modes, sizes, devices, hooks), memory-event logging (per-device file names,
enable/disable), and the debug log's level functions (intent of RMM's test_rmm.py parts)."""
import csv
import os
import warnings
from itertools import product

import numpy as np
import pytest

import rmmh as rmm
from conftest import fail_next, host_only, requires_two_devices


def roundtrip():
    h = np.arange(100, dtype="f8")
    assert np.array_equal(np.frombuffer(rmm.DeviceBuffer.to_device(h.view("u1")).tobytes(), "f8"), h)


@pytest.mark.parametrize("managed,pool", list(product([False, True], [False, True])))
def test_modes(managed, pool):
    assert rmm.is_initialized()
    rmm.reinitialize(pool_allocator=pool, managed_memory=managed,
                     initial_pool_size=1 << 20 if pool else None)
    assert rmm.is_initialized()
    mr = rmm.mr.get_current_device_resource()
    if pool:
        assert isinstance(mr, rmm.mr.PoolMemoryResource)
        assert isinstance(mr.upstream_mr, rmm.mr.ManagedMemoryResource if managed
                          else rmm.mr.CudaMemoryResource)
    else:
        assert type(mr) is (rmm.mr.ManagedMemoryResource if managed else rmm.mr.CudaMemoryResource)
    roundtrip()


def test_max_pool_size():
    rmm.reinitialize(pool_allocator=True, initial_pool_size=0, maximum_pool_size=1 << 23)
    rmm.DeviceBuffer().resize((1 << 23) - 1)
    with pytest.raises(MemoryError):
        rmm.DeviceBuffer().resize(1 << 24)


def test_max_pool_size_zero(monkeypatch):
    """reinitialize's maximum_pool_size=0 is a pool that never grows (kept as 256 bytes), also
    under RMM_ALLOC_CONF, not "no maximum"."""
    rmm.reinitialize(pool_allocator=True, initial_pool_size=0, maximum_pool_size=0)
    with pytest.raises(MemoryError):
        rmm.DeviceBuffer(size=64 << 20)
    assert rmm.mr.get_current_device_resource().pool_size() == 0
    monkeypatch.setenv("RMM_ALLOC_CONF", "growth:on_demand")
    rmm.reinitialize(pool_allocator=True, initial_pool_size=0, maximum_pool_size=0)
    with pytest.raises(MemoryError):
        rmm.DeviceBuffer(size=64 << 20)
    monkeypatch.delenv("RMM_ALLOC_CONF")
    with pytest.raises(RuntimeError, match="Initial pool size exceeds the maximum pool size"):
        rmm.reinitialize(pool_allocator=True, initial_pool_size=256, maximum_pool_size=0)


def test_size_strings():
    rmm.reinitialize(pool_allocator=True, initial_pool_size="1MiB", maximum_pool_size="4MiB")
    assert rmm.mr.get_current_device_resource().pool_size() == 1 << 20


def test_initial_above_maximum():
    with pytest.raises(RuntimeError, match="Initial pool size exceeds the maximum pool size"):
        rmm.reinitialize(pool_allocator=True, initial_pool_size=1 << 11, maximum_pool_size=1 << 10)


@requires_two_devices
def test_devices_and_reset():
    rmm.reinitialize(pool_allocator=True, initial_pool_size=0, devices=[0, 1])
    assert isinstance(rmm.mr.get_per_device_resource(1), rmm.mr.PoolMemoryResource)
    assert rmm._cuda.gpu.getDevice() == 0  # restored
    rmm.reinitialize()  # device 1 goes back to its default
    assert type(rmm.mr.get_per_device_resource(1)) is rmm.mr.CudaMemoryResource
    from rmmh import _lib
    assert rmm.mr.get_per_device_resource(1)._h == _lib.rmm_get_per_device_resource(1)


@pytest.fixture
def make_reinit_hook():
    funcs = []

    def make(func, *args, **kwargs):
        funcs.append(func)
        return rmm.register_reinitialize_hook(func, *args, **kwargs)

    yield make
    for f in funcs:
        rmm.unregister_reinitialize_hook(f)


def test_hooks_run_newest_first(make_reinit_hook):
    calls = []
    make_reinit_hook(lambda: calls.append(1))
    make_reinit_hook(lambda: calls.append(2))
    make_reinit_hook(lambda x: calls.append(x), 3)
    rmm.reinitialize()
    assert calls == [3, 2, 1]


def test_hooks_unregister(make_reinit_hook):
    calls = []
    one = make_reinit_hook(lambda: calls.append(1))
    make_reinit_hook(lambda: calls.append(2))
    rmm.unregister_reinitialize_hook(one)
    rmm.reinitialize()
    assert calls == [2]


def test_hooks_registered_twice(make_reinit_hook):
    calls = []

    def with_arg(x):
        calls.append(x)

    def without():
        calls.append(2)

    make_reinit_hook(with_arg, 1)
    make_reinit_hook(without)
    make_reinit_hook(with_arg, 3)
    make_reinit_hook(without)
    rmm.reinitialize()
    assert calls == [2, 3, 2, 1]
    calls.clear()
    rmm.unregister_reinitialize_hook(with_arg)  # every registration goes
    rmm.reinitialize()
    assert calls == [2, 2]


def test_a_hook_registered_on_another_thread_during_an_unregister_is_kept(monkeypatch):
    """Red team 50: unregister_reinitialize_hook built a new list and rebound the module's name;
    a registration another thread made meanwhile (the old list read, then appended to) went to
    the old list, and was lost. The list's append is slowed here to hold that thread between
    the two, where the GIL may switch threads."""
    import threading
    from rmmh import rmm as rmm_module
    inside, go = threading.Event(), threading.Event()

    class SlowList(list):
        def append(self, item):
            inside.set()
            go.wait(1.0)  # (with the list locked, the unregister waits for this instead)
            super().append(item)

    def late():
        pass

    monkeypatch.setattr(rmm_module, "_reinitialize_hooks", SlowList(rmm_module._reinitialize_hooks))
    t = threading.Thread(target=rmm.register_reinitialize_hook, args=(late,))
    t.start()
    try:
        assert inside.wait(5)
        rmm.unregister_reinitialize_hook(lambda: None)  # removes nothing
    finally:
        go.set()
        t.join()
    try:
        assert [h[0] for h in rmm_module._reinitialize_hooks].count(late) == 1
    finally:
        rmm.unregister_reinitialize_hook(late)

def read_log(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_reinitialize_logging(tmp_path):
    base = str(tmp_path / "rmm_log.csv")
    rmm.reinitialize(logging=True, log_file_name=base)
    b = rmm.DeviceBuffer(size=100)
    del b
    rmm.mr._flush_logs()
    fname = base[:-4] + ".dev0.csv"
    assert rmm.get_log_filenames() == {0: fname}
    rows = read_log(fname)
    assert list(rows[0]) == ["Thread", "Time", "Action", "Pointer", "Size", "Stream"]
    assert [r["Action"] for r in rows] == ["allocate", "free"]
    assert rows[0]["Size"] == "100" and rows[0]["Pointer"] == rows[1]["Pointer"]


def test_log_stream_column_as_rmm_writes_it(tmp_path):
    """RMM writes the stream as an ostream writes a pointer: 0 for the default stream, else 0x
    and hex (red team 48: rmmh wrote "2" and "55d0..." where RMM writes "0x2" and "0x55d0...")."""
    from rmmh.pylibrmm.stream import PER_THREAD_DEFAULT_STREAM
    mr = rmm.mr.LoggingResourceAdaptor(rmm.mr.CudaMemoryResource(), str(tmp_path / "s.csv"))
    created = rmm.Stream()
    for stream in (rmm.DEFAULT_STREAM, PER_THREAD_DEFAULT_STREAM, created):
        mr.deallocate(mr.allocate(100, stream), 100, stream)
    mr.flush()
    assert [r["Stream"] for r in read_log(mr.get_file_name())] == \
        ["0", "0", "0x2", "0x2", "0x%x" % created.handle, "0x%x" % created.handle]

def test_enable_logging_changes_every_device_or_none(tmp_path):
    """The last device's log file cannot be opened (a directory): enable_logging raises with no
    device's resource changed and no log file made (red team 23: the devices before it were left
    logging)."""
    count = rmm._cuda.gpu.getDeviceCount()
    kept = {}
    for d in range(count):
        kept[d] = rmm.mr.CudaMemoryResource()
        rmm.mr.set_per_device_resource(d, kept[d])
    base = str(tmp_path / "rmm.csv")
    (tmp_path / ("rmm.dev%d.csv" % (count - 1))).mkdir()
    try:
        with pytest.raises(RuntimeError, match="rmm.dev%d.csv" % (count - 1)):
            rmm.enable_logging(log_file_name=base)
        assert all(rmm.mr.get_per_device_resource(d) is kept[d] for d in range(count))
        assert os.listdir(tmp_path) == ["rmm.dev%d.csv" % (count - 1)]  # (the directory only)
        # the last file a dangling link (os.path's checks pass it; the open fails): raised before
        # any file was truncated, and no file left that was not there (a review's find: the first
        # device's log was emptied and left open)
        (tmp_path / ("rmm.dev%d.csv" % (count - 1))).rmdir()
        os.symlink(str(tmp_path / "no" / "such" / "dir"), str(tmp_path / ("rmm.dev%d.csv" % (count - 1))))
        if count > 1:
            (tmp_path / "rmm.dev0.csv").write_text("yesterday's log\n")
        before = sorted(os.listdir(tmp_path))
        with pytest.raises(RuntimeError, match="rmm.dev%d.csv" % (count - 1)):
            rmm.enable_logging(log_file_name=base)
        assert all(rmm.mr.get_per_device_resource(d) is kept[d] for d in range(count))
        assert sorted(os.listdir(tmp_path)) == before
        if count > 1:
            assert (tmp_path / "rmm.dev0.csv").read_text() == "yesterday's log\n"
    finally:
        rmm.reinitialize()


def test_reinitialize_that_fails_leaves_no_empty_log_file(tmp_path):
    """A pool too large for the device: reinitialize raises, and the log file its check made for
    the device (which got no logging adaptor) is gone again; a file that was there stays."""
    too_large = 1 << 60
    try:
        with pytest.raises(MemoryError):
            rmm.reinitialize(pool_allocator=True, initial_pool_size=too_large, logging=True,
                             log_file_name=str(tmp_path / "rmm.csv"))
        assert os.listdir(tmp_path) == []
        (tmp_path / "rmm.dev0.csv").write_text("yesterday's log\n")
        with pytest.raises(MemoryError):
            rmm.reinitialize(pool_allocator=True, initial_pool_size=too_large, logging=True,
                             log_file_name=str(tmp_path / "rmm.csv"))
        assert (tmp_path / "rmm.dev0.csv").read_text() == "yesterday's log\n"
    finally:
        rmm.reinitialize()


def test_reinitialize_that_fails_puts_back_what_lives():
    """A pool too large for the device: reinitialize raises MemoryError with the resource set
    before it back in place when something still holds it (red team 24: every device was left
    reset); one that nothing else held is gone, and the device has its default."""
    mine = rmm.mr.StatisticsResourceAdaptor(rmm.mr.CudaMemoryResource())
    rmm.mr.set_per_device_resource(0, mine)
    try:
        with pytest.raises(MemoryError):
            rmm.reinitialize(pool_allocator=True, initial_pool_size=1 << 60)
        assert rmm.mr.get_per_device_resource(0) is mine
        rmm.mr.set_per_device_resource(0, rmm.mr.StatisticsResourceAdaptor(rmm.mr.CudaMemoryResource()))
        with pytest.raises(MemoryError):
            rmm.reinitialize(pool_allocator=True, initial_pool_size=1 << 60)
        assert isinstance(rmm.mr.get_per_device_resource(0), rmm.mr.CudaMemoryResource)
        rmm.DeviceBuffer(size=100)  # (usable)
    finally:
        rmm.reinitialize()


@host_only
@requires_two_devices
def test_reinitialize_that_fails_leaves_the_log_put_back_whole(tmp_path):
    """Device 1's pool cannot be made: the logging adaptor put back on device 0 (a buffer holds
    it) keeps its log as it was, and its later rows follow (red team 48: device 0's new adaptor
    had truncated the same file, and the old one's next rows came after a run of NUL bytes)."""
    base = str(tmp_path / "rmm.csv")
    rmm.reinitialize(devices=[0, 1], logging=True, log_file_name=base)
    old = rmm.mr.get_per_device_resource(0)
    buf = rmm.DeviceBuffer(size=1000)
    old.flush()
    fname = old.get_file_name()
    before = open(fname, "rb").read()
    # (the first makes device 0's pool, the second device 1's)
    fail_next("cudaMalloc", status=rmm._errors.OUT_OF_MEMORY, nth=2)
    try:
        with pytest.raises(MemoryError):
            rmm.reinitialize(pool_allocator=True, initial_pool_size=1 << 20, devices=[0, 1],
                             logging=True, log_file_name=base)
    finally:
        fail_next(None)
    assert rmm.mr.get_per_device_resource(0) is old
    assert open(fname, "rb").read() == before
    del buf
    old.flush()
    rows = read_log(fname)
    assert [r["Action"] for r in rows] == ["allocate", "free"]

def test_enable_disable_logging(tmp_path):
    base = str(tmp_path / "rmm_log.csv")
    rmm.enable_logging(log_file_name=base)
    assert isinstance(rmm.mr.get_per_device_resource(0), rmm.mr.LoggingResourceAdaptor)
    rmm.enable_logging(log_file_name=base)  # already logging: unchanged
    roundtrip()
    rmm.mr._flush_logs()
    fname = base[:-4] + ".dev0.csv"
    assert "Time,Action,Pointer,Size,Stream" in open(fname).read()
    rmm.disable_logging()
    assert not isinstance(rmm.mr.get_per_device_resource(0), rmm.mr.LoggingResourceAdaptor)
    assert rmm.get_log_filenames() == {0: None}


@requires_two_devices
def test_log_names_per_device(tmp_path):
    rmm.reinitialize(devices=[0, 1], logging=True, log_file_name=str(tmp_path / "rmm.log"))
    names = rmm.get_log_filenames()
    assert names == {0: str(tmp_path / "rmm.dev0.log"), 1: str(tmp_path / "rmm.dev1.log")}
    assert all(os.path.exists(n) for n in names.values())


def test_log_file_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("RMM_LOG_FILE", str(tmp_path / "env.txt"))
    rmm.reinitialize(logging=True)
    assert rmm.get_log_filenames()[0] == str(tmp_path / "env.dev0.txt")
    monkeypatch.delenv("RMM_LOG_FILE")
    with pytest.raises(ValueError, match="RMM_LOG_FILE"):
        rmm.reinitialize(logging=True)
    with pytest.raises(ValueError, match="RMM_LOG_FILE"):
        rmm.mr.LoggingResourceAdaptor(rmm.mr.CudaMemoryResource())


def test_empty_log_file_name_is_a_name(tmp_path, monkeypatch):
    """log_file_name="" is the name LoggingResourceAdaptor takes (".dev0" in the working
    directory, as RMM's), in reinitialize and enable_logging too, whether or not RMM_LOG_FILE is
    set (red team 48: reinitialize raised a TypeError about None without it; with it, both made an
    empty file of its name, and logged to the other)."""
    monkeypatch.chdir(tmp_path)
    want = str(tmp_path / ".dev0")
    assert rmm.mr.LoggingResourceAdaptor(rmm.mr.CudaMemoryResource(), "").get_file_name() == want
    monkeypatch.delenv("RMM_LOG_FILE", raising=False)
    rmm.reinitialize(logging=True, log_file_name="")
    assert rmm.get_log_filenames() == {0: want}
    monkeypatch.setenv("RMM_LOG_FILE", str(tmp_path / "env.csv"))
    rmm.reinitialize(logging=True, log_file_name="")
    assert rmm.get_log_filenames() == {0: want}
    rmm.reinitialize()
    rmm.enable_logging(log_file_name="")
    assert rmm.get_log_filenames() == {0: want}
    assert os.listdir(tmp_path) == [".dev0"]

def test_log_file_that_cannot_be_opened(tmp_path):
    with pytest.raises(RuntimeError):
        rmm.mr.LoggingResourceAdaptor(rmm.mr.CudaMemoryResource(),
                                      str(tmp_path / "no" / "such" / "dir.csv"))


def test_log_file_name_with_nul_is_value_error(tmp_path):
    """As open(): C would stop at the NUL and log to another file than get_file_name() says.
    reinitialize and enable_logging refuse it before changing any resource."""
    name = str(tmp_path / "real\0name.csv")
    for bad in (name, os.fsencode(name)):
        with pytest.raises(ValueError, match="null"):
            rmm.mr.LoggingResourceAdaptor(rmm.mr.CudaMemoryResource(), bad)
    mr = rmm.mr.CudaMemoryResource()
    rmm.mr.set_current_device_resource(mr)
    with pytest.raises(ValueError, match="null"):
        rmm.reinitialize(logging=True, log_file_name=name)
    assert rmm.mr.get_current_device_resource() is mr
    with pytest.raises(ValueError, match="null"):
        rmm.enable_logging(log_file_name=name)
    assert rmm.mr.get_current_device_resource() is mr
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("level", list(rmm.level_enum))
def test_valid_logging_levels(level):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rmm.set_logging_level(level)
        assert rmm.get_logging_level() == level
        rmm.set_flush_level(level)
        assert rmm.get_flush_level() == level
        rmm.should_log(level)
    rmm.set_logging_level(rmm.level_enum.info)
    rmm.set_flush_level(rmm.level_enum.info)
    rmm.flush_logger()


def test_verbose_levels_warn():
    # named as RMM names it, so that RMM's warning filters match (red team 23: "will not log 0")
    with pytest.warns(UserWarning, match="^RMM will not log level_enum.trace[.]"):
        rmm.set_logging_level(rmm.level_enum.trace)
    rmm.set_logging_level(rmm.level_enum.info)
    assert rmm.should_log(rmm.level_enum.error)
    assert not rmm.should_log(rmm.level_enum.debug)
    # older RMM's rmm.logging_level with upper-case names
    assert rmm.logging_level is rmm.level_enum and rmm.logging_level.INFO is rmm.level_enum.info
    assert [lv.name for lv in rmm.level_enum][:3] == ["trace", "debug", "info"]


@pytest.mark.parametrize("level", ["INFO", 3, "invalid", 100, None, 1.2345, [1, 2, 3]])
def test_invalid_logging_levels(level):
    with pytest.raises(TypeError):
        rmm.set_logging_level(level)
    with pytest.raises(TypeError):
        rmm.set_flush_level(level)
    with pytest.raises(TypeError):
        rmm.should_log(level)
