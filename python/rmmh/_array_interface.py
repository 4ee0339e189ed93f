"""Reading another library's ``__cuda_array_interface__`` (the CUDA Array Interface, versions 0
to 3), for DeviceBuffer.copy_from_device.

Every field of a foreign interface is untrusted input: a negative shape or itemsize used to
become a byte count of 2**64-1 in rmm_memcpy_async, and the copy wrote over the heap. So each
field is checked here, in this one place, before any C call sees a number from it; the C
accelerator (src/_accel.c) does not read the interface. What is accepted, and what else raises:

    the interface   a dict                                          TypeError
    version         an int 0 to 3 (required, as the interface says) TypeError, ValueError
    mask            absent or None (masked arrays are not copied)   ValueError
    typestr         a str: '<', '>', '|' or '='; a kind; a size     TypeError, TypestrError
                    above 0 that numpy.dtype accepts ('|u1', '<f8',
                    '<U3', '<M8[ns]'), and numpy.dtype accepts the
                    whole (a unit, say); the itemsize is numpy's
                    ('<U3' is 12 bytes)
    shape           a tuple or list of ints, at most one dimension  TypeError, ValueError;
                    (RMM copies 1-D arrays only), each >= 0         NegativeSizeError (< 0)
    strides         absent, None, or one int per dimension,         TypeError, ValueError
                    C-contiguous (a dimension of 0 or 1 elements
                    may have any stride)
    data            a (pointer, read_only) tuple or list: the       TypeError, ValueError;
                    pointer an int in 0 .. 2**64-1 (None means 0),  NegativeSizeError (< 0)
                    read_only a bool; NULL only for 0 bytes; the
                    end (pointer + bytes) must fit in 64 bits

``stream`` and ``descr`` are not read (RMM does not read them either). Ints may be any object
with ``__index__`` (NumPy integers) except bool. The exception types are RMM's where RMM has a
check (ValueError for more than one dimension and non-contiguous strides; the OverflowError
Cython raises for a negative size_t is NegativeSizeError, an OverflowError and a ValueError;
numpy.dtype's TypeError for a typestr it cannot read is TypestrError, a TypeError and a
ValueError); elsewhere TypeError for a field of the wrong type and ValueError for a wrong value,
as rmmh's other argument checks do. Every message names the field.
"""
import operator
import re

from ._errors import NegativeSizeError, TypestrError

_SIZE_MAX = (1 << 64) - 1
_NAME = "__cuda_array_interface__"
_VERSIONS = range(0, 4)

# typestr: byte order, kind, size in bytes (characters for U), and a unit for datetimes. The
# sizes are those numpy.dtype accepts on 64-bit Linux, where RMM reads the typestr with it.
_TYPESTR = re.compile(r"[<>|=]([btiufcmMOSUV])([1-9][0-9]{0,18})(\[[0-9]*[A-Za-z]+\])?\Z")
_SIZES = {"b": (1,), "i": (1, 2, 4, 8), "u": (1, 2, 4, 8), "f": (2, 4, 8, 16),
          "c": (8, 16, 32), "m": (8,), "M": (8,), "O": (8,)}  # S, U, V: any size


def _field(key):
    return "%s[%r]" % (_NAME, key)


def _as_int(value, what):
    """value as an int: TypeError unless it has __index__ or is a bool."""
    if isinstance(value, bool) or type(value).__name__ in ("bool_", "bool"):
        raise TypeError("%s must be an integer, not %s" % (what, type(value).__name__))
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError("%s must be an integer, not %s" % (what, type(value).__name__)) from None


def _as_size(value, what):
    """value as an int in 0 .. 2**64-1 (a size_t)."""
    v = _as_int(value, what)
    if v < 0:
        raise NegativeSizeError("%s must not be negative (got %d)" % (what, v))
    if v > _SIZE_MAX:
        raise ValueError("%s %d does not fit in size_t" % (what, v))
    return v


def _as_sequence(value, what, expected):
    if not isinstance(value, (tuple, list)):
        raise TypeError("%s must be %s, not %s" % (what, expected, type(value).__name__))
    return value


def itemsize(typestr):
    """Bytes per element of a CUDA Array Interface typestr (numpy's itemsize): the form above, and
    then numpy.dtype's reading of it, as RMM reads it (numpy is a dependency; until session 42 the
    form alone decided, and kinds and datetime units numpy refuses, '|t8' or '<M8[xyz]', were taken
    as data: a red team's find). Without numpy, the form alone."""
    what = _field("typestr")
    if not isinstance(typestr, str):
        raise TypeError("%s must be a str such as '<f8', not %s" % (what, type(typestr).__name__))
    m = _TYPESTR.match(typestr)
    kind = m.group(1) if m else None
    size = int(m.group(2)) if m else 0
    if m is None or (m.group(3) and kind not in "mM") or size not in _SIZES.get(kind, (size,)):
        raise TypestrError("%s %r is not a data type (byte order, kind and size, as in '<f8')"
                           % (what, typestr))
    try:
        import numpy
    except ImportError:
        return size * 4 if kind == "U" else size
    try:
        return numpy.dtype(typestr).itemsize
    except Exception as e:  # (numpy's TypeError or ValueError)
        raise TypestrError("%s %r is not a data type numpy reads: %s" % (what, typestr, e)) from None


def read(obj):
    """(address, nbytes) of a 1-D contiguous device array ``obj``, every field of its
    __cuda_array_interface__ checked (see the module's comment). ValueError if obj has none."""
    try:
        cai = obj.__cuda_array_interface__
    except AttributeError:
        raise ValueError("Expected object to support `__cuda_array_interface__` "
                         "protocol") from None
    if not isinstance(cai, dict):
        raise TypeError("%s must be a dict, not %s" % (_NAME, type(cai).__name__))
    for key in ("version", "typestr", "shape", "data"):
        if key not in cai:
            raise ValueError("%s has no %r (a required field)" % (_NAME, key))

    version = _as_int(cai["version"], _field("version"))
    if version not in _VERSIONS:
        raise ValueError("%s is %d; rmmh reads versions 0 to 3" % (_field("version"), version))
    if cai.get("mask") is not None:
        raise ValueError("%s must be None: masked arrays are not supported" % _field("mask"))

    size = itemsize(cai["typestr"])

    what = _field("shape")
    shape = [_as_size(n, "%s[%d]" % (what, i))
             for i, n in enumerate(_as_sequence(cai["shape"], what, "a tuple of ints"))]
    if len(shape) > 1:
        raise ValueError("Only 1-D contiguous arrays are supported, got {}-D array"
                         .format(len(shape)))
    count = shape[0] if shape else 1

    strides = cai.get("strides")
    if strides is not None:
        what = _field("strides")
        strides = [_as_int(s, "%s[%d]" % (what, i))
                   for i, s in enumerate(_as_sequence(strides, what, "None or a tuple of ints"))]
        if len(strides) != len(shape):
            raise ValueError("%s has %d entries for a shape of %d dimension(s)"
                             % (what, len(strides), len(shape)))
        if shape and count > 1 and strides[0] != size:
            raise ValueError("Only 1-D contiguous arrays are supported, got a non-contiguous "
                             "array (%s is %r, the itemsize %d)" % (what, tuple(strides), size))

    what = _field("data")
    data = _as_sequence(cai["data"], what, "a (pointer, read_only) tuple")
    if len(data) != 2:
        raise ValueError("%s must be a (pointer, read_only) tuple, got %d entries"
                         % (what, len(data)))
    ptr, read_only = data
    ptr = 0 if ptr is None else _as_size(ptr, what + "[0]")
    if not (isinstance(read_only, bool) or type(read_only).__name__ in ("bool_", "bool")):
        raise TypeError("%s[1] (read_only) must be a bool, not %s"
                        % (what, type(read_only).__name__))

    nbytes = count * size
    if nbytes and not ptr:
        raise ValueError("%s[0] is NULL for an array of %d bytes" % (what, nbytes))
    if ptr + nbytes > _SIZE_MAX:
        raise ValueError("%s[0] %#x plus %d bytes runs past the end of the address space"
                         % (what, ptr, nbytes))
    return ptr, nbytes
