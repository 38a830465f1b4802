"""The decisive error, title, labels and portable text, on texts recorded from real reprokit runs (tests/cases/ under
torch 2.13 on CPU): fast, no compiler run."""

import gzip
import pathlib

import pytest

from reprokit.data.rundir import RunDir
from reprokit.data.signature import Signature
from reprokit.data.verdict import Verdict
from reprokit.minify.testcase import judge_test
from reprokit.report import triage
from reprokit.report.decisive import LIMIT, decisive_error, last_chain
from reprokit.report.github import fit_github
from reprokit.report.pack_facts import gather
from reprokit.report.pack_issue import issue_text
from reprokit.report.portable import machine_paths, portable
from reprokit.report.summary import summary

TEXTS = pathlib.Path(__file__).parent / "decisive_texts"


def recorded(name: str) -> str:
    path = TEXTS / name
    data = path.read_bytes()
    return (gzip.decompress(data) if name.endswith(".gz") else data).decode()


def lines(text: str) -> list:
    return text.splitlines()


@pytest.mark.parametrize("name", ["cpp_compile_error.txt.gz", "cpp_compile_error_with_torch_logs.txt.gz"])
def test_cpp_compile_error_is_the_error_line_and_the_generated_line_without_warnings(name):
    text = recorded(name)
    assert text.count("warning:") > 20  # the recorded text is the noisy one
    out = decisive_error("exception", text)
    assert len(lines(out)) <= LIMIT
    assert "error: ‘compile’ was not declared in this scope" in out
    assert "auto tmp1 = compile error!;" in out  # the failing line of generated code
    assert "warning:" not in out and "In file included" not in out and "required from" not in out
    assert "torch._inductor.exc.InductorError: CppCompileError: C++ compile error" in out
    # The torch frame that raised, and no frame of the trial machinery or of the generated module.
    assert "torch/_inductor/cpp_builder.py" in out and "_run_compile_cmd" in out
    assert "reprokit/child" not in out and "runpy" not in out and "async_compile.wait" not in out


def test_runtime_error_keeps_user_frames_and_the_raising_torch_frame():
    out = decisive_error("exception", recorded("runtime_error.txt.gz"))
    assert lines(out)[-1] == "RuntimeError: unhandled error"
    assert 'repro.py", line' in out and "out = call(compiled, *inputs)" in out
    assert "torch/_inductor/output_code.py" in out
    assert len(lines(out)) <= LIMIT


def test_a_tail_without_traceback_is_cut_to_the_limit():
    out = decisive_error("exit", "\n".join(f"line {i}" for i in range(500)))
    assert len(lines(out)) <= LIMIT and lines(out)[-1] == "line 499"


def test_portable_leaves_no_machine_path():
    text = recorded("cpp_compile_error.txt.gz")
    assert machine_paths(text)
    out = portable(text)
    assert not machine_paths(out), machine_paths(out)[:5]
    assert "<site-packages>/torch/_inductor/cpp_builder.py" in out


def test_portable_names_the_run_dir_and_the_project():
    text = 'File "/tmp/x/artifacts/2026-run/repro.py", line 3 and /home/alice/proj/train.py and ~/.cache/y'
    out = portable(text, run_dir="/tmp/x/artifacts/2026-run", project="/home/alice/proj")
    assert out == 'File "<run-dir>/repro.py", line 3 and <project>/train.py and <home>/.cache/y'


def test_portable_names_reprokits_compile_cache():
    text = "/root/.cache/reprokit/compile/torch-2.13.0+cpu-e6a412844a/inductor/kj/ckjs.main.cpp:15:33: error: x"
    assert portable(text) == "<inductor-cache>/kj/ckjs.main.cpp:15:33: error: x"


def verdict(**kw) -> Verdict:
    return Verdict.from_dict({"script": "/p/train.py", "argv": [], **kw})


CPP = {
    "kind": "exception",
    "exc_type": "InductorError",
    "message": "CppCompileError: C++ compile error",
    "cause": "CppCompileError: C++ compile error @ torch/_inductor/cpp_builder.py:_run_compile_cmd",
}
RELU = {
    "name": "lowerings",
    "application": 9,
    "applications": 78,
    "detail": "aten.relu.default (%relu : [num_users=1] = call_function[target=torch.ops.aten.relu.default](...))",
}


def test_title_and_labels_in_pytorchs_words():
    v = verdict(failing_stage="inductor", kind="exception", signature=CPP, subsystem=RELU)
    assert triage.title(v) == "[inductor][cpu] aten.relu lowering: C++ compile error"
    assert triage.labels(v) == ["oncall: pt2", "module: inductor", "oncall: cpu inductor"]
    acc = verdict(failing_stage="inductor", kind="accuracy", signature={"kind": "accuracy"})
    assert triage.title(acc, cuda=True).startswith("[inductor][cuda] wrong results (silent)")
    assert "module: correctness (silent)" in triage.labels(acc, cuda=True)
    aot = verdict(
        failing_stage="aot_eager",
        kind="exception",
        signature={"kind": "exception", "exc_type": "RuntimeError", "message": "boom"},
    )
    assert triage.title(aot) == "[aot_autograd] RuntimeError: boom"
    assert triage.labels(aot) == ["oncall: pt2", "module: aotdispatch"]
    crash = verdict(failing_stage="eager", kind="crash", signature={"kind": "crash", "exc_type": "SIGSEGV"})
    assert triage.title(crash) == "[dynamo] crash (SIGSEGV)"
    assert triage.labels(crash) == ["oncall: pt2", "module: dynamo", "module: crash"]


# pytorch#139707 at the Dynamo stage: TorchRuntimeError is raised `from None`, its text alone names the error inside.
FAKE_CALL = {
    "kind": "exception",
    "exc_type": "TorchRuntimeError",
    "message": "RuntimeError when making fake tensor call",
    "text": "RuntimeError when making fake tensor call",
    "cause": "TorchRuntimeError: RuntimeError when making fake tensor call @ torch/_dynamo/exc.py:unimplemented",
    "inner": "RuntimeError: .numpy() is not supported for tensor subclasses.",
    "inner_text": "RuntimeError: .numpy() is not supported for tensor subclasses.",
}


def test_issue_md_says_the_error_inside_dynamos_wrapper(tmp_path):
    """The wrapper's own message is the same for every error a fake tensor call meets: ISSUE.md's title names the
    one inside, and its first sentence quotes both (issue 50)."""
    run = RunDir(str(tmp_path))
    run.write_json("run.json", {"command": "reprokit bisect case.py"})
    run.write_json("env.json", {"text": "collect_env"})
    ladder = [{"stage": "eager", "kind": "exception", "summary": "", "seconds": 0.4, "same": True}]
    v = verdict(kind="exception", signature=FAKE_CALL, failing_stage="eager", last_passing_stage="none", ladder=ladder)
    text = issue_text(gather(run, v), None, summary(v, brief=True), "pack.tar.gz", None, False)
    assert text.splitlines()[0] == "[dynamo] RuntimeError: .numpy() is not supported for tensor subclasses."
    assert (
        "`torch.compile` raises (TorchRuntimeError: RuntimeError when making fake tensor call) in `train.py`. "
        "The error inside that wrapper: `RuntimeError: .numpy() is not supported for tensor subclasses.` It passes "
        "with `eager (no compile)` and fails from `dynamo (backend=eager)` on, so the bug is in that stage."
    ) in text.splitlines()
    # A signature written before the error's own text was kept quotes it normalised; one without it, as before.
    old = {k: val for k, val in FAKE_CALL.items() if k != "inner_text"} | {"inner": "ValueError: size N"}
    assert (
        triage.title(verdict(kind="exception", signature=old, failing_stage="eager")) == "[dynamo] ValueError: size N"
    )
    plain = {k: val for k, val in FAKE_CALL.items() if k not in ("inner", "inner_text")}
    assert triage.title(verdict(kind="exception", signature=plain, failing_stage="eager")) == (
        "[dynamo] TorchRuntimeError: RuntimeError when making fake tensor call"
    )


def test_test_repro_run_is_judged_against_the_bug():
    target = Signature(**CPP)
    out = recorded("cpp_compile_error.txt.gz")
    same, line = judge_test(target, 1, out)
    assert same and line == "torch._inductor.exc.InductorError: CppCompileError: C++ compile error"
    assert judge_test(target, 0, "ok") == (False, "passed")
    assert judge_test(target, 1, recorded("runtime_error.txt.gz"))[0] is False
    assert judge_test(Signature("crash", "SIGSEGV", "killed by SIGSEGV"), -11, "") == (True, "killed by SIGSEGV")
    assert (
        judge_test(
            Signature("accuracy"),
            1,
            "Traceback (most recent call last):\n"
            '  File "t.py", line 1, in f\nAssertionError: output 0: compiled differs',
        )[0]
        is True
    )


def test_body_fits_githubs_limit_by_folding_the_longest_parts():
    graph = "x = 1\n" * 20_000
    text = "head\n" + graph + "tail\n"
    out = fit_github(text, [(graph, "(graph in the pack)")])
    assert out == "head\n(graph in the pack)tail\n"
    assert len(fit_github("y" * 100_000, [])) <= 65_536


def test_last_chain_reads_every_exception_of_a_chain():
    text = (
        "Traceback (most recent call last):\n  File \"/u/a.py\", line 1, in f\n    g()\nKeyError: 'k'\n\n"
        "The above exception was the direct cause of the following exception:\n\n"
        'Traceback (most recent call last):\n  File "/u/a.py", line 5, in <module>\n    f()\n'
        "ValueError: wrapped\n"
    )
    chain = last_chain(text)
    assert [exc[0] for _, exc in chain] == ["KeyError: 'k'", "ValueError: wrapped"]
    out = decisive_error("exception", text)
    assert "The above exception was the direct cause" in out and out.endswith("ValueError: wrapped")


def test_crash_is_the_signal_and_the_faulting_threads_stack():
    out = decisive_error("crash", recorded("segfault_backend.txt.gz"), signal="SIGSEGV")
    assert lines(out)[0] == "Fatal Python error: Segmentation fault"
    assert lines(out)[2].startswith("Current thread") and "string_at" in lines(out)[3]
    assert 'segfault_backend.py", line 9 in crashy_backend' in out
    assert "reprokit/" not in out and "Thread 0x" not in out
    assert len(lines(out)) <= 15


def test_an_abort_in_a_compiled_kernel_says_what_was_thrown_and_where():
    """inductor's C++ relu planted to throw (examples/relu_bug.py's repro, recorded): std::terminate's line says what
    was thrown, and the stack starts at the generated module's call, though faulthandler marks no thread as current
    (the kernel ran without the GIL) and the module sits in reprokit's compile cache."""
    out = decisive_error("crash", recorded("cpp_kernel_abort.txt.gz"), signal="SIGABRT")
    assert lines(out)[:3] == ["terminate called after throwing an instance of 'int'", "Fatal Python error: Aborted", ""]
    assert lines(out)[3].startswith("Thread 0x") and lines(out)[4].endswith('.py", line 88 in call')
    assert "/compile/" in lines(out)[4] and 'repro.py", line 14 in forward' in out
    assert "reprokit/child/" not in out and len(lines(out)) <= LIMIT


def test_without_a_current_thread_the_one_running_the_generated_module_faulted():
    dump = "\n".join(
        [
            "  what():  index out of range",
            "Fatal Python error: Aborted",
            "",
            "Thread 0x00007f0000000002 (most recent call first):",
            '  File "/usr/lib/python3.11/threading.py", line 327 in wait',
            "",
            "Thread 0x00007f0000000001 (most recent call first):",
            '  File "/tmp/cache/ab/cabcdefghijklmnopqrstuvwxyz0123456789abcdefgh.py", line 40 in call',
            '  File "/home/u/train.py", line 7 in step',
            "",
            "Thread 0x00007f0000000000 (most recent call first):",
            '  File "/home/u/train.py", line 30 in <module>',
        ]
    )
    out = decisive_error("crash", dump, signal="SIGABRT")
    assert lines(out)[:4] == [
        "  what():  index out of range",
        "Fatal Python error: Aborted",
        "",
        "Thread 0x00007f0000000001 (most recent call first):",
    ], out
    assert "threading.py" not in out and "line 30 in <module>" not in out


def test_accuracy_is_the_mismatch_numbers():
    import json

    result = json.loads(recorded("accuracy_result.json"))
    out = decisive_error("accuracy", "", note=result["note"])
    assert "max abs diff 1, max rel diff" in out and "at [0, 15]" in out
    assert "eager 1.35231864, compiled 2.35231876, float64 1.3523186445236206" in out
    assert "error vs float64: compiled 1, eager 0" in out
    test_run = recorded("accuracy_test_repro_output.txt")
    same, line = judge_test(Signature("accuracy"), 1, test_run)
    assert same and line.startswith("AssertionError: output 0: compiled differs from eager, max abs diff 1")


def test_dynamo_error_is_the_exception_with_its_explanation():
    out = decisive_error("exception", recorded("dynamo_unsupported.txt.gz"))
    assert "torch._dynamo.exc.Unsupported: Data-dependent branching" in out
    assert "Explanation: Detected data-dependent branching" in out
    assert 'repro.py", line 9, in <module>' in out and "torch/_dynamo/eval_frame.py" in out
    assert len(lines(out)) <= LIMIT
    v = verdict(
        failing_stage="eager",
        kind="exception",
        signature={"kind": "exception", "exc_type": "Unsupported", "message": "Data-dependent branching"},
    )
    assert triage.title(v) == "[dynamo] Unsupported: Data-dependent branching"
    assert triage.labels(v) == ["oncall: pt2", "module: dynamo", "module: graph breaks"]


def test_triton_compile_error_is_the_kernel_line_its_caret_and_the_reason():
    """Recorded on an H100 (torch 2.11, triton 3.6): a user's Triton kernel that cannot compile under torch.compile."""
    text = recorded("triton_compilation_error.txt.gz")
    out = decisive_error("exception", text)
    assert "torch._inductor.exc.InductorError: CompilationError: at 3:25:" in out
    assert lines(out)[-3:] == [
        "    offs = pid * BLOCK + tl.arange(0, 3)",
        "                         ^",
        "arange's range must be a power of 2",
    ]
    assert "torch/_inductor/runtime/triton_heuristics.py" in out and "triton/compiler/compiler.py" in out
    assert "W1123" not in out and len(lines(out)) <= LIMIT
    assert not machine_paths(portable(out))


def test_generated_triton_module_that_fails_to_import_names_its_syntax_error():
    out = decisive_error("exception", recorded("triton_generated_syntax_error.txt.gz"))
    assert lines(out)[-1].startswith("SyntaxError: invalid syntax (") and "line 25" in lines(out)[-1]
    assert "Set TORCHDYNAMO_VERBOSE" not in out
