"""Smaller numbers and fewer iterations (issue 50, item 2): integer literals and tensor shapes halved toward 1 (each
value everywhere at once first, so shapes that must agree still do, then each literal alone), a loop over range()
run once, and an expression Python can compute without running torch replaced by its value.
Plain text in, candidate texts out."""

from __future__ import annotations

import ast
import copy
import operator
from collections.abc import Callable

from reprokit.source.names import dynamic, literal, reads, splice, text

# Calls whose integer arguments are not sizes: a seed drawn anew is another script's inputs.
KEEP_ARGS_OF = {"manual_seed", "manual_seed_all", "seed", "set_printoptions", "exit", "_exit"}
MOST = 24
# source_size's low bits: the literals' sum, below the characters.
NUMBER_BITS = 24
# Folded values spelt longer than this stay as written: `(1, 2, 3, ...)` is no easier to read than `tuple(range(9))`.
LONGEST = 40


def source_size(source: str) -> int:
    """The size the source reduction compares: characters first, then the sum of the integer literals, so that a
    script of the same length with smaller numbers is smaller (`randn(16, 8)` -> `randn(8, 4)`)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return len(source) << NUMBER_BITS
    total = sum(n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and type(n.value) is int and n.value > 0)
    return (len(source) << NUMBER_BITS) + min(total, (1 << NUMBER_BITS) - 1)


def shrink_literal_candidates(source: str) -> list:
    """Each integer value above 1 made 1, then halved, everywhere it is written; then each literal alone."""
    tree = ast.parse(source)
    spots = _int_spots(tree)
    values = sorted({v for _, v in spots}, reverse=True)
    out: list[str | None] = []
    for v in values:
        for to in dict.fromkeys((1, v // 2)):
            out.append(_replaced(tree, {k for k, w in spots if w == v}, to))
    for k, v in spots:
        for to in dict.fromkeys((1, v // 2)):
            out.append(_replaced(tree, {k}, to))
    return [c for c in dict.fromkeys(out) if c and c != text(tree)][:MOST]


def _int_spots(tree: ast.Module) -> list:
    """(position in ast.walk order, value) of each integer literal above 1 that is not a seed nor a check's."""
    skip = _in_checks(tree)
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and ast.unparse(n.func).rsplit(".", 1)[-1] in KEEP_ARGS_OF:
            skip |= {id(c) for c in ast.walk(n)}
    return [
        (k, n.value)
        for k, n in enumerate(ast.walk(tree))
        if isinstance(n, ast.Constant) and type(n.value) is int and n.value > 1 and id(n) not in skip
    ]


def _in_checks(tree: ast.Module) -> set:
    """ids of the nodes inside an assert or a comparison: a check changed is refused anyway, no trial spent on it."""
    return {id(c) for n in ast.walk(tree) if isinstance(n, (ast.Assert, ast.Compare)) for c in ast.walk(n)}


def _replaced(tree: ast.Module, at: set, value) -> str | None:
    new = copy.deepcopy(tree)
    for k, n in enumerate(ast.walk(new)):
        if k in at and isinstance(n, ast.Constant):
            n.value = value
    return text(new)


def cut_loop_candidates(source: str) -> list:
    """Each `for name in range(...)` run once: its body in its place after `name = <first value>` (where the
    body has no break or continue of its own and no else), else its range made `range(1)`. A loop of one name over
    a name, an attribute or a display is run once the same way, after `name = <sequence>[0]` (`for layer in
    self.layers`), with the same conditions."""
    tree = ast.parse(source)
    loops = [k for k, n in enumerate(ast.walk(tree)) if _range_loop(n) or _sequence_loop(n)]
    out = []
    for k in loops:
        new = copy.deepcopy(tree)
        loop = list(ast.walk(new))[k]
        assert isinstance(loop, ast.For)
        if _unrollable(loop):
            splice(new, loop, [ast.Assign([loop.target], _first_item(loop)), *loop.body])
        elif ast.unparse(loop.iter) != "range(1)":
            loop.iter = ast.Call(ast.Name("range", ast.Load()), [ast.Constant(1)], [])
        else:
            continue
        candidate = text(new)
        if candidate is not None and candidate != text(tree):
            out.append(candidate)
    return out


def _first_item(loop: ast.For) -> ast.expr:
    """What the loop's name holds on its first pass: range's start, else the sequence's `[0]`."""
    if _range_loop(loop):
        args = loop.iter.args  # type: ignore[attr-defined]
        return args[0] if len(args) > 1 else ast.Constant(0)
    return ast.Subscript(loop.iter, ast.Constant(0), ast.Load())


def _sequence_loop(n: ast.AST) -> bool:
    """A loop over a name, an attribute or a display (`for layer in self.layers`), which `[0]` indexes; a call's
    result (`model.parameters()`, `zip(...)`, a generator) may not be indexable."""
    return (
        isinstance(n, ast.For) and isinstance(n.iter, (ast.Name, ast.Attribute, ast.List, ast.Tuple)) and _unrollable(n)
    )


def _range_loop(n: ast.AST) -> bool:
    return (
        isinstance(n, ast.For)
        and isinstance(n.iter, ast.Call)
        and ast.unparse(n.iter.func) == "range"
        and 1 <= len(n.iter.args) <= 2
        and not n.iter.keywords
    )


def _unrollable(loop: ast.For) -> bool:
    if loop.orelse or not isinstance(loop.target, ast.Name):
        return False

    def own(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Break, ast.Continue)):
                return True
            if not isinstance(child, (ast.For, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and own(
                child
            ):
                return True
        return False

    return not own(loop)


_BINARY: dict[type, Callable] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Div: operator.truediv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable] = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_}
_PURE: dict[str, Callable] = {
    "len": len,
    "int": int,
    "float": float,
    "abs": abs,
    "min": min,
    "max": max,
    "round": round,
}


def fold_constant_candidates(source: str) -> list:
    """Every expression with a literal value no longer than it replaced by it at once first, then each alone,
    outermost first. Its value: arithmetic on literals, lists and their items and slices, names bound once at the top
    level to one, len/min/max/int/float/abs/round."""
    tree = ast.parse(source)
    if dynamic(tree):
        return []
    known = _constants(tree)
    checked = _in_checks(tree)
    spots = []
    for k, n in enumerate(ast.walk(tree)):
        if isinstance(n, ast.expr) and not literal(n)[0] and not _is_store(n) and id(n) not in checked:
            ok, value = _value(n, known)
            if ok and _spelt(value) and len(repr(value)) <= len(ast.unparse(n)):
                spots.append((k, value))
    singles = [c for k, v in spots if (c := _folded(tree, {k: v})) is not None]
    every = _folded(tree, dict(spots)) if spots else None
    out = [every] if every else []
    return [c for c in dict.fromkeys(out + singles) if c != text(tree)][:MOST]


def _spelt(value) -> bool:
    """A value Python spells back as the same literal, briefly (not inf, nan, a long tuple)."""
    try:
        return ast.literal_eval(repr(value)) == value and len(repr(value)) <= LONGEST
    except (ValueError, SyntaxError):
        return False


def _is_store(n: ast.expr) -> bool:
    return isinstance(getattr(n, "ctx", None), (ast.Store, ast.Del))


def _constants(tree: ast.Module) -> dict:
    """Top-level names bound once, by `name = literal`, and bound nowhere else (no parameter, no loop)."""
    binds: dict[str, int] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            binds[n.id] = binds.get(n.id, 0) + 1
        elif isinstance(n, ast.arg):
            binds[n.arg] = binds.get(n.arg, 0) + 2
    out = {}
    for s in tree.body:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            name = s.targets[0].id
            ok, value = literal(s.value)
            if ok and binds.get(name) == 1 and reads(tree)[name] and isinstance(value, (int, float, bool, str)):
                out[name] = value
    return out


def _value(n: ast.AST, known: dict):
    """(True, value) when the expression's value needs nothing but literals, `known` names and pure builtins."""
    try:
        return True, _eval(n, known)
    except Exception:
        return False, None


def _eval(n: ast.AST, known: dict):
    if isinstance(n, ast.Constant):
        return n.value
    if isinstance(n, ast.Name) and n.id in known:
        return known[n.id]
    if isinstance(n, ast.Tuple):
        return tuple(_eval(e, known) for e in n.elts)
    if isinstance(n, ast.List):
        return [_eval(e, known) for e in n.elts]
    if isinstance(n, ast.Subscript):
        return _eval(n.value, known)[_eval(n.slice, known)]
    if isinstance(n, ast.Slice):
        return slice(*(None if part is None else _eval(part, known) for part in (n.lower, n.upper, n.step)))
    if isinstance(n, ast.BinOp) and type(n.op) in _BINARY:
        left, right = _eval(n.left, known), _eval(n.right, known)
        if isinstance(n.op, ast.Pow) and abs(right) > 64 or isinstance(n.op, ast.Mult) and _long(left, right):
            raise ValueError("too large")
        return _BINARY[type(n.op)](left, right)
    if isinstance(n, ast.UnaryOp) and type(n.op) in _UNARY:
        return _UNARY[type(n.op)](_eval(n.operand, known))
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _PURE and not n.keywords:
        if n.func.id in known:
            raise ValueError("rebound")
        return _PURE[n.func.id](*(_eval(a, known) for a in n.args))
    raise ValueError("not a literal")


def _long(left, right) -> bool:
    """A sequence repeated into something long (`"a" * 10**9`): not computed here."""
    return any(isinstance(a, (str, tuple, list)) for a in (left, right)) and any(
        type(b) is int and b > LONGEST for b in (left, right)
    )


def _folded(tree: ast.Module, at: dict) -> str | None:
    """The tree with the expressions at these walk positions replaced by their values (outermost wins)."""
    new = copy.deepcopy(tree)
    index = {id(n): k for k, n in enumerate(ast.walk(new))}

    class Fold(ast.NodeTransformer):
        def visit(self, node):
            k = index.get(id(node))
            if k in at:
                return ast.copy_location(ast.parse(repr(at[k]), mode="eval").body, node)
            return self.generic_visit(node)

    return text(Fold().visit(new))
