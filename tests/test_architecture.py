"""The house rules, checked over the import graph of reprokit/ (every module parsed with ast, imports inside
functions included, relative imports resolved): the layer map, a search package that is generic, private torch
names only in compat.py, and no import circles. Each test lists every violation it finds."""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "reprokit"

# The layer map (lowest first): a module may import only from its own layer or lower ones. The longest
# matching prefix names a module's layer; "reprokit" alone is the root package (its version string).
LAYERS = {
    "reprokit": 0,
    "reprokit.errors": 0,
    "reprokit.compat": 0,
    "reprokit.settings": 0,
    "reprokit.torch_config": 0,
    "reprokit.data": 0,
    "reprokit.search": 1,
    "reprokit.fx": 2,
    "reprokit.models": 2,
    "reprokit.child": 3,
    "reprokit.child.tensor_numbers": 3,
    "reprokit.capture": 3,
    "reprokit.trial": 4,
    "reprokit.report": 5,
    "reprokit.report.issue_notes": 5,
    "reprokit.bisect": 6,
    "reprokit.minify": 6,
    "reprokit.source": 6,
    "reprokit.doctor": 6,
    "reprokit.doctor.speed": 6,
    "reprokit.versions": 6,
    "reprokit.export": 6,
    "reprokit.app": 7,
    "reprokit.cli": 8,
    "reprokit.cli_render": 8,
    "reprokit.cli_summary": 8,
    "reprokit.cli_tally": 8,
    "reprokit.cli_live": 8,
    "reprokit.cli_signals": 8,
    "reprokit.cli_bisect": 8,
    "reprokit.cli_capture": 8,
    "reprokit.cli_pack": 8,
    "reprokit.cli_reports": 8,
    "reprokit.cli_rerun": 8,
    "reprokit.cli_errors": 8,
    "reprokit.cli_executor": 8,
    "reprokit.cli_output": 8,
    "reprokit.__main__": 8,
}
COMPAT = "reprokit.compat"  # the only module that may name torch._anything
SEARCH = "reprokit.search"  # generic: the standard library and itself only


@dataclass(frozen=True)
class Import:
    importer: str  # module name
    where: str  # path:line, for messages
    target: str  # absolute dotted name as imported ("torch._dynamo", "reprokit.search.ddmin")
    relative: bool


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict:
    """module name -> (path, parsed tree) of every module under reprokit/."""
    return {module_name(p): (p, ast.parse(p.read_text(), str(p))) for p in sorted(ROOT.rglob("*.py"))}


MODULES = modules()


def where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(ROOT.parent)}:{node.lineno}"


def imports_of(name: str) -> list:
    """Every import in the module, at any depth, as absolute names; `from p import x` gives p and, when x is a
    module, p.x."""
    path, tree = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [Import(name, where(path, node), a.name, False) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base_name = ".".join(base + ([node.module] if node.module else []))
            else:
                base_name = node.module or ""
            out.append(Import(name, where(path, node), base_name, bool(node.level)))
            out += [
                Import(name, where(path, node), f"{base_name}.{a.name}", bool(node.level))
                for a in node.names
                if f"{base_name}.{a.name}" in MODULES or base_name == "torch" and a.name.startswith("_")
            ]
    return out


ALL_IMPORTS = [imp for name in MODULES for imp in imports_of(name)]


def reprokit_target(imp: Import):
    """The reprokit module an import runs, or None for anything else (an ancestor package of the importer, already
    being imported, is not an edge)."""
    if imp.target not in MODULES:
        return None
    if imp.importer == imp.target or imp.importer.startswith(imp.target + "."):
        return None
    return imp.target


def layer_of(name: str):
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        key = ".".join(parts[:i])
        if key in LAYERS and (key != "reprokit" or name == "reprokit"):
            return key, LAYERS[key]
    return None


def report(title: str, violations: list) -> str:
    return f"{len(violations)} {title}:\n  " + "\n  ".join(violations)


# -- the rules ---------------------------------------------------------------------------------------------------


def test_every_module_has_a_layer():
    unplaced = [name for name in MODULES if layer_of(name) is None]
    assert not unplaced, report("modules the layer map does not place (add their package to LAYERS)", unplaced)


def test_search_is_generic_standard_library_and_itself_only():
    violations = []
    for imp in ALL_IMPORTS:
        if not (imp.importer == SEARCH or imp.importer.startswith(SEARCH + ".")):
            continue
        top = imp.target.split(".")[0]
        own = imp.target == SEARCH or imp.target.startswith(SEARCH + ".")
        if own and not imp.relative:
            violations.append(f"{imp.where} imports itself as {imp.target} (use a relative import)")
        elif not own and top not in sys.stdlib_module_names:
            violations.append(f"{imp.where} imports {imp.target}")
    assert not violations, report(
        "imports in reprokit/search of anything but the standard library and itself", violations
    )


def private(name: str) -> bool:
    """torch._anything (dunders such as torch.__version__ are public)."""
    parts = name.split(".")
    return len(parts) > 1 and parts[0] == "torch" and parts[1].startswith("_") and not parts[1].startswith("__")


def torch_aliases(tree: ast.AST) -> set:
    """Names the module binds to torch itself: `import torch`, `import torch as th`, `import torch.fx`."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "torch" or a.name.startswith("torch.") and a.asname is None:
                    names.add(a.asname or "torch")
    return names


def private_torch_uses(name: str) -> list:
    path, tree = MODULES[name]
    aliases = torch_aliases(tree) | {"torch"}
    found = [f"{imp.where} import {imp.target}" for imp in imports_of(name) if private(imp.target)]
    for node in ast.walk(tree):
        # The innermost link of a chain (torch._dynamo of torch._dynamo.config.x) names it once per chain.
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and private(f"torch.{node.attr}")
        ):
            found.append(f"{where(path, node)} torch.{node.attr}")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr")
            and len(node.args) >= 2
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in aliases
            and isinstance(node.args[1], ast.Constant)
            and private(f"torch.{node.args[1].value}")
        ):
            found.append(f"{where(path, node)} {node.func.id}(torch, {node.args[1].value!r})")
    return found


def test_private_torch_names_only_in_compat():
    violations = [v for name in MODULES if name != COMPAT for v in private_torch_uses(name)]
    assert not violations, report("private torch names outside reprokit/compat.py", violations)


def test_no_lower_layer_imports_a_higher_one():
    violations = []
    for imp in ALL_IMPORTS:
        target = reprokit_target(imp)
        if target is None:
            continue
        (mine, low), (theirs, high) = layer_of(imp.importer), layer_of(target)
        if high > low:
            violations.append(
                f"{imp.where} {imp.importer} (layer {low}, {mine}) imports {target} (layer {high}, {theirs})"
            )
    assert not violations, report("imports of a higher layer", sorted(set(violations)))


def import_graph() -> dict:
    graph = {name: set() for name in MODULES}
    for imp in ALL_IMPORTS:
        target = reprokit_target(imp)
        if target is not None and target != imp.importer:
            graph[imp.importer].add(target)
    return graph


def circles(graph: dict) -> list:
    """Every strongly connected group of two or more modules (Tarjan), each as a sorted list."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_only_the_executor_seam_knows_the_cluster():
    """SLURM stays behind trial.executors (issue #29): submitit and trial.slurm* are imported in trial/ alone, the
    app reaching the cluster through trial.executors, so the search never learns where a trial ran."""
    cluster = ("submitit", "reprokit.trial.slurm")
    wrong = sorted(
        {
            f"{imp.where} {imp.importer} imports {imp.target}"
            for imp in ALL_IMPORTS
            if imp.target.startswith(cluster) and not imp.importer.startswith("reprokit.trial.")
        }
    )
    assert not wrong, report("the cluster named outside trial/", wrong)


def names_a_runner(node: ast.AST) -> bool:
    """`runner`, `s.runner`, `self._runner`: an expression whose last name is a runner's."""
    last = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
    return last.lstrip("_") == "runner"


def runner_writes(tree: ast.AST) -> list:
    """Line numbers where a runner's attribute is assigned (`runner.timeout = 5`, `s.runner.env |= {...}`) or set
    through setattr."""
    found = []
    for node in ast.walk(tree):
        targets: list = []
        if isinstance(node, ast.Assign):
            targets = [t for target in node.targets for t in ast.walk(target)]
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute) and node.args:
            name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            if name in ("setattr", "__setattr__") and names_a_runner(node.args[0]):
                found.append(node.lineno)
        found += [node.lineno for t in targets if isinstance(t, ast.Attribute) and names_a_runner(t.value)]
    return sorted(found)


def test_no_runner_attribute_is_assigned_outside_trial():
    """A Runner asks its trials under a frozen TrialPolicy (issue #49): another limit, switch, judge, deadline or
    number of tries is a view (`runner.with_policy(...)`), never an attribute set from outside trial/."""
    wrong = [
        f"{path.relative_to(ROOT.parent)}:{line}"
        for name, (path, tree) in MODULES.items()
        if not in_package(name, "reprokit.trial")
        for line in runner_writes(tree)
    ]
    assert not wrong, report("Runner attributes assigned outside trial/", wrong)


def test_runner_write_detection():
    tree = ast.parse(
        "runner.env = {}\ns.runner.timeout = 1\nself._runner.deadline += 1\nsetattr(runner, 'judge', j)\n"
        "a, s.runner.x = 1, 2\ns.runner = runner.with_policy(timeout=1)\nrunner = r\nother.timeout = 3\n"
    )
    assert runner_writes(tree) == [1, 2, 3, 4, 5]


def test_no_import_circles():
    graph = import_graph()
    found = []
    for group in circles(graph):
        members = set(group)
        edges = [f"{a} -> {b}" for a in group for b in sorted(graph[a] & members)]
        found.append(" | ".join(edges))
    assert not found, report("import circles (imports inside functions count)", found)


# -- the phases: what passes between bisect, minify and the report ---------------------------------------------

VERDICT_WRITER = "reprokit.app.verdict_file"  # the one module that writes verdict.json
VERDICT = "verdict.json"


def in_package(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def defined_verdict_constants(tree: ast.AST) -> set:
    """Module-level names the module binds to "verdict.json" (VERDICT_FILE = "verdict.json")."""
    return {
        t.id
        for node in getattr(tree, "body", [])
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value == VERDICT
        for t in node.targets
        if isinstance(t, ast.Name)
    }


def verdict_constants(tree: ast.AST) -> set:
    """Names in the module that stand for "verdict.json": its own constants, and those it imports from the module
    that defines one (from reprokit.data.rundir import VERDICT_FILE)."""
    imported = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module in MODULES
        for alias in node.names
        if alias.name in defined_verdict_constants(MODULES[node.module][1])
    }
    return defined_verdict_constants(tree) | imported


def names_verdict(node: ast.AST, constants: set) -> bool:
    return (
        isinstance(node, ast.Constant) and node.value == VERDICT or isinstance(node, ast.Name) and node.id in constants
    )


def verdict_writes(name: str) -> list:
    """Calls in the module that write verdict.json: a write*(...) or open(..., "w") naming the file, directly or
    through a module constant."""
    path, tree = MODULES[name]
    constants = verdict_constants(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not any(
            names_verdict(a, constants) for a in ast.walk(node) if a is not node.func
        ):
            continue
        func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        mode = next((a.value for a in node.args[1:2] if isinstance(a, ast.Constant)), "r")
        if func.startswith("write") or func in ("open", "replace", "rename") and any(c in str(mode) for c in "wax"):
            found.append(f"{where(path, node)} {func}(...)")
    return found


def test_verdict_json_is_written_by_one_module():
    writers = {name: verdict_writes(name) for name in MODULES}
    others = [w for name, found in writers.items() if name != VERDICT_WRITER for w in found]
    assert not others, report(f"writes of verdict.json outside {VERDICT_WRITER}", others)
    assert writers[VERDICT_WRITER], f"{VERDICT_WRITER} no longer writes verdict.json: the check above sees nothing"


def test_the_phases_below_the_app_never_read_verdict_json():
    """bisect, minify, source and export hand on values (Isolation, Repro, Evidence): none reads the file back."""
    found = []
    for name, (path, tree) in MODULES.items():
        if not any(in_package(name, f"reprokit.{p}") for p in ("bisect", "minify", "source", "export")):
            continue
        constants = verdict_constants(tree)
        found += [where(path, node) for node in ast.walk(tree) if names_verdict(node, constants)]
    assert not found, report("mentions of verdict.json in the phases below the app", found)


# (importer package, imported package) pairs that must not exist: the phases meet only through their results.
FORBIDDEN = [
    ("reprokit.minify", "reprokit.bisect"),
    ("reprokit.report", "reprokit.bisect"),
    ("reprokit.source", "reprokit.bisect"),
    ("reprokit.bisect", "reprokit.minify"),
    ("reprokit.bisect", "reprokit.report"),
    ("reprokit.bisect", "reprokit.source"),
    ("reprokit.report", "reprokit.minify"),
    # the deployment path builds on bisect, never the other way (the app hands its ladder to the Bisector)
    ("reprokit.bisect", "reprokit.export"),
]


def test_bisect_minify_and_report_meet_only_through_phase_results():
    violations = []
    for imp in ALL_IMPORTS:
        target = reprokit_target(imp)
        if target is None:
            continue
        violations += [
            f"{imp.where} {imp.importer} imports {target}"
            for low, high in FORBIDDEN
            if in_package(imp.importer, low) and in_package(target, high)
        ]
    assert not violations, report("imports across the phase seams", sorted(set(violations)))


# The domain hands on Isolation, Repro and Evidence and never sees the Verdict the app builds from them (issue 49,
# item 1): each step returns a frozen finding or a frozen Isolation made with dataclasses.replace.
VERDICT_FREE = ("bisect", "minify", "source", "export", "trial")
VERDICT_MODULE = "reprokit.data.verdict"


def imports_verdict(name: str) -> list:
    """Where the module imports the name Verdict or its module (reprokit.data.verdict, at any depth), or reads it as
    an attribute (verdict.Verdict)."""
    path, tree = MODULES[name]
    return [
        where(path, node)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and any(a.name == "Verdict" or f"{node.module}.{a.name}" == VERDICT_MODULE for a in node.names)
        or isinstance(node, ast.Import)
        and any(a.name == VERDICT_MODULE for a in node.names)
        or isinstance(node, ast.Attribute)
        and node.attr == "Verdict"
    ]


def test_the_domain_never_imports_the_verdict():
    domain = [name for name in MODULES if any(in_package(name, f"reprokit.{p}") for p in VERDICT_FREE)]
    assert "reprokit.bisect.bisector" in domain and "reprokit.export.ladder" in domain  # the walk found them
    found = [f"{at} {name}" for name in domain for at in imports_verdict(name)]
    assert not found, report("the domain imports Verdict", found)


# The Verdict is frozen, and built or replaced in one place: app/verdict_file (isolated, finished, with_repro,
# with_run); data/verdict holds its codec with verdict.json. Elsewhere it is only read.
VERDICT_BUILDERS = ("reprokit.app.verdict_file", "reprokit.data.verdict")


def verdict_names(tree: ast.AST) -> set:
    """The names a module gives a Verdict: its parameters annotated Verdict, and any name that says verdict."""
    params = {
        node.arg
        for node in ast.walk(tree)
        if isinstance(node, ast.arg) and node.annotation is not None and "Verdict" in ast.unparse(node.annotation)
    }
    return params | {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and "verdict" in n.id.lower()}


def builds_or_replaces_verdict(name: str) -> list:
    """Where the module calls Verdict(...), or dataclasses.replace of a name it gives a Verdict."""
    path, tree = MODULES[name]
    names = verdict_names(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = getattr(func, "id", None) or getattr(func, "attr", None)
        dataclass_replace = called == "replace" and (
            isinstance(func, ast.Name) or getattr(func.value, "id", None) == "dataclasses"
        )
        first = node.args[0] if node.args else None
        if called == "Verdict" or dataclass_replace and isinstance(first, ast.Name) and first.id in names:
            found.append(where(path, node))
    return found


def test_only_verdict_file_builds_or_replaces_a_verdict():
    assert "reprokit.app.verdict_file" in MODULES and builds_or_replaces_verdict("reprokit.app.verdict_file")
    found = [
        f"{at} {name}" for name in MODULES if name not in VERDICT_BUILDERS for at in builds_or_replaces_verdict(name)
    ]
    assert not found, report("a Verdict built or replaced outside app/verdict_file", found)


# A file written in a run is not read back in it (issue 49): run.json is the app's record of what it handed down
# (data/run_facts.RunFacts), and minify.json minify's record of its smallest graph so far, for a later command
# (`minify --resume`, a resumed bisect), which reads it once at its top in the app.
WRITTEN_IN_THE_RUN = ("run.json", "minify.json")
READ_BACK_FREE = ("bisect", "minify", "source", "trial", "export")
READS = ("read_json", "exists", "isfile", "open", "load", "loads", "read_text")


def reads_back(name: str) -> list:
    """Where the module reads, or looks for, run.json or minify.json: a read call naming the file in its arguments."""
    path, tree = MODULES[name]
    return [
        f"{where(path, node)} {ast.unparse(node)[:80]}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (getattr(node.func, "id", None) or getattr(node.func, "attr", None)) in READS
        and any(
            isinstance(c, ast.Constant) and c.value in WRITTEN_IN_THE_RUN
            for arg in [*node.args, *(k.value for k in node.keywords)]
            for c in ast.walk(arg)
        )
    ]


def test_the_domain_never_reads_back_what_the_run_wrote():
    """Below the app, run.json and minify.json are values handed down (RunFacts), never files read back."""
    assert reads_back("reprokit.app.minify") and reads_back("reprokit.app.bisect")  # the checker sees the app's reads
    domain = [name for name in MODULES if any(in_package(name, f"reprokit.{p}") for p in READ_BACK_FREE)]
    assert "reprokit.minify.minifier" in domain and "reprokit.export.rerun" in domain  # the walk found them
    found = [at for name in domain for at in reads_back(name)]
    assert not found, report("run.json or minify.json read back below the app", found)


RUNNER_BUILDER = "reprokit.app.runners"  # the one module that builds a Runner (with its progress events)


def test_one_module_builds_runners():
    """Every Runner of every command comes from app/runners (open_runner); trial/ is the Runner's own."""
    found = [
        f"{where(path, node)} {name}"
        for name, (path, tree) in MODULES.items()
        if name != RUNNER_BUILDER and not in_package(name, "reprokit.trial")
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (getattr(node.func, "id", None) == "Runner" or getattr(node.func, "attr", None) == "Runner")
    ]
    assert not found, report(f"Runners built outside {RUNNER_BUILDER}", found)


def signature_of(module: str, qualname: str) -> tuple:
    """(parameter annotations by name, return annotation) of a function or method, as source text."""
    path, tree = MODULES[module]
    owner, _, fname = qualname.rpartition(".")
    scope = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == owner) if owner else tree
    fn = next(n for n in scope.body if isinstance(n, ast.FunctionDef) and n.name == fname)
    params = {a.arg: ast.unparse(a.annotation) for a in fn.args.args + fn.args.kwonlyargs if a.annotation}
    return params, ast.unparse(fn.returns) if fn.returns else None


def test_each_phase_takes_and_returns_its_result():
    """The bisector returns an Isolation; minify (graph and export paths) takes one and returns a Repro; what is
    asked after the repro takes the Isolation and returns Evidence."""
    wanted = [
        ("reprokit.bisect.bisector", "Bisector.isolate", None, "Isolation"),
        ("reprokit.bisect.bisector", "Bisector.after_repro", "Isolation", "Evidence"),
        ("reprokit.minify.minifier", "minify_isolation", "Isolation", "Repro"),
        ("reprokit.export.rerun", "minify_export_run", "Isolation", "Repro"),
        ("reprokit.app.minify", "make_repro", "Isolation", "Repro"),
    ]
    wrong = []
    for module, qualname, takes, returns in wanted:
        params, ret = signature_of(module, qualname)
        if takes is not None and takes not in params.values() or ret != returns:
            wrong.append(f"{module}.{qualname}({params}) -> {ret}: wants an {takes} argument, returns {returns}")
    assert not wrong, report("phase functions that do not pass their results", wrong)


def test_phase_results_are_frozen():
    """Each phase's result is a frozen dataclass: a later phase cannot change what an earlier one found."""
    path, tree = MODULES["reprokit.data.phases"]
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    assert {"Isolation", "Repro", "Evidence"} <= set(classes)
    for name in ("Isolation", "Repro", "Evidence"):
        decorators = [ast.unparse(d) for d in classes[name].decorator_list]
        assert "dataclass(frozen=True)" in decorators, (name, decorators)


# -- the checker checks itself ----------------------------------------------------------------------------------


def test_relative_imports_resolve_to_absolute_names():
    assert {imp.target for imp in imports_of("reprokit.search.fixpoint")} >= {"reprokit.search.problem"}
    assert {imp.target for imp in imports_of("reprokit.search")} >= {
        "reprokit.search.bisect",
        "reprokit.search.problem",
    }


def test_private_name_detection():
    tree = ast.parse(
        "import torch as th\nimport torch._dynamo\nfrom torch import _ops\nx = th._ops.ops.aten\n"
        "y = torch._dynamo.config.z\nv = torch.__version__\nz = getattr(torch, '_C')\n"
    )
    assert torch_aliases(tree) == {"th", "torch"}
    MODULES["fake"] = (ROOT / "fake.py", tree)
    try:
        found = [f.split(" ", 1)[1] for f in private_torch_uses("fake")]
    finally:
        del MODULES["fake"]
    assert sorted(found) == sorted(
        ["import torch._dynamo", "import torch._ops", "torch._ops", "torch._dynamo", "getattr(torch, '_C')"]
    ), found


def test_verdict_write_detection():
    tree = ast.parse(
        'VERDICT_FILE = "verdict.json"\nrun.write_json("verdict.json", {})\nrun.write_json(VERDICT_FILE, v)\n'
        'open(os.path.join(d, "verdict.json"), "w")\nrun.read_json("verdict.json")\n'
        'plan.texts["verdict.json"] = text\n'
    )
    MODULES["fake"] = (ROOT / "fake.py", tree)
    try:
        found = [f.split(" ", 1)[1] for f in verdict_writes("fake")]
    finally:
        del MODULES["fake"]
    assert found == ["write_json(...)", "write_json(...)", "open(...)"], found


def test_circle_finder():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
