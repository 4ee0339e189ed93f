"""A foreign __cuda_array_interface__ is untrusted input (rmmh/_array_interface.py): a bad field
given to DeviceBuffer.copy_from_device raises TypeError or ValueError naming the field and copies
nothing; it never reaches rmm_memcpy_async (a negative shape used to become 2**64-1 bytes there,
and the interpreter aborted in malloc).

The table of cases runs in this process, and again in a child interpreter with the C accelerator
and one with ctypes alone (RMMH_NO_ACCEL=1), so that a crash fails a test instead of killing
pytest. The fuzzer (a child per mode too) copies from a few thousand random and hostile
interfaces and checks that each call either copies exactly the bytes a shadow model expects or
raises TypeError or ValueError. It prints its seed; replay with RMM_TEST_SEED=<seed>, and run
longer with RMMH_CAI_FUZZ_CASES=<n>:

    RMMH_BACKEND=host RMM_TEST_SEED=7 RMMH_CAI_FUZZ_CASES=100000 \\
        python3 python/tests/test_cuda_array_interface.py fuzz
"""
import os
import random
import re
import sys
import time

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if __name__ == "__main__":  # run as a script (the children below, or by hand): conftest's path
    sys.path.insert(0, HERE)
from conftest import child_env, run_child  # noqa: E402

import rmmh as rmm  # noqa: E402

SRC_BYTES = 2048     # the source buffer: every accepted copy reads inside it
DST_BYTES = 64       # the destination buffer: copies up to this size are accepted
MAX_OFFSET = 1024    # data pointers are src.ptr + an offset below this
MISSING = object()   # a field left out of the interface


class Foreign:
    """Another library's device array: only a __cuda_array_interface__."""

    def __init__(self, cai):
        self.__cuda_array_interface__ = cai


def interface(ptr, **fields):
    """A valid interface of 4 bytes at ptr, with `fields` replaced (MISSING removes one)."""
    cai = {"data": (ptr, False), "shape": (4,), "strides": None, "typestr": "|u1", "version": 3}
    for k, v in fields.items():
        if v is MISSING:
            cai.pop(k, None)
        else:
            cai[k] = v
    return cai


# ---- the table: (name, fields given to interface(); a callable takes the pointer, the
# exception classes the error must be an instance of (all of them), a regex its message matches)
NEG = (ValueError, OverflowError)  # RMM: Cython's OverflowError for a negative size_t
TYPESTR = (TypeError, ValueError)  # RMM: numpy.dtype's TypeError; Python: ValueError
FIELD_SHAPE, FIELD_TYPESTR, FIELD_STRIDES = r"\['shape'\]", r"\['typestr'\]", r"\['strides'\]"
FIELD_DATA, FIELD_VERSION, FIELD_MASK = r"\['data'\]", r"\['version'\]", r"\['mask'\]"

BAD = [
    ("shape_negative", dict(shape=(-1,)), NEG, FIELD_SHAPE),
    ("shape_most_negative", dict(shape=(-(1 << 63),)), NEG, FIELD_SHAPE),
    ("shape_past_size_t", dict(shape=(1 << 64,)), (ValueError,), FIELD_SHAPE),
    ("shape_float", dict(shape=(4.0,)), (TypeError,), FIELD_SHAPE),
    ("shape_str_element", dict(shape=("4",)), (TypeError,), FIELD_SHAPE),
    ("shape_bool", dict(shape=(True,)), (TypeError,), FIELD_SHAPE),
    ("shape_none_element", dict(shape=(None,)), (TypeError,), FIELD_SHAPE),
    ("shape_nested", dict(shape=((4,),)), (TypeError,), FIELD_SHAPE),
    ("shape_none", dict(shape=None), (TypeError,), FIELD_SHAPE),
    ("shape_int", dict(shape=4), (TypeError,), FIELD_SHAPE),
    ("shape_str", dict(shape="4"), (TypeError,), FIELD_SHAPE),
    ("shape_dict", dict(shape={0: 4}), (TypeError,), FIELD_SHAPE),
    ("shape_2d", dict(shape=(2, 2)), (ValueError,), "1-D"),
    ("shape_negative_2d", dict(shape=(2, -2)), NEG, FIELD_SHAPE),
    ("shape_missing", dict(shape=MISSING), (ValueError,), "'shape'"),
    ("typestr_negative_itemsize", dict(typestr="<c-8"), TYPESTR, FIELD_TYPESTR),
    ("typestr_negative_int", dict(typestr="<i-1"), TYPESTR, FIELD_TYPESTR),
    ("typestr_zero_itemsize", dict(typestr="<i0"), TYPESTR, FIELD_TYPESTR),
    ("typestr_odd_itemsize", dict(typestr="<i3"), TYPESTR, FIELD_TYPESTR),
    ("typestr_complex4", dict(typestr="<c4"), TYPESTR, FIELD_TYPESTR),
    ("typestr_no_byte_order", dict(typestr="u1"), TYPESTR, FIELD_TYPESTR),
    ("typestr_bad_kind", dict(typestr="<x4"), TYPESTR, FIELD_TYPESTR),
    ("typestr_empty", dict(typestr=""), TYPESTR, FIELD_TYPESTR),
    # the form right, numpy.dtype refuses it (as RMM's np.dtype does): taken as data until session 42
    ("typestr_kind_t_numpy_refuses", dict(typestr="|t8"), TYPESTR, FIELD_TYPESTR),
    ("typestr_unknown_datetime_unit", dict(typestr="<M8[xyz]"), TYPESTR, FIELD_TYPESTR),
    ("typestr_datetime_multiplier_too_large", dict(typestr="<m8[%ds]" % 10**21), TYPESTR, FIELD_TYPESTR),
    ("typestr_spaces", dict(typestr="<i4 "), TYPESTR, FIELD_TYPESTR),
    ("typestr_plus", dict(typestr="<i+4"), TYPESTR, FIELD_TYPESTR),
    ("typestr_unicode_digit", dict(typestr="|u\u0661"), TYPESTR, FIELD_TYPESTR),
    ("typestr_huge_itemsize", dict(typestr="|V" + "9" * 40), TYPESTR, FIELD_TYPESTR),
    ("typestr_unit_on_int", dict(typestr="<i8[ns]"), TYPESTR, FIELD_TYPESTR),
    ("typestr_unicode_zero", dict(typestr="<U0"), TYPESTR, FIELD_TYPESTR),
    ("typestr_int", dict(typestr=1), (TypeError,), FIELD_TYPESTR),
    ("typestr_bytes", dict(typestr=b"|u1"), (TypeError,), FIELD_TYPESTR),
    ("typestr_none", dict(typestr=None), (TypeError,), FIELD_TYPESTR),
    ("typestr_missing", dict(typestr=MISSING), (ValueError,), "'typestr'"),
    ("strides_negative", dict(strides=(-1,)), (ValueError,), FIELD_STRIDES),
    ("strides_zero", dict(strides=(0,)), (ValueError,), FIELD_STRIDES),
    ("strides_wider", dict(strides=(2,)), (ValueError,), FIELD_STRIDES),
    ("strides_float", dict(strides=(1.0,)), (TypeError,), FIELD_STRIDES),
    ("strides_bool", dict(strides=(True,)), (TypeError,), FIELD_STRIDES),
    ("strides_str", dict(strides="1"), (TypeError,), FIELD_STRIDES),
    ("strides_int", dict(strides=1), (TypeError,), FIELD_STRIDES),
    ("strides_too_many", dict(strides=(1, 1)), (ValueError,), FIELD_STRIDES),
    ("strides_too_few", dict(strides=()), (ValueError,), FIELD_STRIDES),
    ("data_none", dict(data=None), (TypeError,), FIELD_DATA),
    ("data_int", lambda p: dict(data=p), (TypeError,), FIELD_DATA),
    ("data_one_entry", lambda p: dict(data=(p,)), (ValueError,), FIELD_DATA),
    ("data_three_entries", lambda p: dict(data=(p, False, 0)), (ValueError,), FIELD_DATA),
    ("data_null", dict(data=(0, False)), (ValueError,), FIELD_DATA),
    ("data_none_pointer", dict(data=(None, False)), (ValueError,), FIELD_DATA),
    ("data_negative", dict(data=(-1, False)), NEG, FIELD_DATA),
    ("data_past_size_t", dict(data=(1 << 64, False)), (ValueError,), FIELD_DATA),
    ("data_wraps_around", dict(data=((1 << 64) - 2, False)), (ValueError,), FIELD_DATA),
    ("data_ends_at_2_64", dict(data=((1 << 64) - 4, False)), (ValueError,), FIELD_DATA),
    ("data_float_pointer", lambda p: dict(data=(float(p), False)), (TypeError,), FIELD_DATA),
    ("data_str_pointer", lambda p: dict(data=(hex(p), False)), (TypeError,), FIELD_DATA),
    ("data_bool_pointer", dict(data=(True, False)), (TypeError,), FIELD_DATA),
    ("data_int_read_only", lambda p: dict(data=(p, 0)), (TypeError,), FIELD_DATA),
    ("data_none_read_only", lambda p: dict(data=(p, None)), (TypeError,), FIELD_DATA),
    ("data_missing", dict(data=MISSING), (ValueError,), "'data'"),
    ("version_missing", dict(version=MISSING), (ValueError,), "'version'"),
    ("version_negative", dict(version=-1), (ValueError,), FIELD_VERSION),
    ("version_future", dict(version=4), (ValueError,), FIELD_VERSION),
    ("version_huge", dict(version=1 << 100), (ValueError,), FIELD_VERSION),
    ("version_str", dict(version="3"), (TypeError,), FIELD_VERSION),
    ("version_float", dict(version=3.0), (TypeError,), FIELD_VERSION),
    ("version_bool", dict(version=True), (TypeError,), FIELD_VERSION),
    ("version_none", dict(version=None), (TypeError,), FIELD_VERSION),
    ("mask_object", dict(mask=object()), (ValueError,), FIELD_MASK),
    ("mask_false", dict(mask=False), (ValueError,), FIELD_MASK),
    ("mask_array", lambda p: dict(mask=Foreign(interface(p))), (ValueError,), FIELD_MASK),
    ("too_large", dict(shape=(DST_BYTES + 1,)), (ValueError,), "too large"),
    ("too_large_int64", dict(shape=(DST_BYTES // 8 + 1,), typestr="<i8"), (ValueError,),
     "too large"),
    ("product_past_size_t", dict(shape=(1 << 61,), typestr="<f8"), (ValueError,), ""),
    ("product_past_size_t_unicode", dict(shape=(1 << 62,), typestr="<U4"), (ValueError,), ""),
]
BAD_IDS = [c[0] for c in BAD]

# whole objects: (name, object, exception classes, regex)
BAD_OBJECTS = [
    ("no_interface", b"host bytes", (ValueError,), "__cuda_array_interface__"),
    ("interface_none", Foreign(None), (TypeError,), "__cuda_array_interface__"),
    ("interface_list", Foreign([("shape", (4,))]), (TypeError,), "__cuda_array_interface__"),
    ("interface_tuple", Foreign(((4,), "|u1")), (TypeError,), "__cuda_array_interface__"),
    ("interface_str", Foreign("shape"), (TypeError,), "__cuda_array_interface__"),
]
BAD_OBJECT_IDS = [c[0] for c in BAD_OBJECTS]

# accepted interfaces: (name, fields, bytes copied)
GOOD = [
    ("plain", dict(), 4),
    ("version_0", dict(version=0), 4),
    ("version_1", dict(version=1), 4),
    ("version_2", dict(version=2), 4),
    ("version_numpy", dict(version=np.int64(3)), 4),
    ("shape_list", dict(shape=[4]), 4),
    ("shape_numpy", dict(shape=(np.int32(4),)), 4),
    ("shape_0d", dict(shape=(), typestr="<i4"), 4),
    ("shape_0d_strides", dict(shape=(), strides=(), typestr="<f8"), 8),
    ("shape_empty", dict(shape=(0,)), 0),
    ("shape_empty_null", dict(shape=(0,), data=(0, False)), 0),
    ("shape_empty_none", dict(shape=(0,), data=(None, False)), 0),
    ("shape_empty_wide", dict(shape=(0,), typestr="<c16", data=(0, False)), 0),
    ("whole_buffer", dict(shape=(DST_BYTES // 4,), typestr="<f4"), DST_BYTES),
    ("strides_itemsize", dict(shape=(3,), strides=(4,), typestr="<i4"), 12),
    ("strides_any_for_one", dict(shape=(1,), strides=(-24,), typestr="<i8"), 8),
    ("strides_any_for_none", dict(shape=(0,), strides=(0,), typestr="<i8"), 0),
    ("strides_list", dict(strides=[1]), 4),
    ("typestr_big_endian", dict(shape=(2,), typestr=">i2"), 4),
    ("typestr_native", dict(shape=(1,), typestr="=f8"), 8),
    ("typestr_bool", dict(typestr="|b1"), 4),
    ("typestr_half", dict(shape=(3,), typestr="<f2"), 6),
    ("typestr_bytes", dict(shape=(2,), typestr="|S3"), 6),
    ("typestr_void", dict(shape=(1,), typestr="|V5"), 5),
    ("typestr_unicode", dict(shape=(2,), typestr="<U3"), 24),
    ("typestr_datetime", dict(shape=(2,), typestr="<M8[ns]"), 16),
    ("typestr_timedelta", dict(shape=(1,), typestr="<m8"), 8),
    ("data_list", lambda p: dict(data=[p, False]), 4),
    ("data_read_only", lambda p: dict(data=(p, True)), 4),
    ("data_numpy_bool", lambda p: dict(data=(p, np.False_)), 4),
    ("data_numpy_pointer", lambda p: dict(data=(np.uint64(p), False)), 4),
    ("mask_none", dict(mask=None), 4),
    ("strides_missing", dict(strides=MISSING), 4),
    ("extra_fields", dict(stream=1, descr=[("", "|u1")], other="ignored"), 4),
]
GOOD_IDS = [c[0] for c in GOOD]


class _Buffers:
    """A source with a known pattern and a destination to copy into."""

    def __init__(self, seed=0):
        rng = random.Random(seed)
        self.pattern = bytes(rng.randrange(1, 256) for _ in range(SRC_BYTES))
        self.src = rmm.DeviceBuffer.to_device(self.pattern)
        self.dst = rmm.DeviceBuffer.to_device(bytes(DST_BYTES))

    def reset(self):
        self.dst.copy_from_host(bytes(DST_BYTES))

    def copied(self, offset, nbytes):
        """True iff the destination holds pattern[offset:offset+nbytes], then zeros."""
        want = self.pattern[offset:offset + nbytes] + bytes(DST_BYTES - nbytes)
        return self.dst.tobytes() == want


def _fields(spec, ptr):
    return spec(ptr) if callable(spec) else spec


def check_bad(name, bufs):
    """Copies from BAD[name]'s interface; AssertionError unless it raised the right error and
    left the destination untouched."""
    _, spec, kinds, regex = BAD[BAD_IDS.index(name)]
    bufs.reset()
    obj = Foreign(interface(bufs.src.ptr, **_fields(spec, bufs.src.ptr)))
    _expect_error(obj, kinds, regex, bufs, name)


def check_bad_object(name, bufs):
    _, obj, kinds, regex = BAD_OBJECTS[BAD_OBJECT_IDS.index(name)]
    bufs.reset()
    _expect_error(obj, kinds, regex, bufs, name)


def _expect_error(obj, kinds, regex, bufs, name):
    try:
        bufs.dst.copy_from_device(obj)
    except Exception as e:  # noqa: BLE001  (the type is what is checked)
        ok = all(isinstance(e, k) for k in kinds) and re.search(regex, str(e))
        assert ok, "%s: raised %s(%r); wanted %s matching %r" % (
            name, type(e).__name__, str(e), "+".join(k.__name__ for k in kinds), regex)
    else:
        raise AssertionError("%s: copy_from_device accepted it" % name)
    assert bufs.copied(0, 0), "%s: the destination changed" % name


def check_good(name, bufs):
    _, spec, nbytes = GOOD[GOOD_IDS.index(name)]
    bufs.reset()
    offset = 40
    bufs.dst.copy_from_device(Foreign(interface(bufs.src.ptr + offset,
                                                **_fields(spec, bufs.src.ptr + offset))))
    assert bufs.copied(offset, nbytes), "%s: wrong bytes copied" % name


def check_all():
    """Every case of the tables, each named on stdout before it runs (a crash names its case);
    the failures as strings."""
    bufs = _Buffers()
    failures = []
    for check, names in ((check_bad, BAD_IDS), (check_bad_object, BAD_OBJECT_IDS),
                         (check_good, GOOD_IDS)):
        for name in names:
            print("case", name, flush=True)
            try:
                check(name, bufs)
            except Exception as e:  # noqa: BLE001
                failures.append("%s: %s: %s" % (name, type(e).__name__, e))
    return failures


# ---- in this process ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def bufs():
    return _Buffers()


@pytest.mark.parametrize("name", BAD_IDS)
def test_bad_field_raises(name, bufs):
    check_bad(name, bufs)


@pytest.mark.parametrize("name", BAD_OBJECT_IDS)
def test_bad_interface_raises(name, bufs):
    check_bad_object(name, bufs)


@pytest.mark.parametrize("name", GOOD_IDS)
def test_valid_interface_copies(name, bufs):
    check_good(name, bufs)


def test_typestr_error_is_both():
    e = rmm._errors.TypestrError("m")
    assert isinstance(e, TypeError) and isinstance(e, ValueError)


def test_itemsizes_are_numpy_s():
    from rmmh._array_interface import itemsize
    for t in ("|u1", "<i2", ">u4", "=i8", "<f2", "<f4", "<f8", "<f16", "<c8", "<c16", "<c32",
              "|b1", "|S1", "|S17", "|V3", "<U1", "<U9", "<M8", "<M8[ns]", "<m8[10ms]", "|O8"):
        assert itemsize(t) == np.dtype(t).itemsize, t
    for t in ("<c-8", "<i-1", "<i0", "<i3", "<f1", "<c4", "|b2", "<M4", "<i8[s]", "<M8[]",
              "<i4 ", "|u\u0661"):
        with pytest.raises(TypeError):
            np.dtype(t)  # numpy rejects them too
        with pytest.raises(TypeError):
            itemsize(t)
    # numpy reads these, rmmh does not: items of 0 bytes, a sign, and O4 (numpy's itemsize 8)
    for t in ("<U0", "|S0", "|V0", "<i+4", "<O4"):
        np.dtype(t)
        with pytest.raises(TypeError):
            itemsize(t)


# ---- in a child interpreter, with and without the accelerator ----------------------------------

PKG = os.path.dirname(os.path.abspath(rmm.__file__))
HAVE_ACCEL = any(f.startswith("_accel") and f.endswith(".so") for f in os.listdir(PKG))
MODES = [pytest.param("1", id="no-accel"),
         pytest.param("", id="accel", marks=pytest.mark.skipif(
             not HAVE_ACCEL, reason="the C accelerator is not built"))]


CHILD = """
import sys
sys.path.insert(0, %r)
import test_cuda_array_interface as t
sys.exit(t.main(sys.argv[1:]))
""" % HERE


def _child(mode, what):
    """This file's main(what) in a new interpreter: with the accelerator, or without (mode "1")."""
    return run_child(CHILD, what, env=child_env(RMMH_NO_ACCEL=mode), timeout=120)


@pytest.mark.parametrize("mode", MODES)
def test_cases_in_a_child(mode):
    out = _child(mode, "cases")
    assert "accelerated %s" % (mode != "1") in out, out
    assert "all cases passed" in out, out


@pytest.mark.parametrize("mode", MODES)
def test_fuzz(mode):
    out = _child(mode, "fuzz")
    print(out)
    assert "accelerated %s" % (mode != "1") in out, out
    assert " 0 failures" in out, out


# ---- the fuzzer ---------------------------------------------------------------------------------

# typestrs numpy reads, with numpy's itemsize (the model's, independent of rmmh's parser)
GOOD_TYPESTRS = [(t, np.dtype(t).itemsize) for t in (
    "|u1", "|i1", "<i2", ">u2", "<i4", "=u4", "<i8", ">i8", "<f2", "<f4", ">f8", "<c8", "<c16",
    "|b1", "|S1", "|S7", "|V2", "|V24", "<U1", "<U3", "<M8[us]", "<m8", "|O8", "<f16", "<c32")]
BAD_TYPESTRS = ["<c-8", "<i-1", "<i0", "<i3", "<f1", "<f5", "<c4", "|b2", "<M4", "<U0", "|S0",
                "u1", "<x4", "", "<", "<i", "i", "<i4 ", " <i4", "<i+4", "<i4[ns]", "<M8[",
                "<M8]", "|V" + "9" * 25, "|S-1", "<i\u0664", "<i 4", "<<i4", "<i4\n", None, 4,
                4.0, b"<i4", ("<", "i", 4), ["<i4"], {"typestr": "<i4"}, True, object()]
HUGE = [1 << 31, 1 << 32, 1 << 40, (1 << 61) - 1, 1 << 61, 1 << 62, (1 << 63) - 1, 1 << 63,
        (1 << 64) - 1]
BAD_COUNTS = [-1, -2, -(1 << 31), -(1 << 63), -(1 << 64), 1 << 64, 1 << 100, 1.0, 0.5, "1", b"1",
              None, True, False, (1,), [1], object(), float("nan"), float("inf"), complex(1, 0)]
BAD_SHAPES = [None, 1, "1", b"1", 1.0, {0: 1}, {1}, object(), (1, 1), (0, 0), (2, 3), [1, 1],
              ((1,),), (1, -1), (-1, 1)]
BAD_SCALARS = [-1, -(1 << 63), 1 << 64, 1 << 70, 1.5, 1.0, "8", b"8", None, True, False, object(),
               [8], (8,), float("nan")]
BAD_VERSIONS = [-1, 4, 5, 1 << 64, -(1 << 64), "3", b"3", 3.0, None, True, False, [3], (3,),
                object(), np.float64(3)]
BAD_MASKS = [object(), False, True, 0, 1, "", "None", (), [], {}, Foreign({})]


def _maybe_numpy(rng, n):
    """n, sometimes as a NumPy integer (interfaces from NumPy code carry those)."""
    if rng.random() < 0.1 and 0 <= n < (1 << 63):
        return np.int64(n)
    return n


def _random_case(rng, base):
    """(interface or object, expected): expected is (offset, nbytes) when the copy must succeed
    with those bytes, None when it must raise TypeError or ValueError."""
    p_bad = 0.08
    bad = False
    cai = {}
    # typestr
    if rng.random() < p_bad:
        cai["typestr"], size, bad = rng.choice(BAD_TYPESTRS), 1, True
    else:
        cai["typestr"], size = rng.choice(GOOD_TYPESTRS)
    # shape
    r = rng.random()
    ndim = 1
    if r < p_bad:
        cai["shape"], count, bad, ndim = rng.choice(BAD_SHAPES), 1, True, None
    elif r < 2 * p_bad:
        cai["shape"], count, bad = (rng.choice(BAD_COUNTS),), 1, True
    elif r < 0.25:
        cai["shape"], count, ndim = (), 1, 0
    else:
        if rng.random() < 0.1:
            count = rng.choice(HUGE)
        else:
            count = rng.randrange(0, DST_BYTES // size + 3)
        cai["shape"] = (_maybe_numpy(rng, count),)
        if rng.random() < 0.1:
            cai["shape"] = list(cai["shape"])
    nbytes = count * size
    # strides
    r = rng.random()
    if r < 0.3:
        pass  # absent
    elif r < 0.55:
        cai["strides"] = None
    elif r < 1 - p_bad or ndim is None:
        if ndim == 0:
            cai["strides"] = ()
        elif count <= 1:
            cai["strides"] = (rng.choice([size, 0, -size, 1, 1 << 40, -(1 << 63)]),)
        else:
            cai["strides"] = (_maybe_numpy(rng, size),)
    else:
        bad = True
        r = rng.random()
        if r < 0.3:
            cai["strides"] = rng.choice([1, "1", 1.0, object(), {0: 1}])
        elif r < 0.5:
            cai["strides"] = (rng.choice(BAD_SCALARS[4:]),) * max(ndim, 1)  # not ints
        elif r < 0.7:
            cai["strides"] = (size,) * (ndim + rng.choice([1, 2]))  # too many
        elif ndim == 1 and count > 1:
            cai["strides"] = (rng.choice([0, -size, 2 * size, size + 1, 1 << 64, -(1 << 64)]),)
        else:
            cai["strides"] = (size, size, size)
    # data
    offset = rng.randrange(0, MAX_OFFSET)
    read_only = rng.choice([False, True, np.False_, np.True_])
    r = rng.random()
    if r < p_bad:
        bad = True
        ptr = base + offset
        cai["data"] = rng.choice([
            None, ptr, str(ptr), (ptr,), (ptr, False, 0), [ptr], (), {ptr: False},
            (ptr, 0), (ptr, 1), (ptr, None), (ptr, "False"), (float(ptr), False),
            (str(ptr), False), (True, False), (False, False), (-1, False), (-ptr, False),
            (1 << 64, False), (1 << 80, False), (object(), False)])
    elif r < 2 * p_bad and nbytes:
        bad = True
        cai["data"] = (rng.choice([0, None, (1 << 64) - nbytes + 1, (1 << 64) - 1]), False)
    elif nbytes == 0 and rng.random() < 0.3:
        cai["data"] = (rng.choice([0, None, base + offset]), read_only)
    else:
        cai["data"] = (_maybe_numpy(rng, base + offset), read_only)
        if rng.random() < 0.1:
            cai["data"] = list(cai["data"])
    # version
    if rng.random() < p_bad:
        cai["version"], bad = rng.choice(BAD_VERSIONS), True
    else:
        cai["version"] = _maybe_numpy(rng, rng.randrange(0, 4))
    # mask, and what is not read
    r = rng.random()
    if r < p_bad / 2:
        cai["mask"], bad = rng.choice(BAD_MASKS), True
    elif r < 0.3:
        cai["mask"] = None
    if rng.random() < 0.2:
        cai["stream"] = rng.choice([None, 1, 2, 0, -1, "x", object()])
    if rng.random() < 0.1:
        cai["descr"] = rng.choice([[("", cai["typestr"])], None, "x"])
    # a required field left out, or no dict at all
    r = rng.random()
    if r < p_bad / 2:
        del cai[rng.choice(["typestr", "shape", "data", "version"])]
        bad = True
    elif r < p_bad:
        bad = True
        cai = rng.choice([None, [], (), "x", 3, list(cai.items()), tuple(cai.values())])
        if rng.random() < 0.3:
            return cai, None  # the object itself, with no interface at all
    if bad or nbytes > DST_BYTES:
        return Foreign(cai), None
    return Foreign(cai), (offset, nbytes)


def fuzz(seed, cases, verbose=False):
    """Runs the fuzzer; returns (failures, accepted, rejected). verbose prints every case
    before it runs."""
    rng = random.Random(seed)
    bufs = _Buffers(seed)
    failures, accepted, rejected = [], 0, 0
    for i in range(cases):
        obj, expected = _random_case(rng, bufs.src.ptr)
        desc = getattr(obj, "__cuda_array_interface__", obj)
        if verbose:  # a crash leaves the case that caused it on stdout
            print("case %d: %r" % (i, desc), flush=True)
        bufs.reset()
        try:
            bufs.dst.copy_from_device(obj)
        except (TypeError, ValueError) as e:
            rejected += 1
            if expected is not None:
                failures.append("case %d: %r: rejected a valid interface: %s: %s"
                                % (i, desc, type(e).__name__, e))
            elif not bufs.copied(0, 0):
                failures.append("case %d: %r: raised %s but wrote the destination"
                                % (i, desc, type(e).__name__))
        except Exception as e:  # noqa: BLE001
            failures.append("case %d: %r: raised %s: %s" % (i, desc, type(e).__name__, e))
        else:
            accepted += 1
            if expected is None:
                failures.append("case %d: %r: accepted a bad interface" % (i, desc))
            elif not bufs.copied(*expected):
                failures.append("case %d: %r: wrong bytes (expected %d bytes from offset %d)"
                                % (i, desc, expected[1], expected[0]))
        if len(failures) >= 20:
            break
    return failures, accepted, rejected


def main(argv):
    print("accelerated %s, backend %s" % (rmm.ACCELERATED, rmm.BACKEND), flush=True)
    if argv[:1] == ["cases"]:
        failures = check_all()
        for f in failures:
            print(f)
        print("all cases passed" if not failures else "%d cases failed" % len(failures))
        return 1 if failures else 0
    if argv[:1] == ["fuzz"]:
        seed = int(os.environ.get("RMM_TEST_SEED") or "20261124", 0)
        cases = int(os.environ.get("RMMH_CAI_FUZZ_CASES") or "20000", 0)
        print("cuda array interface fuzzer: seed %d, %d cases (replay with RMM_TEST_SEED=%d)"
              % (seed, cases, seed), flush=True)
        t = time.perf_counter()
        failures, accepted, rejected = fuzz(seed, cases, verbose=True)
        for f in failures:
            print(f)
        print("%d accepted, %d rejected, %d failures in %.2f s"
              % (accepted, rejected, len(failures), time.perf_counter() - t))
        return 1 if failures else 0
    print("usage: test_cuda_array_interface.py cases|fuzz")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
