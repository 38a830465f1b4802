"""Generic search strategies over predicates. Knows nothing of torch, FX or processes."""
from .bisect import find_boundary, first_failing
from .ddmin import ddmin
from .fixpoint import run_to_fixpoint

__all__ = ["find_boundary", "first_failing", "ddmin", "run_to_fixpoint"]
