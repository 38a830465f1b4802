"""The source passes toward what a person writes (issue 50, item 2), in the order the reduction runs them: each
proposes smaller texts of the script (its own module says how), and a sweep keeps the first that fails the same
way, as reduce.py's other passes do. Cheapest and likeliest first: the share of time may end before the last."""

from __future__ import annotations

import functools

from reprokit.search import Pass
from reprokit.source.bind import (
    alias_candidates,
    attribute_constant_candidates,
    empty_class_candidates,
    forwarder_candidates,
    lambda_candidates,
    literal_name_candidates,
    param_default_candidates,
    unwrap_with_candidates,
)
from reprokit.source.collect import collection_candidates, enumerate_candidates
from reprokit.source.flatten import flatten_module_candidates, remove_class_candidates
from reprokit.source.inline import inline_call_candidates
from reprokit.source.join import return_choice_candidates
from reprokit.source.layers import forward_parameter_candidates, layer_candidates
from reprokit.source.merge import merge_candidates
from reprokit.source.shrink import (
    NUMBER_BITS,
    cut_loop_candidates,
    fold_constant_candidates,
    shrink_literal_candidates,
    source_size,
)
from reprokit.source.trim import (
    default_argument_candidates,
    unused_attribute_candidates,
    unused_name_candidates,
    unused_parameter_candidates,
)
from reprokit.source.unpack import tuple_element_candidates

# Inlining a body or flattening a module may make the script longer before the def or class it leaves unused goes:
# candidates up to this many characters longer than the best are still tried.
SLACK = 200

# (name, proposals, characters a candidate may exceed the best by)
PERSON_EDITS = [
    ("merge_statements", merge_candidates, 0),
    ("return_choices", return_choice_candidates, 0),
    ("drop_default_arguments", default_argument_candidates, 0),
    ("drop_unused_names", unused_name_candidates, 0),
    ("drop_unused_attributes", unused_attribute_candidates, 0),
    ("drop_unused_parameters", unused_parameter_candidates, 0),
    ("drop_forward_parameters", forward_parameter_candidates, 0),
    ("inline_aliases", alias_candidates, 0),
    ("inline_literal_names", literal_name_candidates, 0),
    ("inline_parameter_defaults", param_default_candidates, 0),
    ("fold_attributes", attribute_constant_candidates, 0),
    ("drop_forwarders", forwarder_candidates, 0),
    ("lambdas", lambda_candidates, 0),
    ("drop_tuple_elements", tuple_element_candidates, 0),
    ("drop_collections", collection_candidates, 0),
    ("drop_loop_counts", enumerate_candidates, 0),
    ("inline_calls", inline_call_candidates, SLACK),
    ("flatten_modules", flatten_module_candidates, SLACK),
    ("drop_layers", layer_candidates, 0),
    ("remove_classes", remove_class_candidates, 0),
    ("empty_classes", empty_class_candidates, 0),
    ("unwrap_with", unwrap_with_candidates, 0),
    ("cut_loops", cut_loop_candidates, 0),
    ("fold_constants", fold_constant_candidates, 0),
    ("shrink_literals", shrink_literal_candidates, 0),
]


def person_passes(sweep) -> list:
    """The passes above as search.Pass values: sweep(problem, source, propose, keep) is reduce.py's sweep."""
    return [
        Pass(name, functools.partial(_run, sweep, propose, slack), detour=slack > 0)
        for name, propose, slack in PERSON_EDITS
    ]


def _run(sweep, propose, slack: int, problem, source: str) -> str:
    # source_size counts characters above its low bits
    return sweep(
        problem, source, propose, lambda c: source_size(c) < problem.size(problem.best) + (slack << NUMBER_BITS)
    )


__all__ = ["PERSON_EDITS", "person_passes", "source_size"]
