"""The source reduction's oracle on the real compiler (issue 50): two candidates the library comparison found it
accepting (bench/README.md, "Source reduction: the libraries side by side") are refused in their own trial, and
the candidate beside each that keeps the bug is accepted."""

import ast
import json
import os
import pathlib

import pytest

from reprokit.data.phases import Isolation
from reprokit.data.records import TrialSpec
from reprokit.source.reduce import source_problem
from reprokit.trial.runner import Runner
from tests.warm_runner import warm_runner

REAL = pathlib.Path(__file__).parent / "real_bugs"


@pytest.fixture(scope="module")  # defined here, not in conftest: conftest groups a module's tests by it (xdist)
def runner(tmp_path_factory):
    """One runner for the module, its worker started once."""
    with warm_runner(tmp_path_factory.mktemp("oracle")) as runner:
        yield runner


def problem_of(runner: Runner, case: str):
    """(the source problem of a genuine case at the Dynamo stage, its start text), the script itself asked first
    as minify_source asks it."""
    script, cwd = str(REAL / case), os.path.dirname(runner.run_dir.path)
    original = runner(TrialSpec(mode="script", stage="eager", script=script, cwd=cwd, label=case))
    v = Isolation(script=script, signature=original.signature.to_dict())
    start = ast.unparse(ast.parse(pathlib.Path(script).read_text())) + "\n"
    problem = source_problem(runner.run_dir, v, runner, start, "eager", cwd=cwd)
    assert problem.test(start), original.signature
    return problem, start


def journaled(runner: Runner) -> list[tuple[str, dict]]:
    """(label, signature) of every trial the run's journal holds, as a user reads journal.jsonl."""
    with open(runner.run_dir.file("journal.jsonl")) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [(row["label"], row["outcome"]["signature"]) for row in rows]


# pysource-minimize's result from pytorch#139707 (bench/library_compare.py): its kernel `0()` raises TypeError on
# the FakeTensor where the bug's raises RuntimeError, behind the same "RuntimeError when making fake tensor call".
ZERO_KERNEL = """import torch
torch.manual_seed(0)

def tanh_autograd_cpu(x):
    0()
_lib = torch.library.Library('aten', 'IMPL')
_lib.impl('tanh', tanh_autograd_cpu)

class Block(torch.nn.Module):

    def forward(self, x):
        torch.tanh(x)
model = Block()
x = torch.randn(0)
compiled = torch.compile(model)
compiled(x)
"""

# reprokit's own result on the same case: the kernel still calls .numpy(), the same inner error.
NUMPY_KERNEL = """import numpy as np
import torch
torch.manual_seed(0)

class NumpyTanh(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x):
        return torch.as_tensor(np.tanh(x.detach().cpu().numpy()), device=x.device)

def tanh_autograd_cpu(x):
    return NumpyTanh.apply(x)
_lib = torch.library.Library('aten', 'IMPL')
_lib.impl('tanh', tanh_autograd_cpu, 'AutogradCPU')
lin = torch.nn.Linear(1, 1)

def model(x):
    return torch.tanh(lin(x)).sum()
x = torch.randn(1, 1)
torch.compile(model)(x)
"""


def test_another_error_inside_dynamos_fake_tensor_wrapper_is_another_failure(runner):
    """Both candidates of pytorch#139707 fail with Dynamo's "RuntimeError when making fake tensor call"; the
    error inside it tells them apart, so the one with `0()` is refused and the one that keeps .numpy() accepted."""
    problem, _ = problem_of(runner, "b_aten_autogradcpu_override_fake.py")
    assert problem.first_failing([ZERO_KERNEL, NUMPY_KERNEL]) == 1
    assert problem.best == NUMPY_KERNEL
    inner = {s["inner"] for label, s in journaled(runner) if label.startswith("source-") and s.get("inner")}
    assert inner == {
        "RuntimeError: .numpy() is not supported for tensor subclasses.",
        "TypeError: 'int' object is not callable",
    }
    # as torch said it, which ISSUE.md quotes (report/bisect_report.py)
    assert {s.get("inner_text") for label, s in journaled(runner) if s.get("inner")} >= inner


def test_a_candidate_whose_backend_name_torch_compile_rejects_is_refused_in_its_trial(runner):
    """pytorch#198100 at the Dynamo stage: the router replaces the script's backend, so shrinkray's cut of
    backend='eager' to 'er' passed its trials and failed only in the fresh interpreter that verifies repro.py
    (InvalidBackend). The trial now checks torch.compile's arguments as torch.compile does."""
    problem, start = problem_of(runner, "d_contiguous_alias_unsqueeze_guard.py")
    kept = start.replace("print('OK')\n", "")
    mangled = kept.replace("backend='eager'", "backend='er'")
    assert kept != start and mangled != kept
    assert problem.first_failing([mangled, kept]) == 1
    assert problem.best == kept
    # refused by its one trial, which failed as torch.compile fails for that name: no trial without compile
    refused = [label for label, s in journaled(runner) if s["exc_type"] == "InvalidBackend"]
    assert refused == [f"source-{len(mangled.splitlines())}l"], journaled(runner)
