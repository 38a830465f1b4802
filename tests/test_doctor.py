"""reprokit doctor on real scripts with planted graph breaks, recompilations, a hidden compile error, and
models where compiling does and does not pay. Each finding is checked for its kind, line and fix."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile

import pytest

from tests.opt_in import opt_in

CASES = pathlib.Path(__file__).parent / "doctor_cases"
REPO = pathlib.Path(__file__).parent.parent


def marker_line(case: str, marker: str) -> int:
    """The line of the case that carries `# MARKER` (so the test does not hard-code line numbers)."""
    for n, text in enumerate((CASES / case).read_text().splitlines(), 1):
        if f"# {marker}" in text:
            return n
    raise AssertionError(f"{marker} not in {case}")


def reprokit(cwd, *args, timeout=900):
    return subprocess.run(
        [sys.executable, "-m", "reprokit", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    work = tmp_path_factory.mktemp("doctor") / "project"
    shutil.copytree(CASES, work, ignore=shutil.ignore_patterns("__pycache__"))
    return work


_runs: dict = {}


def doctor(project, case):
    """`reprokit doctor CASE --json`, run once per case for the whole module."""
    if case not in _runs:
        p = reprokit(project, "doctor", case, "--json", "-o", str(project / "artifacts"))
        assert p.returncode == 0, p.stderr[-3000:]
        _runs[case] = json.loads(p.stdout)
    return _runs[case]


def findings(report, kind):
    return [f for f in report["findings"] if f["kind"] == kind]


@pytest.mark.slow
def test_graph_breaks_are_named_with_their_line_and_fix(project):
    r = doctor(project, "breaks.py")
    breaks = {f["line"]: f for f in findings(r, "graph_break")}
    assert set(breaks) == {marker_line("breaks.py", m) for m in ("BREAK: print", "BREAK: if", "BREAK: item")}, breaks
    assert "torch.compiler.is_compiling()" in breaks[marker_line("breaks.py", "BREAK: print")]["fix"]
    assert "torch.where" in breaks[marker_line("breaks.py", "BREAK: if")]["fix"]
    assert "torch.cond" in breaks[marker_line("breaks.py", "BREAK: if")]["fix"]
    assert ".item()" in breaks[marker_line("breaks.py", "BREAK: item")]["fix"]
    assert all(f["owner"] == "user" and f["file"].endswith("breaks.py") for f in breaks.values())
    assert r["graphs"] >= 4  # three breaks split step() into four graphs
    assert not findings(r, "recompile") and not findings(r, "fallback")


@pytest.mark.slow
def test_recompiles_name_the_guard_and_the_limit(project):
    r = doctor(project, "recompiles.py")
    scalar = [f for f in findings(r, "recompile") if "`n`" in f["title"]]
    assert len(scalar) == 1, r["findings"]
    assert scalar[0]["line"] == marker_line("recompiles.py", "RECOMPILE: scalar") + 1  # the line that uses n
    assert "torch.tensor(n)" in scalar[0]["fix"]
    limit = findings(r, "recompile_limit")
    assert len(limit) == 1, r["findings"]
    f = limit[0]
    assert f["line"] == marker_line("recompiles.py", "RECOMPILE: shape")
    assert "size mismatch at index 1" in f["detail"] and "recompile limit (8) was reached" in f["title"]
    assert "runs in eager for good" in f["title"]
    assert "dynamic=True" in f["fix"] and "mark_dynamic(x, 1)" in f["fix"]


@pytest.mark.slow
def test_suppressed_compile_error_is_a_silent_fallback_worth_an_issue(project):
    r = doctor(project, "fallback.py")
    fb = findings(r, "fallback")
    assert len(fb) == 1, r["findings"]
    assert fb[0]["line"] == marker_line("fallback.py", "FALLBACK: function")
    assert "silently ran in eager" in fb[0]["title"] and "CppCompileError" in fb[0]["title"]
    assert f"fallback.py:{marker_line('fallback.py', 'FALLBACK: suppress')}" in fb[0]["fix"]
    assert fb[0]["owner"] == "compiler"
    run_dir = r["run_dir"]
    issue = reprokit(project, "issue", run_dir)
    assert issue.returncode == 0, issue.stderr
    assert issue.stdout.startswith("torch.compile: `block` silently ran in eager")
    assert "### Versions" in issue.stdout and "inject_relu_bug_TESTING_ONLY" in issue.stdout
    packed = reprokit(project, "pack", run_dir)
    assert packed.returncode == 0, packed.stderr
    tarball = packed.stdout.split("wrote ", 1)[1].strip()
    with tarfile.open(tarball) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames()}
    assert {
        "DOCTOR.md",
        "doctor.json",
        "ISSUE.md",
        "MANIFEST.json",
        "source/fallback.py",
        "logs/compiled/observed.json",
        "env/collect_env.txt",
    } <= names


@pytest.mark.slow
def test_user_code_findings_write_no_issue(project):
    r = doctor(project, "breaks.py")
    p = reprokit(project, "issue", r["run_dir"])
    assert p.returncode == 3 and "script's to fix" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.slow
@pytest.mark.timing
def test_speed_verdict_when_compile_helps(project):
    r = doctor(project, "compile_helps.py")
    s = r["speed"]
    assert s["speedup"] > 1.05 and "faster than eager" in s["verdict"], s
    assert s["steps_timed"] >= 5 and s["compile_seconds"] > 0
    assert not findings(r, "speed") and not findings(r, "graph_break")


# Not `timing`: compiled is about 5x slower than eager here (0.19x alone, 0.20x with both cores busy), far from
# the 1.05x line; run beside another worker it still says so.
@pytest.mark.slow
def test_speed_verdict_when_compile_does_not_help(project):
    r = doctor(project, "compile_does_not_help.py")
    s = r["speed"]
    assert s["speedup"] < 1.05 and "not worth it here" in s["verdict"], s
    speed = findings(r, "speed")
    assert len(speed) == 1 and speed[0]["line"] == marker_line("compile_does_not_help.py", "SITE")
    # No break, no recompile: the slowdown is torch.compile's own, so it is worth an issue.
    assert speed[0]["owner"] == "compiler"


@pytest.mark.slow
def test_table_output_shows_line_and_fix(project):
    p = reprokit(project, "doctor", "breaks.py", "-o", str(project / "artifacts"))
    assert p.returncode == 0, p.stderr[-2000:]
    assert f"breaks.py:{marker_line('breaks.py', 'BREAK: print')}" in p.stdout
    assert "fix: remove the print" in p.stdout and "DOCTOR.md" in p.stdout


@pytest.mark.parametrize(
    "make,code,words",
    [
        (lambda d: "missing.py", 2, "no such script"),
        (lambda d: (d / "bad.py").write_text("def f(:\n") and "bad.py", 2, "syntax error"),
        (
            lambda d: (d / "plain.py").write_text("print('no compile here')\n") and "plain.py",
            2,
            "never calls torch.compile",
        ),
        (
            lambda d: (d / "broken.py").write_text("raise SystemExit(4)\n") and "broken.py",
            3,
            "fails without torch.compile",
        ),
    ],
)
def test_bad_input_and_nothing_to_explain(tmp_path, make, code, words):
    name = make(tmp_path)
    p = reprokit(tmp_path, "doctor", name, "-o", str(tmp_path / "artifacts"))
    assert p.returncode == code, (p.returncode, p.stderr)
    assert words in p.stderr and "Traceback" not in p.stderr


# Not `timing`: the same tiny op, 0.2x however busy the cores are.
@pytest.mark.slow
@opt_in(
    "195 s in the fresh-clone CI at 46f7fd4; stop 59 landed at 44:46): --kind slow through the real compiler is "
    "test_bisect_kind_slow_with_nothing_slow_exits_3, and the slow stage's naming, flips and compile modes are "
    "tests/unit/bisect/test_findings' test_a_slow_stage_is_asked_its_config_flips_and_every_compile_mode"
)
def test_bisect_kind_slow_names_the_stage_that_is_slow(project):
    p = reprokit(
        project,
        "bisect",
        "compile_does_not_help.py",
        "--kind",
        "slow",
        "--json",
        "--no-pack",
        "-o",
        str(project / "artifacts"),
    )
    assert p.returncode == 0, p.stderr[-3000:]
    v = json.loads(p.stdout)
    # One tiny op: Dynamo's own per-call overhead already makes it slower, before any backend.
    assert v["kind"] == "slow" and v["failing_stage"] == "eager", v
    assert "Dynamo alone" in v["message"]
    assert "slower than eager" in v["speed"]["original"]
    tried = {(r["mode"], r["dynamic"]) for r in v["modes"]}
    assert {("reduce-overhead", None), ("max-autotune", None), (None, True), (None, False)} <= tried
    assert v["repro"] is None  # a slowdown is not minified


# Not `timing`: the memory-bound chain is 12x faster compiled alone and 1.5x with both cores busy; slow would be
# below 0.91x.
@pytest.mark.slow
def test_bisect_kind_slow_with_nothing_slow_exits_3(project):
    p = reprokit(project, "bisect", "compile_helps.py", "--kind", "slow", "--no-pack", "-o", str(project / "artifacts"))
    assert p.returncode == 3, p.stderr[-2000:]
    assert "not slower than eager" in p.stderr and "Traceback" not in p.stderr


def test_a_step_far_faster_eager_is_a_slowdown_not_a_division_by_zero():
    """Microseconds an eager step against milliseconds compiled: the ratio rounds to 0.000 at three places, and the
    verdict still says how much slower (CI at 647d4da raised ZeroDivisionError on breaks.py)."""
    from reprokit.doctor.speed import measure_speed

    def run(step, compiled):
        return {"callables": [{"seconds": [step] * 6, "compiled": [compiled] + [False] * 5}], "metrics": []}

    s = measure_speed(run(2e-6, False), run(0.01, True))
    assert s.speedup == 0.0002 and s.verdict == "compiled is 5000.00x slower than eager: compiling is not worth it here"
    assert measure_speed(run(0.0, False), run(0.01, True)).verdict == "not measured: a step took no measurable time"
