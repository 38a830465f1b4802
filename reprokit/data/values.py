"""Small helpers on plain values: a dotted attribute read, and whether a value is plain data."""

from __future__ import annotations


def dotted(obj, name: str):
    """obj.a.b.c for name "a.b.c"."""
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def is_plain(value) -> bool:
    """None, a bool, number or string, or a list or tuple of those."""
    return (
        value is None
        or isinstance(value, (bool, int, float, str))
        or (isinstance(value, (list, tuple)) and all(isinstance(v, (bool, int, float, str)) for v in value))
    )
