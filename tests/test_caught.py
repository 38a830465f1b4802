"""A failure the script catches is still that failure (issue 50, item 6): a script that wraps its compiled call in
try/except, prints, and sys.exit(1)s fails the same way as the same call raising uncaught, so a cut of the script
that drops the wrapper is the same failure. Real trial processes: a genuine Dynamo error (a data-dependent branch
under fullgraph=True) is cheap to meet, no C++ compile; inductor's planted compile error, opt-in, takes 150 s on
two shared cores."""

import ast
import os

import pytest

from reprokit.data.phases import Isolation
from reprokit.data.records import TrialSpec
from reprokit.data.signature import Signature
from reprokit.source.reduce import source_problem, tidy
from reprokit.trial.runner import Runner
from tests.opt_in import opt_in
from tests.warm_runner import warm_runner

HEAD = """import sys
import torch

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"
m = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())
"""
CAUGHT = (
    HEAD
    + """try:
    out = torch.compile(m)(torch.randn(2, 8))
except Exception as e:
    print("compile failed:", type(e).__name__)
    sys.exit(1)
"""
)
UNCAUGHT = HEAD + "out = torch.compile(m)(torch.randn(2, 8))\n"
# Caught, then the script goes on and exits 0: it passes, as it does for its user.
CAUGHT_AND_PASSES = CAUGHT.replace("sys.exit(1)", "out = m(torch.randn(2, 8))")


@pytest.fixture
def runner(tmp_path):
    """A runner in a run folder of its own, a test's trials apart from another's."""
    with warm_runner(tmp_path) as runner:
        yield runner


def run(runner: Runner, name: str, text: str, stage: str = "inductor"):
    folder = os.path.dirname(runner.run_dir.path)
    script = os.path.join(folder, f"{name}.py")
    with open(script, "w") as f:
        f.write(text)
    return runner(TrialSpec(mode="script", stage=stage, script=script, cwd=folder, label=name))


DYNAMO_HEAD = """import sys
import torch


@torch.compile(fullgraph=True)
def f(x):
    if x.sum() > 0:
        return x.cos()
    return x.sin()


"""
DYNAMO_CAUGHT = (
    DYNAMO_HEAD
    + """try:
    f(torch.ones(4))
except Exception as e:
    print("compile failed:", e)
    sys.exit(1)
"""
)


NESTED = """
inner = torch.compile(lambda x: x.sin())


@torch.compile(fullgraph=True)
def outer(x):
    return inner(x) + 1


print(outer(torch.ones(4)))
"""


def test_an_exit_after_a_caught_dynamo_error_is_that_error(runner):
    caught, uncaught = (
        run(runner, "caught", DYNAMO_CAUGHT, "eager"),
        run(runner, "raw", DYNAMO_HEAD + "f(torch.ones(4))\n", "eager"),
    )
    assert (caught.kind, caught.signature.exc_type) == ("exception", "Unsupported"), caught
    assert caught.signature.matches(uncaught.signature) and uncaught.signature.matches(caught.signature)
    assert not caught.signature.matches(Signature("exit", None, "exit code 1", None))
    assert caught.note.startswith("the script caught Unsupported: ") and caught.note.endswith(" and exited 1"), (
        caught.note
    )
    # Caught, and the script goes on, exits 0: it passes. What it goes on to, a compiled function called inside a
    # fullgraph one, still traces as one graph: the wrapper that keeps what a call raises is not traced into it.
    passes = DYNAMO_CAUGHT.replace("sys.exit(1)", "print(torch.ones(4).cos())") + NESTED
    assert run(runner, "passes", passes, "eager").kind == "pass"


@opt_in("51 s on shared cores, three inductor compiles): the Dynamo error above covers its class")
def test_an_exit_after_a_caught_compile_error_is_that_error(runner):
    caught, uncaught = run(runner, "caught", CAUGHT), run(runner, "uncaught", UNCAUGHT)
    assert caught.kind == uncaught.kind == "exception", (caught, uncaught)
    assert caught.signature.matches(uncaught.signature) and uncaught.signature.matches(caught.signature)
    assert caught.signature.exc_type == uncaught.signature.exc_type, caught.signature
    assert not caught.signature.matches(Signature("exit", None, "exit code 1", None))
    assert caught.note.startswith("the script caught "), caught.note
    assert run(runner, "passes", CAUGHT_AND_PASSES).kind == "pass"


# A maintainer's script: a docstring, main() behind the __main__ guard, a name never read, and the compiled call in a
# try/except that prints and exits 1.
SCRIPT = '''"""Scores a batch."""
import sys

import numpy as np
import torch

torch.manual_seed(0)


@torch.compile(fullgraph=True)
def score(x):
    y = x.sin()
    if y.sum() > 0:
        return y.cos()
    return y


def main():
    weights = np
    x = torch.randn(8)
    try:
        out = score(x)
        print(out.sum())
    except Exception as e:
        print("scoring failed:", type(e).__name__)
        sys.exit(1)
    finally:
        pass


if __name__ == "__main__":
    main()
'''


def test_the_tidy_pass_unwraps_the_scripts_try_on_the_real_compiler(runner, tmp_path):
    """One trial of all the tidy edits at once: accepted, since the Unsupported the script caught is its failure."""
    script = tmp_path / "score.py"
    script.write_text(SCRIPT)
    folder = runner.run_dir
    original = runner(TrialSpec(mode="script", stage="eager", script=str(script), cwd=str(tmp_path), label="script"))
    assert (original.kind, original.signature.exc_type) == ("exception", "Unsupported"), original
    v = Isolation(script=str(script), signature=original.signature.to_dict())
    start = ast.unparse(ast.parse(SCRIPT)) + "\n"
    problem = source_problem(folder, v, runner, start, "eager", cwd=str(tmp_path))
    assert problem.test(start)
    assert (
        tidy(problem, start)
        == problem.best
        == (
            "import torch\n"
            "torch.manual_seed(0)\n\n"
            "@torch.compile(fullgraph=True)\n"
            "def score(x):\n"
            "    y = x.sin()\n"
            "    if y.sum() > 0:\n"
            "        return y.cos()\n"
            "    return y\n"
            "x = torch.randn(8)\n"
            "out = score(x)\n"
            "print(out.sum())\n"
        )
    )
