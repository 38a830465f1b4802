"""Statements merged (issue 50, item 2): `y = f(x)` read once, by a later statement of the same block, is folded
into that read (`out = g(y)` -> `out = g(f(x))`), also where that statement binds the name again
(`model = torch.compile(model)`). The read must run once where the assignment ran once: not in a
loop's body (its iterable is fine), a def, a lambda or a comprehension; nothing between rebinds a name the value
reads or sets a seed; and the name is read nowhere else in its scope (another def's `x` is another variable).
Plain text in, candidate texts out."""

from __future__ import annotations

import ast
import copy

from reprokit.source.names import blocks, dynamic, reads, stored, stored_inside, text

MOST = 16
_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.comprehension,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


def merge_candidates(source: str) -> list:
    """One candidate per assignment that can be folded into its one read, the last assignments first (a repro's
    tail is where the compiled call and its check are)."""
    tree = ast.parse(source)
    if dynamic(tree):
        return []
    spots = [(b, i) for b, (owner, field) in enumerate(blocks(tree)) for i in range(len(getattr(owner, field)))]
    out = []
    for b, i in reversed(spots):
        new = copy.deepcopy(tree)
        owner, field = list(blocks(new))[b]
        if _merge(new, owner, getattr(owner, field), i) and (candidate := text(new)) is not None:
            out.append(candidate)
        if len(out) >= MOST:
            break
    return out


def _merge(tree: ast.Module, owner: ast.AST, block: list, i: int) -> bool:
    s = block[i]
    if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)):
        return False
    name, value = s.targets[0].id, s.value
    total = _scope_reads(tree, owner, name)
    needs = set(reads(value))
    for j in range(i + 1, len(block)):
        later = block[j]
        here = reads(later)[name]
        if here:
            # `m = M(); m = torch.compile(m)`: the later statement rebinds the name, so reads after it are not this one's
            rebinds = isinstance(later, ast.Assign) and name in stored(later)
            if here != 1 or (total != 1 and not rebinds) or isinstance(later, (ast.Assert, ast.If)):
                return False  # read twice, elsewhere too, or in a check (a changed check is refused anyway)
            site = _site(later, name)
            if site is None:
                return False
            holder, field, k = site
            if field is None:
                holder[k] = value
            else:
                setattr(holder, field, value)
            del block[i]
            if not block:
                block.append(ast.Pass())
            return True
        # A statement between that reads what the value reads may change it in place (`x.add_(1)`).
        if (stored(later) | set(reads(later))) & (needs | {name}) or _opaque(later):
            return False
    return False


def _opaque(stmt: ast.stmt) -> bool:
    """A statement after which the value may differ: a def or class (it may rebind through a call) is fine, a
    `global` or `del` is not, nor a seed (a random value moved past `torch.manual_seed(0)` draws another)."""
    return any(
        isinstance(n, (ast.Global, ast.Nonlocal, ast.Delete))
        or isinstance(n, ast.Call)
        and "seed" in ast.unparse(n.func).rsplit(".", 1)[-1]
        for n in ast.walk(stmt)
    )


def _scope_reads(tree: ast.Module, owner: ast.AST, name: str) -> int:
    """Reads of `name` in the scope that holds the block (the def around `owner`, or the module), counting a
    nested def's reads unless it binds the name itself: another def's `x` is another variable."""
    scope: ast.AST = tree
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(m is owner for m in ast.walk(n)):
            scope = n  # ast.walk goes outside in: the last def that holds the block is the innermost
    return _reads_in(scope, name, top=True)


def _reads_in(node: ast.AST, name: str, top: bool = False) -> int:
    if not top and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        if name in stored_inside(node):
            return 0
    if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Store):
        return 1
    if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
        return 1
    return sum(_reads_in(child, name) for child in ast.iter_child_nodes(node))


def _site(stmt: ast.stmt, name: str):
    """(owner, field, index) of the one read of `name` in `stmt`, where it is not inside a loop, a def or a
    comprehension (it would run another number of times): field None means owner is a list."""

    def find(node, inside):
        for field, value in ast.iter_fields(node):
            # a loop's iterable is computed once, before the loop: outside it
            here = inside or isinstance(node, _SCOPES) and not (isinstance(node, ast.For) and field == "iter")
            items = value if isinstance(value, list) else [value]
            for k, child in enumerate(items):
                if not isinstance(child, ast.AST):
                    continue
                if isinstance(child, ast.Name) and child.id == name and isinstance(child.ctx, ast.Load):
                    if here:
                        return None
                    return (value, None, k) if isinstance(value, list) else (node, field, None)
                hit = find(child, here)
                if hit is not None or _has(child, name):
                    return hit
        return None

    return find(stmt, False)


def _has(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(node))
