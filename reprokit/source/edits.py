"""Smaller versions of a Python script, edited through its AST: statements deleted, helpers inlined,
expressions replaced by a sub-expression. Plain text in, candidate texts out; nothing is run here."""

from __future__ import annotations

import ast
import builtins
import collections
import copy


def statements(tree: ast.Module) -> list:
    """Paths (tuples of (field, index) steps) of every statement, outermost first."""
    out = []

    def walk(node, path):
        for fname in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(node, fname, None)
            if isinstance(block, list):
                for i, child in enumerate(block):
                    if isinstance(child, (ast.stmt, ast.excepthandler)):
                        p = path + ((fname, i),)
                        if isinstance(child, ast.stmt):
                            out.append(p)
                        walk(child, p)

    walk(tree, ())
    return out


def without(source: str, drop: set) -> str | None:
    """The script with the statements at `drop` removed (an emptied block gets `pass`)."""
    tree = ast.parse(source)

    def rebuild(node, path):
        for fname in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(node, fname, None)
            if isinstance(block, list):
                kept = []
                for i, child in enumerate(block):
                    p = path + ((fname, i),)
                    if p in drop:
                        continue
                    if isinstance(child, (ast.stmt, ast.excepthandler)):
                        rebuild(child, p)
                    kept.append(child)
                if not kept and fname in ("body", "finalbody") and not isinstance(node, ast.Module):
                    kept = [ast.Pass()]
                setattr(node, fname, kept)

    rebuild(tree, ())
    try:
        return ast.unparse(ast.fix_missing_locations(tree)) + "\n"
    except Exception:
        return None


def _single_return_functions(tree: ast.Module) -> dict:
    """name -> (params, return expression) of module-level functions whose body is one `return expr`."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.decorator_list:
            body = [b for b in node.body if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant))]
            a = node.args
            if (
                len(body) == 1
                and isinstance(body[0], ast.Return)
                and body[0].value is not None
                and not (a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs)
            ):
                out[node.name] = ([x.arg for x in a.args], body[0].value)
    return out


def inline_candidates(source: str) -> list:
    """Versions of the script with one helper's calls replaced by its return expression (arguments substituted)."""
    tree = ast.parse(source)
    out = []
    for name, (params, expr) in _single_return_functions(tree).items():

        class Inline(ast.NodeTransformer):
            def visit_Call(self, node):
                self.generic_visit(node)
                if (
                    isinstance(node.func, ast.Name)
                    and node.func.id == name  # noqa: B023 (called at once, in the loop)
                    and len(node.args) == len(params)  # noqa: B023 (called at once, in the loop)
                    and not node.keywords
                ):
                    mapping = dict(zip(params, node.args))  # noqa: B023 (called at once, in the loop)

                    class Subst(ast.NodeTransformer):
                        def visit_Name(self, n):
                            return copy.deepcopy(mapping[n.id]) if n.id in mapping else n

                    return Subst().visit(copy.deepcopy(expr))  # noqa: B023 (called at once, in the loop)
                return node

        new = Inline().visit(copy.deepcopy(tree))
        text = ast.unparse(ast.fix_missing_locations(new)) + "\n"
        if text != ast.unparse(tree) + "\n":
            out.append(text)
    return out


def simplify_candidates(source: str, limit: int = 60) -> list:
    """Versions of the script with one expression replaced by one of its sub-expressions (`a * b` -> `a`,
    `f(x).sin()` -> `f(x)`), outermost first. Statement targets and callee names are left alone."""
    tree = ast.parse(source)
    spots = []
    for node in ast.walk(tree):
        for field, value in ast.iter_fields(node):
            if (
                isinstance(value, ast.expr)
                and not isinstance(value, (ast.Name, ast.Constant))
                and field not in ("func", "targets", "target", "annotation", "returns")
            ):
                for child in ast.iter_child_nodes(value):
                    # A slice (`1:`) or a starred item is no expression on its own.
                    if (
                        isinstance(child, ast.expr)
                        and not isinstance(child, (ast.Load, ast.Store, ast.Slice, ast.Starred))
                        and (not isinstance(value, ast.Call) or child is not value.func)
                    ):
                        spots.append((node, field, value, child))
    out = []
    for node, field, value, child in [spot for spot in spots if not _hopeless(*spot)][:limit]:
        setattr(node, field, child)
        text = ast.unparse(ast.fix_missing_locations(copy.deepcopy(tree))) + "\n"
        setattr(node, field, value)
        if _parses(text):  # a swap Python's grammar refuses is no candidate
            out.append(text)
    return out


def _hopeless(node: ast.AST, field: str, value: ast.expr, child: ast.expr) -> bool:
    """Swaps that on the corpus never kept a failure, each an oracle call a sweep asked again every round (issue 50's
    fewer questions): a middle link cut out of a dotted name (`torch.autograd.Function` -> `torch.Function`, no such
    thing), and a torch call made a number it was given (`torch.randn(8, 3)` -> `8`: a tensor's size, no tensor)."""
    if isinstance(node, ast.Attribute) and isinstance(value, ast.Attribute) and child is value.value:
        return True
    return (
        isinstance(value, ast.Call)
        and ast.unparse(value.func).startswith("torch.")
        and isinstance(child, ast.Constant)
        and isinstance(child.value, (int, float))
    )


# Where a script hands its code to the compiler: torch.compile, Dynamo's optimize, torch.export and AOTInductor's
# entry points, a module's own .compile(). Python's builtin compile() is counted too (a cut keeps more, never less).
COMPILE_ENTRIES = {"compile", "optimize", "export", "draft_export", "aot_compile", "aoti_compile_and_package"}


def compile_entries(source: str) -> int:
    """How many times the script names a compiler entry point: a cut that names none compiles nothing, so it cannot
    fail compiled and pass without compile (it would cost a trial to learn so)."""
    return sum(
        1
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Name)
        and node.id in COMPILE_ENTRIES
        or isinstance(node, ast.Attribute)
        and node.attr in COMPILE_ENTRIES
    )


def _parses(source: str) -> bool:
    try:
        ast.parse(source)
    except SyntaxError:
        return False
    return True


# Names a script can read without binding them: builtins and the module attributes Python sets for __main__.
_PROVIDED = set(dir(builtins)) | {
    "__name__",
    "__file__",
    "__doc__",
    "__spec__",
    "__loader__",
    "__package__",
    "__builtins__",
    "__annotations__",
    "__cached__",
    "__module__",
    "__qualname__",
    "__class__",
}
# A script that reaches its namespace another way may bind names no statement shows.
_DYNAMIC = {"exec", "eval", "globals", "locals", "vars"}


def unbound_names(source: str) -> set:
    """Names the script reads that no statement anywhere in it binds (nor builtins): a candidate with one raises
    NameError where it is read. Empty where that cannot be told (a star import, exec, globals())."""
    tree = ast.parse(source)
    bound: set[str] = set()
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            if node.name == "*":
                return set()
            bound.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    if read & _DYNAMIC:
        return set()
    return read - bound - _PROVIDED


# Seeding calls: torch's generator, Python's and NumPy's. torch.seed() is left out: it seeds at random.
_SEEDING = {"manual_seed", "manual_seed_all"}
_SEEDED_MODULES = {"random", "np.random", "numpy.random"}


def seeds(source: str) -> int:
    """How many calls in the script seed a random generator (torch.manual_seed(0), random.seed(1), ...): a cut
    that drops them turns a script that failed every run into one that fails some runs (its inputs now random)."""
    count = 0
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = ast.unparse(node.func.value)
            if node.func.attr in _SEEDING or node.func.attr == "seed" and owner in _SEEDED_MODULES:
                count += 1
    return count


EXITS = {"sys.exit", "exit", "quit", "os._exit"}


def checks(source: str) -> collections.Counter:
    """The script's checks as written: each assert's test, and each `if` test whose body raises or exits. A cut may
    drop one, or keep one part of an `and` assert or an `or` exit, never change one: `assert out_n == ref_n` made
    `assert out_n` still failed, and so did an `if` made `if '...':`, but no longer of what the script compared."""
    found: collections.Counter[str] = collections.Counter()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assert):
            found.update(_narrowed(node.test, ast.And))
        elif isinstance(node, ast.If) and any(
            isinstance(n, ast.Raise) or isinstance(n, ast.Call) and ast.unparse(n.func) in EXITS
            for stmt in node.body
            for n in ast.walk(stmt)
        ):
            found.update(_narrowed(node.test, ast.Or))
    return found


def _narrowed(test: ast.expr, op: type) -> list:
    """A check's test, and each part of it a cut may keep alone: `assert a and b` still asserts `a`, and
    `if a or b: exit` still exits on `a` (the failure is one the script checked, only narrower)."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, op) else []
    return [ast.dump(test), *(ast.dump(p) for p in parts)]


def graph_breaks(source: str) -> int:
    """Calls of torch._dynamo.graph_break(): where the script splits what Dynamo compiles. A cut without one showed
    another bug (pytorch/pytorch#192872's list append is lost across a graph break; without it, #151251's)."""
    return sum(
        1
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("graph_break")
    )
