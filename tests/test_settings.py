"""One table of settings: every environment variable reprokit reads is read through reprokit/settings.py, each one
there is read by something, and docs/settings.md shows exactly settings.py's table. The scans parse every module
of reprokit/ with ast, as tests/test_architecture.py does; each test lists every violation it finds."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from reprokit import settings

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "reprokit"
SETTINGS_PY = PACKAGE / "settings.py"
DOCS = ROOT / "docs" / "settings.md"
BEGIN, END = "<!-- settings table:", "<!-- end of settings table -->"
# The methods of a Setting that read the environment.
READERS = {"get", "required", "is_set", "on", "not_off"}
# Read by the repro.py reprokit writes, not by reprokit: written from its Setting's name.
READ_BY_REPRO = {settings.REPRO_CACHE_RUN}


def parsed() -> dict:
    """path -> parsed tree, for every module under reprokit/."""
    return {p: ast.parse(p.read_text(), str(p)) for p in sorted(PACKAGE.rglob("*.py"))}


MODULES = parsed()


def at(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"


def is_environ(node: ast.AST) -> bool:
    """os.environ, or environ imported from os."""
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
        isinstance(node, ast.Name) and node.id == "environ"
    )


def is_env_mapping(node: ast.AST) -> bool:
    """A mapping named as an environment (env, job_env, spec.env): an environment read by name from it counts."""
    name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
    return name == "env" or name.endswith("_env")


def literal_name(node: ast.AST) -> str | None:
    """The variable name a constant spells ("RANK", "REPROKIT_WARM"), None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"[A-Z][A-Z0-9_]+", node.value):
        return node.value
    return None


def docstrings(tree: ast.AST) -> set:
    """ids of the string constants that are docstrings (they may name a variable: they read nothing)."""
    out = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                out.add(id(body[0].value))
    return out


def read_at(path: Path, node: ast.AST, name: ast.AST | None) -> str:
    """One direct read, and whether docs/settings.md lists the variable it names."""
    known = {s.name for s in settings.SETTINGS}
    spelled = literal_name(name) if name is not None else None
    listed = "" if spelled is None else " (listed)" if spelled in known else " (not in the table)"
    return f"{at(path, node)}: {ast.unparse(node)}{listed}"


def direct_reads(path: Path, tree: ast.AST) -> list:
    """Every place the module reads the environment itself instead of through a Setting."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner, method = node.func.value, node.func.attr
            if method == "getenv" or (method == "get" and is_environ(owner)):
                found.append(read_at(path, node, node.args[0] if node.args else None))
            elif method == "get" and is_env_mapping(owner) and node.args and literal_name(node.args[0]):
                found.append(read_at(path, node, node.args[0]))
        elif isinstance(node, ast.Subscript) and is_environ(node.value) and isinstance(node.ctx, ast.Load):
            found.append(read_at(path, node, node.slice))
        elif isinstance(node, ast.Compare) and any(is_environ(c) for c in node.comparators):
            found.append(read_at(path, node, node.left))
        elif isinstance(node, ast.Compare) and any(is_env_mapping(c) for c in node.comparators):
            if literal_name(node.left):  # "REPROKIT_X" in env: a read of a trial's or the job's environment
                found.append(read_at(path, node, node.left))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Setting":
            found.append(f"{at(path, node)}: a Setting made outside settings.py")
    return found


def test_every_read_goes_through_settings():
    """No module but settings.py reads an environment variable itself: a new read must add a Setting, and so a row
    of docs/settings.md."""
    bad = [r for path, tree in MODULES.items() if path != SETTINGS_PY for r in direct_reads(path, tree)]
    assert not bad, "read these through reprokit/settings.py (a Setting, then its row in docs/settings.md):\n" + (
        "\n".join(bad)
    )


def test_no_module_but_settings_names_a_reprokit_variable():
    """The architecture rule: a REPROKIT_ name is spelled in settings.py alone; others use the Setting's name, so
    what reprokit writes into a trial's environment and what the trial reads are one definition."""
    bad = []
    for path, tree in MODULES.items():
        if path == SETTINGS_PY:
            continue
        skip = docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
                bad += [f"{at(path, node)}: {n}" for n in re.findall(r"\bREPROKIT_[A-Z_]+", node.value)]
    assert not bad, "use the Setting from reprokit/settings.py instead:\n" + "\n".join(bad)


def setting_constants() -> dict:
    """The module-level name of each Setting in settings.py ("WARM" -> REPROKIT_WARM's Setting)."""
    return {k: v for k, v in vars(settings).items() if isinstance(v, settings.Setting)}


def reads_of_constants() -> set:
    """The Setting constants some module other than settings.py reads (settings.WARM.not_off(), RANK.get())."""
    read = set()
    for path, tree in MODULES.items():
        for node in ast.walk(tree):
            if path != SETTINGS_PY and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                owner = node.func.value
                if node.func.attr in READERS and isinstance(owner, (ast.Attribute, ast.Name)):
                    read.add(owner.attr if isinstance(owner, ast.Attribute) else owner.id)
    return read


def test_every_setting_is_read():
    """The table lists no variable that nothing reads."""
    read = reads_of_constants()
    unread = [f"{k} ({s.name})" for k, s in setting_constants().items() if k not in read and s not in READ_BY_REPRO]
    assert not unread, "listed in reprokit/settings.py but read nowhere: " + ", ".join(unread)
    template = (PACKAGE / "minify" / "warm_repro.py").read_text()
    for s in READ_BY_REPRO:  # the repro's own read of it is in its template, through the Setting's name
        assert "_os.environ.get(" in template and f"settings.{setting_name(s)}.name" in template


def setting_name(s: settings.Setting) -> str:
    return next(k for k, v in setting_constants().items() if v is s)


def test_settings_are_unique_and_complete():
    """Each variable once, each row filled in, and SETTINGS holds every Setting the module defines."""
    names = [s.name for s in settings.SETTINGS]
    assert len(names) == len(set(names)), names
    assert set(settings.SETTINGS) == set(setting_constants().values())
    assert all(s.values and s.default and s.set_by and s.meaning for s in settings.SETTINGS)
    assert all("|" not in "".join(s) for s in settings.SETTINGS)  # a cell with a pipe breaks the table


def test_docs_table_is_the_settings_table():
    """docs/settings.md shows settings.py's table, row for row."""
    text = DOCS.read_text()
    start = text.index("\n", text.index(BEGIN)) + 1
    shown = text[start : text.index(END)]
    assert shown == settings.table(), "docs/settings.md differs from reprokit/settings.py: paste the output of " + (
        "`python -m reprokit.settings` between its markers"
    )


def test_docs_name_no_variable_the_table_lacks():
    """A REPROKIT_ variable the docs or README mention is in the table, or one of the test suite's own switches."""
    suite = {
        "REPROKIT_ALL_REAL_BUGS",
        "REPROKIT_ALL_SLOW_TESTS",
        "REPROKIT_REQUIRE_SLURM",
        "REPROKIT_INSTALL_SLURM",
        "REPROKIT_GPU_SUMMARY",
    }
    known = {s.name for s in settings.SETTINGS} | suite
    pages = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted((ROOT / "docs").glob("*.md"))]
    bad = [
        f"{p.name}: {n}" for p in pages for n in re.findall(r"\bREPROKIT_[A-Z_]*[A-Z]", p.read_text()) if n not in known
    ]
    assert not bad, bad


def test_module_prints_the_table():
    """`python -m reprokit.settings` prints the table the docs show."""
    out = subprocess.run([sys.executable, "-m", "reprokit.settings"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout == settings.table()
