"""parse_bytes (RMM's rmm.pylibrmm.helper.parse_bytes) and small shared helpers."""
import operator
import re

_BYTE_SIZES = {
    "": 1, "b": 1,
    "kb": 1000, "mb": 1000 ** 2, "gb": 1000 ** 3, "tb": 1000 ** 4, "pb": 1000 ** 5,
    "kib": 1024, "mib": 1024 ** 2, "gib": 1024 ** 3, "tib": 1024 ** 4, "pib": 1024 ** 5,
}
_PATTERN = re.compile(r"^([0-9]+(?:\.[0-9]*)?)[\t ]*((?i:(?:[kmgtp]i?)?b))?$")


def parse_bytes(s):
    """A size in bytes from an int, or a string such as "1GiB", "512MB", "1.5 gib" or "100".

    Ints are returned as they are; strings are a number and an optional case-insensitive unit
    (b, kb .. pb in powers of 1000, kib .. pib in powers of 1024). Anything else is a ValueError
    (a TypeError for types that are neither)."""
    if isinstance(s, bool):
        raise TypeError("a size must be an int or a string such as '1GiB', not bool")
    if isinstance(s, int):
        return s
    if hasattr(type(s), "__index__") and not isinstance(s, str):
        return operator.index(s)  # TypeError if its __index__ returns a non-int
    if not isinstance(s, str):
        raise TypeError("a size must be an int or a string such as '1GiB', not %s"
                        % type(s).__name__)
    m = _PATTERN.match(s.strip())
    if m is None:
        raise ValueError("Could not parse %s as a byte specification" % s)
    return int(float(m.group(1)) * _BYTE_SIZES[(m.group(2) or "").lower()])
