"""rmm.pylibrmm.helper: parse_bytes."""
from .._helpers import parse_bytes  # noqa: F401
