"""The script statements a captured graph needs in order to run anywhere else: custom-op registrations,
decompositions and compiler hooks (custom passes) the script set up at run time, and the imports they use.

Pure source analysis (ast): no torch. The prelude is copied verbatim into graph trials and into repro.py,
so a graph that calls `torch.ops.mylib.op` or relies on a custom post-grad pass behaves as it did in the script.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

# Words that mark a top-level statement as one that registers something the compiled graph depends on.
_MARKERS = (
    "torch.library",
    "custom_op",
    "register_fake",
    "register_autograd",
    "register_kernel",
    "register_decomposition",
    "decomposition",
    "Library(",
    "impl_abstract",
    "register_torch_dispatch",
    "custom_pass",
    "custom_pre_pass",
    "custom_post_pass",
    "CustomGraphPass",
)


def _names_loaded(node: ast.AST) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _defined_names(stmt: ast.stmt) -> set:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def _bound_by_import(stmt) -> set:
    return {(a.asname or a.name).split(".")[0] for a in stmt.names}


def _is_main_guard(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.If) and "__main__" in ast.unparse(stmt.test)


def _definition_like(stmt: ast.stmt) -> bool:
    """Statements safe to carry for their names: defs, classes, and assignments of literals or library objects."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return True
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
        text = ast.unparse(stmt.value)
        return isinstance(stmt.value, ast.Constant) or any(m in text for m in _MARKERS) or text.startswith("torch.ops.")
    return False


def prelude_for(source: str, hook_names: Iterable[str] = (), op_namespaces: Iterable[str] = ()) -> str | None:
    """The statements of `source` that register what a graph needs (see module doc), or None when there are none.

    hook_names: names the compiler config refers to (a custom pass function or class). op_namespaces: the
    namespaces of non-builtin ops the graph calls; statements mentioning one are carried too.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    body = [s for s in tree.body if not _is_main_guard(s)]
    namespaces = [ns for ns in op_namespaces if ns]
    wanted = set(hook_names)
    chosen: set = set()
    for i, stmt in enumerate(body):
        # A bare constant registers nothing: the script's docstring naming custom_op is no statement the graph needs.
        if (
            isinstance(stmt, (ast.Import, ast.ImportFrom))
            or isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Constant)
        ):
            continue
        text = ast.unparse(stmt)
        if any(m in text for m in _MARKERS) or any(
            f'"{ns}::' in text or f"'{ns}::" in text or f'"{ns}"' in text or f"'{ns}'" in text for ns in namespaces
        ):
            chosen.add(i)
        elif _defined_names(stmt) & wanted and _definition_like(stmt):
            chosen.add(i)
    if not chosen:
        return None
    # Close over the module-level definitions the chosen statements use (helpers, classes, constants).
    by_name: dict[str, int] = {}
    for i, stmt in enumerate(body):
        if _definition_like(stmt):
            for name in _defined_names(stmt):
                by_name.setdefault(name, i)
    pending = list(chosen)
    while pending:
        i = pending.pop()
        for name in _names_loaded(body[i]):
            j = by_name.get(name)
            if j is not None and j not in chosen:
                chosen.add(j)
                pending.append(j)
    used = set().union(*(_names_loaded(body[i]) for i in chosen))
    used |= {
        n.value.id
        for i in chosen
        for n in ast.walk(body[i])
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
    }
    imports = [
        i for i, s in enumerate(body) if isinstance(s, (ast.Import, ast.ImportFrom)) and _bound_by_import(s) & used
    ]
    keep = sorted(set(imports) | chosen)
    lines = source.splitlines()
    return "\n\n".join(_segment(lines, body[i]) for i in keep) + "\n"


def _segment(lines: list, stmt: ast.stmt) -> str:
    """The statement's own text, decorators included (ast's segment starts at `def`)."""
    first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])
    return "\n".join(lines[first - 1 : stmt.end_lineno])
