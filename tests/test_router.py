"""The torch.compile stand-in of script trials: every keyword the script gives torch.compile reaches torch, and
scripts that call torch._dynamo.optimize are routed through the stage like torch.compile ones."""

import textwrap

from reprokit.data.records import TrialSpec
from reprokit.data.rundir import RunDir
from reprokit.trial.runner import Runner


def run_script(tmp_path, body, stages):
    """{stage: Outcome} of the script run as a whole-script trial under each stage."""
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(body))
    runner = Runner(RunDir.create(str(tmp_path / "artifacts"), "router"), timeout=300)
    try:
        return {
            stage: runner(TrialSpec(mode="script", stage=stage, script=str(script), cwd=str(tmp_path), label=stage))
            for stage in stages
        }
    finally:
        runner.close()


def test_keywords_the_stand_in_does_not_read_still_reach_torch_compile(tmp_path):
    """recompile_limit= is a torch.compile keyword the router has no use for: the script's baseline must not
    die of a TypeError, and under Dynamo the limit must bite exactly as it does without reprokit."""
    out = run_script(
        tmp_path,
        """
        import torch

        torch._dynamo.config.fail_on_recompile_limit_hit = True

        def f(x):
            return torch.relu(x) + 1

        opt = torch.compile(f, dynamic=False, recompile_limit=1)
        opt(torch.randn(4))
        opt(torch.randn(5))  # a second shape: a recompile, over the script's own limit of one
    """,
        ["none", "eager"],
    )
    assert out["none"].kind == "pass", out["none"]
    eager = out["eager"]
    assert eager.kind == "exception", eager
    assert "TypeError" not in eager.signature.exc_type
    assert "RecompileLimit" in eager.signature.exc_type, eager.signature
    assert eager.compile_args["backend"] == "inductor" and eager.compile_args["dynamic"] is False


def test_scripts_using_dynamo_optimize_are_routed_by_stage(tmp_path):
    """torch._dynamo.optimize("inductor") with inductor's planted compile error: the error is inductor's, so a
    trial at aot_eager passes and one at inductor fails, as with torch.compile."""
    out = run_script(
        tmp_path,
        """
        import torch

        torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"

        @torch._dynamo.optimize("inductor")
        def f(x):
            return torch.relu(x) * 2

        print(f(torch.randn(8)).sum())
    """,
        ["aot_eager", "inductor"],
    )
    routed = out["aot_eager"]
    assert routed.kind == "pass", routed
    assert routed.graphs == 1 and routed.user_backend == "inductor"
    failing = out["inductor"]
    assert failing.kind == "exception" and "CppCompileError" in failing.signature.message, failing
