"""The last touches on a reduced script before it is verified as repro.py (issue 50, item 7): a check that exits
or asserts on a wrong result says what differs first, and the text is laid out by a standard formatter. Both are
tried on the verified text only: a polished repro that no longer verifies gives way to the plain one."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sysconfig

from reprokit.source.edits import EXITS
from reprokit.source.join import paired
from reprokit.source.tidy import without_empty_blocks

_COMPARES = {"allclose", "equal"}  # torch.allclose(a, b), a.allclose(b), torch.equal(a, b), a.equal(b)


def explained(source: str) -> str:
    """The script with each check that exits on a failed comparison saying the values as it exits, and each bare
    assert of a comparison given a message: a maintainer running it sees what differs and by how much."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and not node.orelse:
            at = next((i for i, s in enumerate(node.body) if _exits(s)), None)
            said = _what_differs(node.test)
            if at is not None and said and not any(_prints_values(s) for s in node.body[:at]):
                _say_before_exit(node.body, at, said)
        elif isinstance(node, ast.Assert) and node.msg is None:
            said = _what_differs(node.test, negated=True)
            if said:
                node.msg = ast.parse(said, mode="eval").body
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


# Exits that take a message for the status 1 they give: Python prints it to stderr (os._exit takes a number only).
_EXITS_WITH_MESSAGE = {"sys.exit", "exit", "quit"}


def _say_before_exit(body: list, at: int, said: str) -> None:
    """`sys.exit(1)` becomes `sys.exit(said)`, one statement as a person writes it, the same status; any other exit
    is kept, with a print of `said` before it."""
    call = body[at].value
    if ast.unparse(call.func) in _EXITS_WITH_MESSAGE and ast.unparse(call) == f"{ast.unparse(call.func)}(1)":
        call.args = [ast.parse(said, mode="eval").body]
    else:
        body.insert(at, ast.parse(f"print({said})").body[0])


def _exits(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and ast.unparse(stmt.value.func) in EXITS


def _prints_values(stmt: ast.stmt) -> bool:
    """A print of anything but fixed text: the script already shows what it found."""
    return any(
        isinstance(n, ast.Call)
        and ast.unparse(n.func) == "print"
        and any(not isinstance(a, ast.Constant) for a in n.args)
        for n in ast.walk(stmt)
    )


def _what_differs(test: ast.expr, negated: bool = False) -> str | None:
    """The expression text that says what a failed `test` found: for a tensor comparison the largest absolute
    difference and how many elements differ; for `a != b` both sides. An assert of plain values is left alone:
    its message is part of the failure (an AssertionError's signature), a tensor comparison's is not (a mismatch)."""
    if not negated:
        if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
            return _sides(test, ast.NotEq)
        test = test.operand
    pair = _compared(test)
    if pair is None:
        return None
    a, b = (ast.unparse(x) for x in pair)
    if any(ch in a + b for ch in "'{\\"):
        return None  # `out['y']` inside the f-string's quotes: Python 3.11 would not parse it
    return (
        f"f'max abs diff {{({a} - {b}).abs().max().item()}}, {{({a} != {b}).sum().item()}} of {{{a}.numel()}} "
        "elements differ'"
    )


def _sides(test: ast.expr, op: type) -> str | None:
    """f"a = {a}, b = {b}" for a test `a OP b`, the comparison that failed."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], op):
        a, b = ast.unparse(test.left), ast.unparse(test.comparators[0])
        return f"f'{a} = {{{a}}}, {b} = {{{b}}}'" if "'" not in a + b and "{" not in a + b else None
    return None


def _compared(test: ast.expr) -> tuple | None:
    """(a, b) of torch.allclose(a, b), a.allclose(b), torch.equal(a, b), a.equal(b); None otherwise."""
    if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr in _COMPARES):
        return None
    owner = ast.unparse(test.func.value)
    if owner == "torch" and len(test.args) >= 2:
        return test.args[0], test.args[1]
    if owner != "torch" and len(test.args) >= 1:
        return test.func.value, test.args[0]
    return None


# PyTorch's own (its .flake8's max-line-length): a repro reads as the code its maintainers write.
LINE_LENGTH = 120


def formatted(source: str) -> str:
    """The text as ruff formats it, where ruff is installed (the `lint` extra; not a runtime dependency: layout is
    a courtesy, and ast.unparse's text is already plain Python); unchanged when ruff cannot be run."""
    ruff = _ruff()
    if ruff is None:
        return source
    try:
        p = subprocess.run(
            [ruff, "format", "--isolated", "--line-length", str(LINE_LENGTH), "-"],
            input=source,
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return source
    return p.stdout if p.returncode == 0 and p.stdout.strip() else source


def _ruff() -> str | None:
    """ruff's binary: beside this interpreter's scripts (where pip put it), else the PATH's, else None."""
    beside = os.path.join(sysconfig.get_path("scripts"), "ruff")
    return beside if os.access(beside, os.X_OK) else shutil.which("ruff")


def polished(source: str) -> str:
    """explained, without the blocks that do nothing, its alike neighbouring assignments paired, then formatted
    without the brackets ast.unparse puts round a tuple that is unpacked or returned. The text as it is where
    any of it fails: polish is a courtesy, and the reduction before it took minutes."""
    try:
        return bare_tuples(formatted(paired(without_empty_blocks(explained(source)))))
    except (SyntaxError, ValueError, TypeError, AttributeError, IndexError, RecursionError):
        return source


def bare_tuples(source: str) -> str:
    """`a, b = (x, y)` and `return (x, y)` as a person writes them, `a, b = x, y` and `return x, y`, where the
    tuple is on one line (the formatter keeps brackets it did not add)."""
    lines = [line.encode() for line in source.splitlines(keepends=True)]  # ast's columns count UTF-8 bytes
    spots = []
    for n in ast.walk(ast.parse(source)):
        unpacked = isinstance(n, ast.Assign) and isinstance(n.targets[-1], ast.Tuple)
        value = n.value if unpacked or isinstance(n, ast.Return) else None  # type: ignore[attr-defined]
        if isinstance(value, ast.Tuple) and value.elts and value.lineno == value.end_lineno:
            row, start, end = value.lineno - 1, value.col_offset, value.end_col_offset or 0
            if lines[row][start : start + 1] == b"(" and lines[row][end - 1 : end] == b")":
                spots.append((row, start, end))
    for row, start, end in sorted(spots, reverse=True):  # later spots first: earlier offsets stay right
        line = lines[row]
        lines[row] = line[:start] + line[start + 1 : end - 1] + line[end:]
    return b"".join(lines).decode()
