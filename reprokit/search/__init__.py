"""Generic search strategies over predicates. Knows nothing of torch, FX or processes."""

from .bisect import find_boundary, find_boundary_guessing, first_failing
from .ddmin import ddmin
from .fixpoint import Pass, run_passes
from .probdd import probdd
from .problem import Problem
from .share import Plan, Share
from .verify_back import verified_back, walk_back_order

__all__ = [
    "find_boundary",
    "find_boundary_guessing",
    "first_failing",
    "ddmin",
    "Pass",
    "Plan",
    "Problem",
    "probdd",
    "run_passes",
    "Share",
    "verified_back",
    "walk_back_order",
]
