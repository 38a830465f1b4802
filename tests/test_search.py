"""The generic search knows nothing of torch: pure predicates over lists and integers."""
import ast
import os
import pathlib

import pytest

from reprokit.search import ddmin, find_boundary, first_failing, run_to_fixpoint


def test_ddmin_finds_single_culprit_in_few_questions():
    asked = []

    def fails(xs):
        asked.append(list(xs))
        return 37 in xs

    assert ddmin(list(range(100)), fails) == [37]
    assert len(asked) <= 2 * 7 + 2


def test_ddmin_finds_a_pair_that_must_stay_together():
    result = ddmin(list(range(40)), lambda xs: 3 in xs and 31 in xs)
    assert result == [3, 31]


def test_ddmin_result_is_one_minimal():
    def fails(xs):
        return sum(xs) >= 10

    result = ddmin([1, 2, 3, 4, 5, 6], fails)
    assert fails(result)
    for i in range(len(result)):
        assert not fails(result[:i] + result[i + 1:])


@pytest.mark.parametrize("boundary", [0, 1, 7, 42, 99])
def test_find_boundary_with_known_upper_bound(boundary):
    asked = []

    def fails(n):
        asked.append(n)
        return n >= boundary

    assert find_boundary(fails, lo=-1, hi=99) == boundary
    assert len(asked) <= 8


@pytest.mark.parametrize("boundary", [0, 5, 1000])
def test_find_boundary_probes_exponentially_without_upper_bound(boundary):
    assert find_boundary(lambda n: n >= boundary, lo=-1) == boundary


def test_first_failing_stops_at_first():
    seen = []
    assert first_failing(["a", "b", "c"], lambda s: seen.append(s) or s == "b") == 1
    assert seen == ["a", "b"]
    assert first_failing([1, 2], lambda s: False) is None


def test_fixpoint_repeats_until_no_progress():
    halve = lambda n: n // 2 if n > 3 else n
    assert run_to_fixpoint(100, [halve], size=lambda n: n) == 3


def test_search_package_imports_nothing_of_torch_or_fx():
    root = pathlib.Path(__file__).parent.parent / "reprokit" / "search"
    for path in root.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            for name in names:
                assert not name.startswith(("torch", "reprokit")), f"{path.name} imports {name}"


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def test_private_torch_apis_only_in_compat():
    """Imports of, and attribute access to, torch._dynamo/_inductor/_functorch live in compat.py alone."""
    root = pathlib.Path(__file__).parent.parent / "reprokit"
    private = ("torch._dynamo", "torch._inductor", "torch._functorch", "torch._TorchCompile")
    offenders = []
    for path in root.rglob("*.py"):
        if path.name == "compat.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            elif isinstance(node, ast.Attribute):
                names = [_dotted(node)]
            offenders += [f"{path.name}:{node.lineno} {n}" for n in names if n.startswith(private)]
    assert offenders == []


@pytest.mark.parametrize("boundary", [0, 1, 13, 42, 99])
def test_find_boundary_asks_several_points_per_round(boundary):
    rounds = []

    def many(points):
        rounds.append(points)
        return [p >= boundary for p in points]

    assert find_boundary(lambda n: n >= boundary, lo=-1, hi=99, fails_many=many, width=2) == boundary
    assert len(rounds) <= 5  # log3(100) rounds instead of log2(100)


def test_ddmin_with_batched_questions_gives_the_same_answer():
    batches = []

    def first_of(cands):
        batches.append(len(cands))
        return next((i for i, c in enumerate(cands) if 37 in c and 5 in c), None)

    assert ddmin(list(range(64)), lambda xs: 37 in xs and 5 in xs, first_failing_of=first_of) == [5, 37]
    assert max(batches) > 1
