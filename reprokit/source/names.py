"""What the source passes ask of a script's names: which are read, stored, bound once to a literal. Pure AST."""

from __future__ import annotations

import ast
import collections
import copy

# Reaching the namespace these ways binds names no statement shows: a pass that moves names refuses such a script.
DYNAMIC = {"exec", "eval", "globals", "locals", "vars"}


def reads(tree: ast.AST) -> collections.Counter:
    """How many times each name is read, `global`/`nonlocal` names counted as read (they reach another scope)."""
    found: collections.Counter[str] = collections.Counter()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store):
            found[n.id] += 1
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            found.update(n.names)
    return found


def every_name(tree: ast.AST, attributes: bool = True) -> set:
    """Every identifier the tree spells as a name, a parameter, a def, an import or (unless told) an attribute."""
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            if attributes:
                out.add(n.attr)
        elif (name := bound_name(n)) is not None:
            out.add(name)
    return out


def bound_name(n: ast.AST) -> str | None:
    """The name a parameter, def, class or import binds; None for any other node."""
    if isinstance(n, ast.arg):
        return n.arg
    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return n.name
    if isinstance(n, ast.alias):
        return (n.asname or n.name).split(".")[0]  # `import a.b` binds a
    return None


def module_scope(tree: ast.Module) -> set:
    """Names a module-level binding may meet: those the top level binds or reads, and those a def or class reads
    without binding (its globals). A def's own parameters and locals are not among them."""
    out: set[str] = set()

    def top(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                if not isinstance(child, ast.Lambda):
                    out.add(child.name)
                out.update(set(reads(child)) - stored_inside(child))
                for d in getattr(child, "decorator_list", []) + getattr(child, "bases", []):
                    out.update(reads(d))
            else:
                if isinstance(child, ast.Name):
                    out.add(child.id)
                elif isinstance(child, ast.alias):
                    out.add((child.asname or child.name).split(".")[0])
                top(child)

    top(tree)
    return out


def stored_inside(node: ast.AST) -> set:
    """Names a def, lambda or class binds for itself: its parameters and assignments, less its `global` names."""
    inner = stored(node) - {getattr(node, "name", "")}
    for n in ast.walk(node):
        if isinstance(n, ast.Global):
            inner -= set(n.names)
    return inner


def stored(tree: ast.AST) -> set:
    """Names a statement of the tree binds (assignments, loop targets, parameters, defs, imports)."""
    out = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
    for n in ast.walk(tree):
        name = n.name if isinstance(n, ast.ExceptHandler) else bound_name(n)
        if name:
            out.add(name)
    return out


def dynamic(tree: ast.AST) -> bool:
    """The script reaches its namespace by name (exec, globals(), ...) or star-imports: names cannot be moved."""
    return bool(set(reads(tree)) & DYNAMIC) or any(isinstance(n, ast.alias) and n.name == "*" for n in ast.walk(tree))


def renamed(node: ast.AST, mapping: dict) -> ast.AST:
    """A copy of `node` with every Name and parameter in `mapping` renamed (or replaced by the mapped expression)."""

    class Rename(ast.NodeTransformer):
        def visit_Name(self, n):
            new = mapping.get(n.id)
            if new is None:
                return n
            if isinstance(new, str):
                return ast.copy_location(ast.Name(new, n.ctx), n)
            return copy.deepcopy(new)

        def visit_arg(self, n):
            if isinstance(mapping.get(n.arg), str):
                n.arg = mapping[n.arg]
            return n

    return Rename().visit(copy.deepcopy(node))


def splice(tree: ast.AST, node: ast.stmt, replacement: list) -> tuple | None:
    """`node` replaced by `replacement` in the statement list that holds it: (owner, field) of that list, or None
    when no list holds it."""
    for owner in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(owner, field, None)
            if isinstance(block, list) and any(s is node for s in block):
                i = next(j for j, s in enumerate(block) if s is node)
                block[i : i + 1] = replacement
                return owner, field
    return None


def calls_of(tree: ast.AST, name: str) -> list | None:
    """The calls of `name` when every use of the name is one (a class named as a base, a def handed on: its calls
    are out of sight), else None."""
    uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name]
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.func in uses]
    return calls if len(calls) == len(uses) else None


def text(tree: ast.Module) -> str | None:
    """The tree as source, or None when Python would not compile it (a `return` left at the top level)."""
    try:
        out = ast.unparse(ast.fix_missing_locations(tree)) + "\n"
        compile(out, "<candidate>", "exec")
    except (SyntaxError, ValueError, TypeError):
        return None
    return out


def blocks(tree: ast.AST):
    """(owner, field) of every statement list in the tree: module, def and class bodies, branches, handlers."""
    for n in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(n, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield n, field


def literal(node: ast.AST):
    """(True, value) when the node is a literal Python can read without running anything, else (False, None)."""
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def same_literal(a: ast.AST, b: ast.AST) -> bool:
    """Both literals, of one type and equal (`1` is not `1.0`, nor `True`)."""
    (ok_a, va), (ok_b, vb) = literal(a), literal(b)
    return ok_a and ok_b and type(va) is type(vb) and va == vb
