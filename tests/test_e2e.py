"""End to end: `reprokit bisect --json` on real failing scripts, with the real compiler on CPU.

Each case in tests/cases/ states its expected verdict on its first line (# EXPECT = {...}).
"""

import ast
import json
import os
import pathlib
import subprocess
import sys

import pytest
import torch
from issue_checks import check_compile_errors_replayed, check_issue, shutil_which

from tests.opt_in import opt_in

CASES = pathlib.Path(__file__).parent / "cases"
TORCH = torch.__version__.split("+")[0]
NEWEST = tuple(int(x) for x in TORCH.split(".")[:2]) >= (2, 15)  # inductor's numerics modes (TORCHINDUCTOR_NUMERICS)
REPO = pathlib.Path(__file__).parent.parent


def expect(name: str) -> dict:
    first = (CASES / name).read_text().splitlines()[0]
    assert first.startswith("# EXPECT = ")
    return ast.literal_eval(first[len("# EXPECT = ") :])


def bisect(workdir, case, *args, env=None, timeout=1500):
    cmd = [sys.executable, "-m", "reprokit", "bisect", case, "--json", "-o", str(workdir / "artifacts"), *args]
    p = subprocess.run(
        cmd,
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {}), "PYTHONPATH": str(REPO)},
    )
    data = json.loads(p.stdout) if p.stdout.strip() else None
    return p, data


def run_repro(path: str):
    return subprocess.run(
        [sys.executable, path], capture_output=True, text=True, timeout=600, cwd=os.path.dirname(path)
    )


def check_verdict(data, exp):
    assert data["failing_stage"] == exp["failing_stage"], data
    assert data["kind"] in exp["kinds"], data
    for key in ("graph", "graph_count"):
        if key in exp:
            assert data[key] == exp[key], data
    if "exc_type" in exp:
        assert data["signature"]["exc_type"] == exp["exc_type"]


def code_lines(node) -> set:
    return set(range(node.lineno, node.end_lineno + 1))


def repro_parts(text: str) -> dict:
    """Code lines of repro.py by part: the graph, its inputs, the script's own hooks and config, the harness."""
    tree = ast.parse(text)
    code = {i for i, line in enumerate(text.splitlines(), 1) if line.strip() and not line.lstrip().startswith("#")}
    forward = next(
        (
            f
            for c in tree.body
            if isinstance(c, ast.ClassDef) and c.name == "Repro"
            for f in c.body
            if isinstance(f, ast.FunctionDef) and f.name == "forward"
        ),
        None,
    )
    names = {a.arg for a in forward.args.args[1:]} if forward else set()
    parts = {"graph": set(), "inputs": set(), "script": set()}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.ClassDef) and node.name == "Repro":
            parts["graph"] |= code_lines(node)
        elif any(isinstance(t, ast.Name) and t.id in names for t in targets) or (
            isinstance(node, ast.Expr) and "manual_seed" in ast.unparse(node)
        ):
            parts["inputs"] |= code_lines(node)
        elif (isinstance(node, ast.FunctionDef) and node.name not in ("error", "results")) or any(
            isinstance(t, ast.Attribute) for t in targets
        ):
            parts["script"] |= code_lines(node)  # a hook or config the script set: the bug's, not the harness's
    counts = {k: len(v & code) for k, v in parts.items()}
    counts["harness"] = len(code - set().union(*parts.values()))
    return counts


def check_repro(data, exp):
    assert data["repro_verified"] is True, data
    assert data["nodes"]["minified"] <= exp.get("max_nodes", exp.get("max_lines", 99)), data["nodes"]
    assert data["nodes"]["minified"] < data["nodes"]["original"]
    p = run_repro(data["repro"])
    # The repro fails on its own, in a fresh process, the way the original did.
    assert p.returncode != 0, p.stdout + p.stderr
    if data["kind"] == "exception" and data["signature"]["exc_type"] != "AssertionError":
        assert data["signature"]["exc_type"] in p.stderr
    elif data["kind"] == "crash":
        assert p.returncode < 0
    text = pathlib.Path(data["repro"]).read_text()
    n = repro_parts(text)
    # Beyond the graph, its inputs and the script's hooks and config (issue #28); a backward's gradients take 3 more.
    assert n["harness"] <= 15 + 3 * ("then their gradients" in text), text
    if data["nodes"]["minified"] <= 3:  # one op: as short as a maintainer would write it
        accuracy = (
            "\n# Expected: accuracy" in text
        )  # its check: eager, compiled, float64, "compiled is the more accurate"
        assert n["harness"] + n["graph"] + n["inputs"] <= (22 if accuracy else 15), text
    if data.get("test_repro"):
        test = pathlib.Path(data["test_repro"]).read_text()
        assert len(test.splitlines()) - repro_parts(test)["script"] <= 40, test


@pytest.mark.slow
def test_runtime_error_full_pipeline(workdir):
    """Ladder, config flips, lowering bisection, minify and pack on a 5-block model."""
    exp = expect("relu_runtime_error.py")
    p, data = bisect(workdir, "relu_runtime_error.py")
    assert p.returncode == 0, p.stderr
    check_verdict(data, exp)
    assert [r["stage"] for r in data["ladder"]] == ["eager", "aot_eager", "aot_eager_decomp_partition", "inductor"]
    assert [r["kind"] == "pass" for r in data["ladder"]] == [True, True, True, False]
    assert data["subsystem"]["name"] == "lowerings"
    assert "relu" in data["subsystem"]["detail"]
    assert data["subsystem"]["confirmed"] is True
    # Resetting the script's own planted config is the flip that makes it pass.
    assert data["config"] == {"cpp.inject_relu_bug_TESTING_ONLY": None}
    check_repro(data, exp)
    # The original run saved the graph that raised: the lowering search, its re-run, the config flips and minify
    # ran that graph alone, the stages too; the script ran twice, without compile and as written (issue #30).
    assert os.path.basename(data["graph_case"]) == "failing_case", data["graph_case"]
    journal = [json.loads(line) for line in open(os.path.join(data["run_dir"], "journal.jsonl"))]
    scripts = sorted(r["label"] for r in journal if r["kind"] == "script" and not r["label"].startswith("verify-"))
    assert scripts == ["baseline-no-compile", "original"], scripts
    assert os.path.exists(data["tarball"])
    check_issue(
        data["run_dir"],
        "RuntimeError: unhandled error",
        "[inductor][cpu] aten.relu lowering: RuntimeError",
        ("module: inductor",),
        tarball=data["tarball"],
        tlparse=bool(shutil_which("tlparse")),
    )
    journal = pathlib.Path(data["run_dir"], "journal.jsonl").read_text().splitlines()
    # Every trial that ran is journaled once: the bisect's, the minify's and those asked after the repro.
    assert len(journal) == data["trials"] + data["minify_trials"] + data["deferred_trials"]
    # Asked after the repro, so that they delay neither: the boundary's re-run, the config flips, torch's logs.
    assert data["deferred"] == [] and data["deferred_trials"] >= 3
    labels = [json.loads(line)["label"] for line in journal]
    # All passes off at once still fails, so no single pass was asked about; lowerings off alone passes.
    assert "all-but-lowerings-off" in labels and "lowerings-off" in labels
    assert not [label for label in labels if label.endswith("_passes-off")], labels
    # Torch's logs came with the original run (the failing stage): no run of their own.
    assert "torch-logs" not in labels
    logs = data["decisive_trials"]["torch_logs"]
    assert os.listdir(os.path.join(logs, "trace"))
    assert "Output code" in pathlib.Path(logs, "stderr.txt").read_text()


# The decisive line ISSUE.md's error section must hold, and its title's start.
ISSUE_CHECKS = {
    "relu_compile_error.py": ("error: ‘compile’ was not declared in this scope", "[inductor][cpu] C++ compile error"),
    # An accuracy repro's decisive error is its own check's, as `python repro.py` prints it (issue 46).
    "relu_accuracy.py": (
        "Tensor-likes are not close!",
        "[inductor][cpu] wrong results",
        ("module: correctness (silent)",),
    ),
    "segfault_backend.py": (
        "Fatal Python error: Segmentation fault",
        "[torch.compile] custom backend `crashy_backend` crash (SIGSEGV)",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            "relu_compile_error.py",
            marks=opt_in(
                "157 s in CI at 988ae24): a planted inductor C++ compile error cut from a 50-node graph runs in CI "
                "through b_cumsum_zero_dim_lowering (a genuine one, to a verified graph repro), "
                "test_runtime_error_full_pipeline (a 5-block graph minified) and test_compile_errors (the error "
                "replayed in a second process)"
            ),
        ),
        pytest.param(
            "relu_accuracy.py",
            marks=opt_in(
                "301 s on the loaded 2-core machine, beside the 214 s of the test that covers its class): an "
                "in-place bisect of a wrong relu the script's own check finds, to a verified few-node repro and "
                "ISSUE.md's accuracy wording, runs in CI through test_accuracy_inplace.py"
            ),
        ),
    ],
)
def test_planted_inductor_bug_minifies_to_a_few_nodes(workdir, case):
    exp = expect(case)
    p, data = bisect(workdir, case, "--no-configs", "--no-subsystems", "--no-pack")
    assert p.returncode == 0, p.stderr
    check_verdict(data, exp)
    assert data["nodes"]["original"] >= 50
    check_repro(data, exp)
    check_issue(data["run_dir"], *ISSUE_CHECKS[case])
    if case == "relu_compile_error.py":
        check_compile_errors_replayed(data["run_dir"])


@pytest.mark.slow
def test_third_of_three_graphs_then_minify_and_resume(workdir):
    exp = expect("third_graph.py")
    p, data = bisect(workdir, "third_graph.py", "--no-configs", "--no-subsystems", "--no-pack", "--no-minify")
    assert p.returncode == 0, p.stderr
    check_verdict(data, exp)
    verdict = json.loads(pathlib.Path(data["run_dir"], "verdict.json").read_text())
    assert "relu" in verdict["graph_code"] and data["repro"] is None

    def minify(*extra):
        p = subprocess.run(
            [sys.executable, "-m", "reprokit", "minify", data["run_dir"], "--json", *extra],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            timeout=1200,
        )
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)

    first = minify()
    check_repro(first, {"max_nodes": 4})
    # Asked again, every question is answered from the run's journal: no new trial runs.
    again = minify("--resume")
    assert again["minify_trials"] == 0 and again["nodes"] == first["nodes"] and again["repro_verified"] is True
    # test_repro.py's recorded run answers too, with the seconds it took then (the benchmark subtracts them).
    assert again["test_repro_seconds"] == first["test_repro_seconds"] > 0


@pytest.mark.slow
@opt_in(
    "165 s on shared cores at load 18): a Dynamo-stage source reduction verified end to end is "
    "covered by test_source_share's bisects of the same script and the real bugs' funcgrad, "
    "autogradcpu and nested; the tidy pass by test_caught"
)
def test_graph_break_under_fullgraph_reduces_the_source(workdir):
    exp = expect("graph_break_fullgraph.py")
    p, data = bisect(workdir, "graph_break_fullgraph.py", "--no-pack")
    assert p.returncode == 0, p.stderr
    check_verdict(data, exp)
    assert data["nodes"]["unit"] == "lines"
    check_repro(data, exp)
    check_issue(
        data["run_dir"],
        "torch._dynamo.exc.Unsupported: Data-dependent branching",
        "[dynamo] Unsupported",
        ("module: dynamo", "module: graph breaks"),
    )
    text = pathlib.Path(data["repro"]).read_text()
    assert "fullgraph=True" in text and 'print("input"' not in text


@pytest.mark.slow
@pytest.mark.parametrize("case", ["user_backend.py", "segfault_backend.py"])
def test_users_own_backend_is_named(workdir, case):
    exp = expect(case)
    p, data = bisect(workdir, case, "--no-pack", "--no-minify")
    assert p.returncode == 0, p.stderr
    check_verdict(data, exp)
    assert all(r["kind"] == "pass" for r in data["ladder"])
    if case in ISSUE_CHECKS:
        check_issue(data["run_dir"], *ISSUE_CHECKS[case])


@pytest.mark.slow
def test_compile_hang_is_cut_with_stacks(workdir):
    exp = expect("compile_hang.py")
    p, data = bisect(
        workdir,
        "compile_hang.py",
        "--timeout",
        str(exp["timeout"]),
        "--no-pack",
        "--no-minify",
        "--no-configs",
        "--no-subsystems",
    )
    assert p.returncode == 0, p.stderr
    check_verdict(data, exp)
    stacks = pathlib.Path(data["decisive_trials"]["first_failing"], "stacks.txt").read_text()
    assert "most recent call first" in stacks and "torch/_inductor/" in stacks


@pytest.mark.slow
@opt_in(
    "123 s in CI at 988ae24): a failure in the backward graph alone runs in CI through "
    "test_backward_only_silent_accuracy_bug_is_caught_by_the_gradient_check, test_capture.py's loss.backward() "
    "capture and the genuine funcgrad_custom_function_ste"
)
def test_backward_only_failure_minifies_with_backward(workdir):
    exp = expect("backward_only.py")
    p, data = bisect(workdir, "backward_only.py", "--no-configs", "--no-pack")
    assert p.returncode == 0, p.stderr
    check_verdict(data, exp)
    assert data["subsystem"]["name"] == "lowerings" and "relu" in data["subsystem"]["detail"]
    check_repro(data, exp)
    assert "its backward, as AOT autograd hands it to inductor" in pathlib.Path(data["repro"]).read_text()


@pytest.mark.slow
@opt_in(
    "291 s in the suite at 110e4fd, CI over its 45 minutes): --check-accuracy is covered by "
    "test_backward_only_silent_accuracy_bug_is_caught_by_the_gradient_check (exit 3 without it, "
    "then the bug found with it) and the capture --check-accuracy tests"
)
def test_silent_accuracy_bug_needs_check_accuracy(workdir):
    exp = expect("silent_accuracy.py")
    p, _ = bisect(workdir, "silent_accuracy.py", "--no-pack", "--no-minify")
    assert p.returncode == 3 and "--check-accuracy" in p.stderr
    p, data = bisect(workdir, "silent_accuracy.py", *exp["args"], "--no-configs", "--no-subsystems", "--no-pack")
    assert p.returncode == 0, p.stderr
    check_verdict(data, exp)
    check_repro(data, exp)
    text = pathlib.Path(data["repro"]).read_text()
    # synthetic inputs matched on the real ones' statistics reproduce it: no real data; eager, compiled, float64
    assert data["repro_inputs"] == "synthetic" and "torch.manual_seed(0)" in text and "repro_inputs.pt" not in text
    assert "expected, actual = results(" in text and "reference = results(" in text
    check_issue(
        data["run_dir"],
        "Tensor-likes are not close!",
        "[inductor][cpu] wrong results (silent)",
        ("module: correctness (silent)",),
    )


@pytest.mark.slow
@pytest.mark.skipif(
    tuple(int(x) for x in TORCH.split("."))
    >= tuple(int(x) for x in expect("backward_silent_accuracy.py")["fixed_in"].split(".")),
    reason=f"pytorch/pytorch#185509 is fixed in torch {expect('backward_silent_accuracy.py')['fixed_in']}: it does not "
    f"reproduce on torch {TORCH} (the gradients match eager's), so the gradient check has nothing to catch",
)
def test_backward_only_silent_accuracy_bug_is_caught_by_the_gradient_check(workdir):
    """A real inductor bug (pytorch#185509) in backward only, the script checking nothing: --check-accuracy
    compares the input gradients with eager's and names the wrong one."""
    exp = expect("backward_silent_accuracy.py")
    p, _ = bisect(workdir, "backward_silent_accuracy.py", "--no-pack", "--no-minify")
    assert p.returncode == 3 and "--check-accuracy" in p.stderr
    p, data = bisect(
        workdir,
        "backward_silent_accuracy.py",
        *exp["args"],
        "--no-configs",
        "--no-subsystems",
        "--no-pack",
        "--no-minify",
    )
    assert p.returncode == 0, p.stderr
    check_verdict(data, exp)
    assert [s["kind"] for s in data["ladder"]] == ["pass", "pass", "pass", "accuracy"]
    stderr = pathlib.Path(data["decisive_trials"]["first_failing"], "stderr.txt").read_text()
    assert "AccuracyFailure: graph 0: gradient of input 0: max abs diff " in stderr


@pytest.mark.slow
def test_a_flaky_failure_is_bisected_with_each_question_asked_until_it_fails(workdir, tmp_path):
    """3 of 4 runs fail: each question is asked until it fails that way, passing only after 3 runs that do not
    ((1 - 0.75)^3 < 5%), so a chance pass never places the failure; the graph repro is verified the same way."""
    exp = expect("flaky.py")
    p, data = bisect(
        workdir,
        "flaky.py",
        *exp["args"],
        "--no-pack",
        "--no-configs",
        env={"FLAKY_DIR": str(tmp_path), "FLAKY_PATTERN": "PFFF"},
    )
    assert p.returncode == 0, p.stderr
    assert data["flaky"] is True and data["repro_rate"] == 0.75 and data["repro_runs"] == 4
    assert data["flaky_tries"] == 3
    assert data["message"].startswith(
        "flaky: the original fails 3 of 4 runs (95% CI 30%–95%); each question was asked up to 3 times"
    ), data["message"]
    assert [r["kind"] for r in data["ladder"]] == ["pass", "pass", "pass", "exception"]
    assert data["failing_stage"] == "inductor" and "aten.relu" in data["subsystem"]["detail"]
    assert data["repro_verified"] is True and data["nodes"]["minified"] < data["nodes"]["original"]


@opt_in(
    "307 s in the suite at 110e4fd, CI over its 45 minutes): flaky failures are covered by "
    "test_a_flaky_failure_is_bisected_with_each_question_asked_until_it_fails, the warm-cache rung "
    "by test_a_failure_only_a_warm_cache_shows_is_named_and_its_repro_fails_on_its_warm_run"
)
def test_a_failure_the_first_run_missed_is_flaky_not_a_cache_bug(workdir, tmp_path):
    """Only the first compiled run passes (held-out: pytorch/pytorch#145445 fails 40% of runs, and the original
    passed by chance). The cold-cache run fails: before a cache is blamed the script runs twice more with the
    caches off, and the failure comes back. Flaky, counted over every run; no cache finding."""
    p, data = bisect(
        workdir,
        "flaky.py",
        "--jobs",
        "1",
        "--no-pack",
        "--no-minify",
        "--no-subsystems",
        "--no-configs",
        env={"FLAKY_DIR": str(tmp_path), "FLAKY_PATTERN": "PPFFFFFF"},
    )
    assert p.returncode == 0, p.stderr
    assert data["flaky"] is True and data["warm_cache"] is None, data["message"]
    # the original, the cold cache run (it failed: no warm run after it), the two runs with the caches off
    assert data["repro_runs"] == 4 and data["message"].startswith("flaky: the original fails 3 of 4 runs")
    assert "a flaky script, not a cache bug" in p.stderr


@pytest.mark.parametrize(
    "case,code,words",
    [
        pytest.param(
            "passes.py",
            3,
            "and uncompiled: nothing to isolate",
            marks=opt_in(
                "63 s in CI at 988ae24): test_cli's test_passing_script_has_nothing_to_isolate_exit_3 runs "
                "the same script and asserts its whole line"
            ),
        ),
        ("fails_without_compile.py", 3, "fails without compile too"),
        ("custom_op_no_autograd.py", 3, "fails without compile too"),
        ("no_compile.py", 2, "never calls torch.compile"),
        ("out_of_memory.py", 3, "ran out of memory"),
    ],
)
def test_nothing_to_isolate_and_no_compile(workdir, case, code, words):
    p, data = bisect(workdir, case, "--no-pack")
    assert p.returncode == code, p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("reprokit: ") and words in last
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize(
    "make,words",
    [
        (lambda d: "missing.py", "no such script"),
        (lambda d: str(d), "is a directory"),
        (lambda d: (d / "broken.py").write_text("def f(:\n") and "broken.py", "syntax error"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path, make, words):
    arg = make(tmp_path)
    p = subprocess.run(
        [sys.executable, "-m", "reprokit", "bisect", arg],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], p.stderr


def test_unwritable_output_dir_is_bad_input(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    (tmp_path / "s.py").write_text("import torch\n")
    p = subprocess.run(
        [sys.executable, "-m", "reprokit", "bisect", "s.py", "-o", str(blocker / "sub")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1 and "cannot write to output dir" in p.stderr


@pytest.mark.slow
def test_minimizer_refuses_a_smaller_graph_that_fails_differently(workdir):
    exp = expect("two_bugs.py")
    p, data = bisect(workdir, "two_bugs.py", "--no-configs", "--no-subsystems", "--no-pack")
    assert p.returncode == 0, p.stderr
    check_verdict(data, exp)
    assert "log1p" in data["signature"]["message"]
    check_repro(data, exp)
    repro = pathlib.Path(data["repro"]).read_text()
    assert "log1p" in repro and "relu" not in repro.split("class Repro")[1]
    refused = json.loads(pathlib.Path(data["run_dir"], "minify_refused.json").read_text())
    assert any(r["signature"].get("exc_type") == "RuntimeError" for r in refused)


@pytest.mark.slow
def test_accuracy_repro_keeps_the_bug_that_reaches_the_output(workdir):
    """Of two silent errors in one graph, only relu's reaches the output: candidates are judged spliced into the
    whole graph, so the one that only exposes log1p's error is refused and the repro keeps relu."""
    exp = expect("two_accuracy_bugs.py")
    p, data = bisect(workdir, "two_accuracy_bugs.py", "--no-configs", "--no-pack")
    assert p.returncode == 0, p.stderr
    check_verdict(data, exp)
    assert "relu" in (data["subsystem"] or {}).get("detail", "")
    check_repro(data, exp)
    assert data["repro_kind"] == "graph"
    forward = pathlib.Path(data["repro"]).read_text().split("class Repro")[1]
    assert "relu" in forward and "log1p" not in forward
    # Yet log1p is the first node whose compiled value differs (NaN eager): the verdict says so, and that the
    # lowering counter named another op, the one whose difference reaches the output.
    assert (data["divergence"]["target"], data["divergence"]["lowering"]) == ("torch.log1p", "differs")


@pytest.mark.slow
def test_compiler_hook_set_at_run_time_travels_into_the_repro(workdir):
    """A custom post-grad pass set through inductor's config is part of the bug: the graph is replayed with it
    (graph_in_context) and repro.py carries its source and the assignment."""
    exp = expect("custom_pass_bug.py")
    p, data = bisect(workdir, "custom_pass_bug.py", "--no-configs", "--no-pack")
    assert p.returncode == 0, p.stderr
    check_verdict(data, exp)
    check_repro(data, exp)
    assert data["repro_kind"] == "graph_in_context", data["repro_attempts"]
    repro = pathlib.Path(data["repro"]).read_text()
    assert "def break_relu(graph):" in repro
    assert "torch._inductor.config.post_grad_custom_post_pass = break_relu" in repro


@pytest.mark.slow
@opt_in("110 s): test_numerics's exit-4 line and the fp8 case cover its class")
def test_compiled_more_accurate_than_eager_is_exit_4_not_nothing_to_isolate(workdir):
    """#181696: the script's own check fails, but compiled is the result closer to float64: said plainly, exit 4;
    no setting makes compiled match eager here."""
    p, data = bisect(workdir, "compiled_more_accurate.py", "--no-configs", "--no-subsystems", "--no-pack")
    assert p.returncode == 4, p.stderr
    assert p.stderr.strip().splitlines()[-1] == (
        "reprokit: compiled is more accurate than eager (float64 reference) in graph 0; no setting tried makes "
        "compiled match eager"
    ), p.stderr
    assert data["exit_code"] == 4 and data["more_accurate"]["graph"] == 0


@pytest.mark.slow
def test_compiled_more_accurate_is_exit_4_with_the_flip_that_gives_eager_bits_back(workdir):
    """PyTorch's bisector test test_emulate_precision_casts on CPU: an FP8 scale from bfloat16, compiled keeps
    float32 (96.2148 against eager's 96.0). Not "nothing to isolate": exit 4, and emulate_precision_casts gives
    eager's bits back (the lowering and the first diverging node: the opt-in test below)."""
    p, data = bisect(workdir, "fp8_scale_precision.py", "--no-pack", "--no-subsystems")
    assert p.returncode == 4, p.stderr
    strict = " or `TORCHINDUCTOR_NUMERICS=strict_pointwise`" if NEWEST else ""
    assert p.stderr.strip().splitlines()[-1] == (
        f"reprokit: compiled is more accurate than eager (float64 reference) in graph 0; `emulate_precision_casts=True`"
        f"{strict} makes compiled match eager"
    ), p.stderr
    assert data["config"] == {"emulate_precision_casts": True} and data["more_accurate"]["graph"] == 0


@pytest.mark.slow
@opt_in(
    "77 s): the --no-subsystems fp8 test above covers exit 4 and the flip, two_accuracy_bugs's the first diverging node"
)
def test_compiled_more_accurate_names_what_gives_eager_bits_back(workdir):
    """The fp8 scale with the counters on: the lowering is convert_element_type, and the first diverging node is the
    cast, as the counter says."""
    p, data = bisect(workdir, "fp8_scale_precision.py", "--no-pack")
    assert p.returncode == 4, p.stderr
    strict = " or `TORCHINDUCTOR_NUMERICS=strict_pointwise`" if NEWEST else ""
    assert p.stderr.strip().splitlines()[-1] == (
        f"reprokit: compiled is more accurate than eager (float64 reference) in graph 0; `emulate_precision_casts=True`"
        f"{strict} makes compiled match eager (lowering `prims.convert_element_type.default`, application #7 of 8)"
    ), p.stderr
    assert data["config"] == {"emulate_precision_casts": True}
    if NEWEST:
        assert data["numerics"]["workaround"] == "TORCHINDUCTOR_NUMERICS=strict_pointwise", data["numerics"]
    else:
        assert data["numerics"]["text"] == f"numerics modes not asked: torch {TORCH} has no TORCHINDUCTOR_NUMERICS"
    assert (data["divergence"]["target"], data["divergence"]["lowering"]) == ("to", "agrees")


@pytest.mark.slow
def test_a_budget_spent_by_the_verdict_still_ends_with_verdict_and_tarball_and_says_what_was_not_asked(workdir):
    """--budget 1s: the verdict is always finished; minify and the questions after it are not asked, the run says
    so, and the tarball is still written (issue #30, #32: every run ends with results)."""
    p, data = bisect(workdir, "relu_compile_error.py", "--budget", "1s", "--no-configs")
    assert p.returncode == 0, p.stderr
    assert data["failing_stage"] == "inductor" and data["subsystem"]["name"] == "lowerings"
    assert data["budget"]["spent"] is True and data["budget"]["seconds"] == 1.0
    assert data["budget"]["not_asked"][0] == "minify" and "confirm" in data["budget"]["not_asked"], data["budget"]
    assert data["repro"] is None and os.path.exists(data["tarball"])
    assert "the budget of 1 s was spent: not asked: minify, " in p.stderr, p.stderr[-2000:]


def test_a_budget_that_is_no_duration_is_one_line_and_exit_2(workdir):
    p, _ = bisect(workdir, "relu_compile_error.py", "--budget", "soon")
    assert (p.returncode, p.stderr) == (2, "reprokit: --budget takes a duration like 90s, 20m or 1h30m (got 'soon')\n")


@pytest.mark.slow
def test_a_failure_only_a_warm_cache_shows_is_named_and_its_repro_fails_on_its_warm_run(workdir, tmp_path):
    """reprokit's trials run with inductor's compiled-graph caches off, where this script passes: the warm-cache rung
    runs it cold then warm on one new cache, names the FX graph cache, and repro.py shows it with `python repro.py`
    (issue #32)."""
    p, data = bisect(workdir, "warm_cache_only.py", "--no-pack")
    assert p.returncode == 0, p.stderr[-3000:]
    check_verdict(data, expect("warm_cache_only.py"))
    assert data["warm_cache"]["caches"] == ["fx_graph_cache"] and data["warm_cache"]["when"] == "warm", data
    assert data["message"] == (
        "fails only when a run loads what an earlier run stored: the FX graph cache (a cold run "
        "passes, the warm run after it fails); with the caches off it passes"
    )
    assert [(r["stage"], r["kind"] == "pass", r["same"]) for r in data["ladder"]] == [
        ("cold cache, FX graph + AOT autograd", True, False),
        ("warm cache, FX graph + AOT autograd", False, True),
        ("cold cache, FX graph cache only", True, False),
        ("warm cache, FX graph cache only", False, True),
    ], data["ladder"]
    assert data["repro_kind"] == "warm_cache" and data["repro_verified"] is True, data["repro_attempts"]
    # `python repro.py` alone, from another folder and without reprokit on the path: the cold run passes, the warm
    # run fails the way the script's second run did.
    (tmp_path / "tmp").mkdir()
    q = subprocess.run(
        [sys.executable, data["repro"]],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env={**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "TMPDIR": str(tmp_path / "tmp")},
    )
    assert q.returncode == 1, q.stderr[-2000:]
    assert "'demo_warm' object has no attribute 'keep'" in q.stderr and q.stderr.rstrip().endswith(
        "the warm run failed (exit 1); its traceback is above"
    ), q.stderr[-2000:]
    assert q.stdout.count("ok ") == 1  # the cold run's own line; the warm run died before printing
    assert not [p.name for p in (tmp_path / "tmp").glob("inductor-cache-*")]  # its one new cache is removed


@pytest.mark.slow
def test_a_failure_reprokits_router_hides_is_bisected_from_plain_runs_never_exit_3(workdir):
    """Two closures of one factory share a code object; run as written, the second reuses the first one's graph and
    the script's check fails, while under reprokit's router every run passes (issue 45, item 6). Instead of
    "nothing to isolate", one plain run shows the failure, and the stages come from plain runs with torch's own
    backend switch (TORCH_BISECT_BACKEND)."""
    p, data = bisect(workdir, "shared_code_closures.py", "--no-pack", "--no-configs")
    assert p.returncode == 0, p.stderr[-3000:]
    check_verdict(data, expect("shared_code_closures.py"))
    assert data["signature"]["exc_type"] == "AssertionError", data["signature"]
    plain = data["plain_run"]
    assert plain["command"] == "python shared_code_closures.py"
    assert (plain["failing_stage"], plain["last_passing_stage"]) == ("eager", "none")
    # torch's backend switch reaches the script's torch.compile calls: a run with an unknown backend fails on it
    assert (plain["backend_switch"], plain["doubt"]) == ("honoured", None)
    # two runs as written, five stages and the probe: Runner trials, journaled (--resume reuses them) and counted
    journal = [json.loads(line) for line in pathlib.Path(data["run_dir"], "journal.jsonl").read_text().splitlines()]
    assert sum(1 for e in journal if e["kind"] == "plain") == 8
    assert [(r["stage"], r["kind"], r["same"]) for r in data["ladder"]] == [
        ("none", "pass", False),
        ("eager", "exception", True),
        ("aot_eager", "exception", True),
        ("aot_eager_decomp_partition", "exception", True),
        ("inductor", "exception", True),
    ], data["ladder"]
    assert data["message"] == (
        "reprokit's instrumentation hides the failure: the script fails run as written (python "
        "shared_code_closures.py, 2 of 2 runs) and passes under reprokit's router; bisected by plain runs of the "
        "script with "
        "torch.compile's backend swapped by torch itself (TORCH_BISECT_BACKEND): it fails from dynamo "
        "(backend=eager) on and passes with eager (no compile); not asked: which graph fails, graph capture and a "
        "minified repro.py, inductor config flips, torch's pass and lowering counters (each needs reprokit's "
        "router, which hides the failure)"
    ), data["message"]
    assert data["repro"] is None  # every cut would run under the router: the script itself is the repro
    assert "not minified: the failure shows only in the script run as written" in p.stderr
    # The plain run's own output, in the run folder: the script's traceback as the user sees it.
    stderr = pathlib.Path(data["run_dir"], "plain", "as-written", "stderr.txt").read_text()
    assert "AssertionError: tensor([2., 2., 2., 2.])" in stderr


@pytest.mark.slow
def test_lowering_counted_on_the_graph_with_the_scripts_compile_options(workdir):
    """The planted bug is in torch.compile's options. The counters' trials on the saved graph set
    TORCH_BISECT_BACKEND, and torch then swapped reprokit's backend for its bare inductor, options dropped: they
    named aten.add, unconfirmed. Now aten.relu, application 0 of 2, confirmed."""
    p, data = bisect(workdir, "relu_bug_in_options.py", "--no-configs", "--no-minify", "--no-pack")
    assert p.returncode == 0, p.stderr[-3000:]
    sub = data["subsystem"]
    assert (data["failing_stage"], sub["name"], sub["application"], sub["applications"], sub["confirmed"]) == (
        "inductor",
        "lowerings",
        0,
        2,
        True,
    ), sub
    assert sub["detail"].startswith("aten.relu.default "), sub
