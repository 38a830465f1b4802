"""AOTInductor failures end to end (issue #20): the planted compile error and wrong result minified to a verified
repro.py that exports and AOT-compiles again, a genuine AOTI issue from PyTorch's tracker (pytorch#153992), and the
run-time switches of AOTI that name what its loader does not (the kernel, the input it was not compiled for).

One bisect run per case (module-scoped), several assertions on it: the suite's time stays small.
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from reprokit.export.aoti_debug import unfinished_kernel
from reprokit.export.minify import input_expr
from tests.opt_in import opt_in

CASES = pathlib.Path(__file__).parent / "export_cases"
REPO = pathlib.Path(__file__).parent.parent
FAST = ("--no-configs", "--no-subsystems", "--no-pack")


def bisect_case(tmp_path_factory, case: str, *args) -> dict:
    """`reprokit bisect CASE --json` in a fresh copy of the cases; the verdict, with the work folder."""
    work = tmp_path_factory.mktemp(case[:-3]) / "project"
    shutil.copytree(CASES, work, ignore=shutil.ignore_patterns("__pycache__"))
    cmd = [sys.executable, "-m", "reprokit", "bisect", case, "--json", "-o", str(work / "artifacts"), *args]
    p = subprocess.run(
        cmd, cwd=work, capture_output=True, text=True, timeout=1500, env={**os.environ, "PYTHONPATH": str(REPO)}
    )
    assert p.returncode == 0, p.stderr[-3000:]
    return {**json.loads(p.stdout), "work": str(work)}


@pytest.fixture(scope="module")
def compile_error(tmp_path_factory):
    return bisect_case(tmp_path_factory, "aoti_compile_error.py", *FAST)


@pytest.fixture(scope="module")
def accuracy(tmp_path_factory):
    return bisect_case(tmp_path_factory, "aoti_accuracy.py", *FAST)


@pytest.fixture(scope="module")
def sliced(tmp_path_factory):
    return bisect_case(tmp_path_factory, "aoti_sliced_example_input.py", *FAST)


def check_export_repro(data: dict, config_line: str) -> str:
    """repro.py: the one relu node left, exported and AOT-compiled again, verified in a fresh interpreter."""
    assert data["repro_verified"] is True and data["repro_kind"] == "export_graph", data["repro_attempts"]
    assert data["nodes"] == {"original": 3, "minified": 1}
    text = pathlib.Path(data["repro"]).read_text()
    assert "relu = torch.ops.aten.relu.default(" in text
    assert "program = torch.export.export(model, args)" in text and "aoti_compile_and_package(program)" in text
    assert config_line in text
    assert data["work"] not in text  # no absolute paths: it runs anywhere
    return text


@pytest.mark.slow
@opt_in(
    "89 s in CI at 988ae24): the AOTI ladder to a verified export-graph repro runs in CI through "
    "test_aoti_accuracy_stage_and_verified_repro and the genuine #153992; an inductor C++ compile error through "
    "b_cumsum_zero_dim_lowering and test_compile_errors"
)
def test_aoti_compile_error_stage_message_and_verified_repro(compile_error):
    """The planted C++ compile error: aoti_compile (export and the decomposed program match eager), g++'s output
    reduced to its one error and the generated line, the program cut to its relu node."""
    data = compile_error
    assert (data["failing_stage"], data["last_passing_stage"]) == ("aoti_compile", "decompose")
    assert [(r["stage"], r["kind"] == "pass") for r in data["ladder"]] == [
        ("export", True),
        ("decompose", True),
        ("aoti", False),
    ]
    # a compile error ends the script before it loads the package
    assert data["compile_args"]["entries"] == ["torch.export.export", "aoti_compile_and_package"]
    assert data["message"].startswith("C++ compile error at "), data["message"]
    assert data["message"].endswith("| auto tmp1 = compile error!;"), data["message"]
    check_export_repro(data, "torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = 'compile_error'")
    assert data["repro_signature"]["exc_type"] == data["signature"]["exc_type"]


@pytest.mark.slow
def test_aoti_accuracy_stage_and_verified_repro(accuracy):
    """The planted wrong result: aoti_run, the package loaded, the repro's own check (AOTI against eager) fails."""
    data = accuracy
    assert (data["failing_stage"], data["last_passing_stage"]) == ("aoti_run", "decompose")
    assert [(r["stage"], r["kind"] == "pass") for r in data["ladder"]] == [
        ("export", True),
        ("decompose", True),
        ("aoti", False),
    ]
    assert data["compile_args"]["entries"] == ["torch.export.export", "aoti_compile_and_package", "aoti_load_package"]
    assert data["aoti_kernel"] is None  # a wrong value names no kernel to look for: the switch is not run
    check_export_repro(data, "torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = 'accuracy'")
    assert data["repro_signature"]["exc_type"] == "AssertionError", data["repro_signature"]


@pytest.mark.slow
@opt_in(
    "241 s in the suite at 110e4fd, CI over its 45 minutes): an AOTInductor accuracy failure to a "
    "verified graph repro is covered by test_aoti_accuracy_stage_and_verified_repro"
)
def test_aoti_accuracy_checked_by_sys_exit_gets_the_same_graph_repro(tmp_path_factory):
    """Issue #32: the script's own check calls sys.exit(1); the cut program's raises from assert_close. One wrong
    result either way, so the program is cut to its relu node (no fall-back to source reduction)."""
    data = bisect_case(tmp_path_factory, "aoti_accuracy_exit.py", *FAST)
    assert (data["failing_stage"], data["last_passing_stage"]) == ("aoti_run", "decompose")
    assert data["kind"] == "exit", data["signature"]
    check_export_repro(data, "torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = 'accuracy'")
    assert [a["kind"] for a in data["repro_attempts"]] == ["export_graph"], data["repro_attempts"]


@pytest.mark.slow
@opt_in(
    "7.5 min on a loaded 2-core machine): the crash it guards (no cut written, None written as "
    "repro.py) is fixed in export/minify; export source reduction runs in CI through "
    "test_export_findings.py's test_minify_reduces_the_source_of_an_export_failure"
)
def test_a_program_whose_last_value_has_a_data_dependent_size_is_reduced_at_source(tmp_path_factory):
    """relu of a boolean-mask selection: no cut of the exported program can be written (its last value's size has
    no hint to make an input from). The graph attempt says so, and the script is reduced at source instead; before,
    the minify raised TypeError writing None as repro.py (found by mypy, issue #44)."""
    data = bisect_case(tmp_path_factory, "aoti_unbacked_last_value.py", *FAST)
    assert (data["failing_stage"], data["last_passing_stage"]) == ("aoti_compile", "decompose")
    assert data["repro_attempts"] == [
        {
            "kind": "export_graph",
            "result": "no cut of the program can be written: a value it needs has no shape to make an input from",
        },
        {"kind": "source", "result": "verified"},
    ]
    assert (data["repro_kind"], data["repro_verified"]) == ("source", True)


@pytest.mark.slow
def test_genuine_sliced_example_input_pytorch_153992(sliced):
    """pytorch#153992: exported from a slice, the package silently answers wrong for a newly created input of
    the same shape. Stage aoti_run; AOTI's input checks, switched on, name the stride it was compiled for; the
    repro keeps the example's layout and calls the package on a contiguous copy."""
    data = sliced
    assert (data["failing_stage"], data["last_passing_stage"]) == ("aoti_run", "decompose")
    assert data["message"].startswith(
        "the package was called with an input unlike the example it was compiled "
        "for, and checks none by default: AOTI_RUNTIME_CHECK_INPUTS=1 refuses it "
        "(input_handles[0]: unmatched stride value at 0, expected: 600, but got: "
        "300)"
    ), data["message"]
    assert data["repro_verified"] is True, data["repro_attempts"]
    assert data["nodes"]["minified"] < data["nodes"]["original"]
    text = pathlib.Path(data["repro"]).read_text()
    assert ".as_strided((2, 3, 10, 10), (600, 100, 10, 1))" in text
    assert "fresh = [a.contiguous() for a in args]" in text


PRINTED = """[ before_launch: cpp_fused_0 ]
[ after_launch: cpp_fused_0 ]
[ before_launch: aoti_torch_cpu_addmm_out ]
[ after_launch: aoti_torch_cpu_addmm_out ]
[ before_launch: cpp_fused_relu_sigmoid_1 ]
Unknown exception occurred.
"""


def test_unfinished_kernel_is_the_one_launched_and_never_finished():
    assert unfinished_kernel(PRINTED) == (
        "cpp_fused_relu_sigmoid_1",
        ["cpp_fused_0", "aoti_torch_cpu_addmm_out", "cpp_fused_relu_sigmoid_1"],
    )
    assert unfinished_kernel(PRINTED.split("[ before_launch: cpp_fused_relu")[0]) == (
        None,
        ["cpp_fused_0", "aoti_torch_cpu_addmm_out"],
    )


def test_input_expr_keeps_a_slices_layout():
    assert input_expr({"shape": [2, 3], "dtype": "torch.float32"}) == "torch.randn((2, 3), dtype=torch.float32)"
    assert input_expr({"shape": [2, 3], "dtype": "torch.float32", "stride": [6, 1]}) == (
        "torch.randn(9, dtype=torch.float32).as_strided((2, 3), (6, 1))"
    )


def test_input_expr_makes_a_cuda_programs_inputs_on_cuda():
    assert input_expr({"shape": [4, 8], "dtype": "torch.float32", "device": "cuda"}) == (
        "torch.randn((4, 8), dtype=torch.float32, device='cuda')"
    )


# compute-sanitizer --tool memcheck on tests/gpu_cases/aoti_relu_assert.py (CUDA 13, H100), its first report:
SANITIZED_ASSERT = """========= COMPUTE-SANITIZER
========= Warp assert
=========     at __assertfail+0x19a0
=========     by thread (0,0,0) in block (0,0,0)
=========         Device Frame: __assertfail+0x1930
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: launch [0x1cac] in __triton_launcher.cpython-312-x86_64-linux-gnu.so
"""
# An out-of-bounds store as memcheck reports one (its manual's memcheck_demo; the kernel renamed).
SANITIZED_WRITE = """========= Invalid __global__ write of size 4 bytes
=========     at triton_poi_fused_relu_0+0x1b0 in /tmp/cq.py:18
=========     by thread (0,0,0) in block (0,0,0)
"""


def test_sanitizer_report_names_the_kernel_it_saw_and_not_cudas_assert():
    from reprokit.data.records import TrialSpec
    from reprokit.trial.launch import child_command
    from reprokit.trial.sanitizer import SANITIZER_ENV, sanitizer_report

    assert sanitizer_report(SANITIZED_ASSERT, "t") == {"error": "Warp assert", "kernel": None, "trial": "t"}
    assert sanitizer_report(SANITIZED_WRITE, "t") == {
        "error": "Invalid __global__ write of size 4 bytes",
        "kernel": "triton_poi_fused_relu_0",
        "trial": "t",
    }
    assert sanitizer_report("ok\n", "t") is None
    spec = TrialSpec(mode="script", stage="user", env={SANITIZER_ENV: "/cuda/bin/compute-sanitizer"})
    assert child_command(spec, "s.json", "d", "py") == [
        "/cuda/bin/compute-sanitizer",
        "--tool",
        "memcheck",
        "py",
        "-m",
        "reprokit.child.main",
        "s.json",
        "d",
    ]


def test_issue_md_says_a_cuda_fault_of_aotis_compile_named_no_kernel():
    from reprokit.data.verdict import Verdict
    from reprokit.report.issue_notes import isolated_lines

    fault = {"fault": "device-side assert triggered", "kernel": None, "launch_blocking": True}
    assert isolated_lines(
        Verdict.from_dict(dict(script="s.py", argv=[], cuda_fault=fault, repro_kind="export_graph")), []
    ) == [
        "CUDA fault: device-side assert triggered, named by no kernel; every trial after the original ran with "
        "`CUDA_LAUNCH_BLOCKING=1`"
    ]


def test_issue_md_says_how_a_kernel_the_fault_did_not_surface_in_was_named():
    from reprokit.data.verdict import Verdict
    from reprokit.report.issue_notes import isolated_lines

    by_message = {
        "fault": "device-side assert triggered",
        "kernel": "triton_poi_fused_addmm_relu_sigmoid_0",
        "named_by": "message",
        "launch_blocking": True,
    }
    assert isolated_lines(
        Verdict.from_dict(dict(script="s.py", argv=[], cuda_fault=by_message, repro_kind="export_graph")), []
    ) == [
        "CUDA fault: device-side assert triggered in kernel `triton_poi_fused_addmm_relu_sigmoid_0`; every trial "
        "after the original ran with `CUDA_LAUNCH_BLOCKING=1`; it surfaced in no kernel, which is named by the "
        "message its assert printed, found in that kernel's generated source"
    ]
    by_sanitizer = {
        "fault": "an illegal memory access was encountered",
        "kernel": "scatter_far",
        "named_by": "sanitizer",
        "launch_blocking": True,
        "sanitizer": {"error": "Invalid __global__ write of size 4 bytes", "kernel": "scatter_far"},
    }
    assert isolated_lines(
        Verdict.from_dict(dict(script="s.py", argv=[], cuda_fault=by_sanitizer, repro_kind="graph")), []
    ) == [
        "CUDA fault: an illegal memory access was encountered in kernel `scatter_far`; every trial after the "
        "original ran with `CUDA_LAUNCH_BLOCKING=1`; it surfaced in no kernel, which compute-sanitizer's memcheck "
        "named (Invalid __global__ write of size 4 bytes) (repro.py sets it too)"
    ]


def test_only_a_crash_without_a_kernel_name_asks_for_one():
    from reprokit.data.records import Outcome
    from reprokit.data.signature import Signature
    from reprokit.export.aoti_debug import names_no_kernel

    def outcome(kind, exc, message):
        return Outcome(kind=kind, signature=Signature(kind, exc, message), seconds=1.0)

    assert names_no_kernel(outcome("exception", "RuntimeError", "Unknown exception"))
    assert not names_no_kernel(outcome("exception", "AssertionError", "Tensor-likes are not close!"))
    assert not names_no_kernel(outcome("accuracy", None, "aoti_run: mismatch"))
    assert not names_no_kernel(outcome("exception", "RuntimeError", "failed in cpp_fused_relu_1"))


@pytest.mark.slow
def test_genuine_decompose_failure_pytorch_180354(tmp_path_factory):
    """pytorch#180354: torch.cond whose branch creates a tensor exports and runs, run_decompositions() raises.
    torch.cond, run eagerly, compiles its branches itself: that compile is torch's, not the script's, so the
    export stage passes and the failure is placed at decompose."""
    data = bisect_case(tmp_path_factory, "decompose_cond_branch_tensor.py", *FAST)
    assert (data["failing_stage"], data["last_passing_stage"]) == ("decompose", "export"), data["ladder"]
    assert [(r["stage"], r["kind"] == "pass", r["same"]) for r in data["ladder"]] == [
        ("export", True, False),
        ("decompose", False, True),
        ("aoti", False, True),
    ]
    assert data["signature"]["message"].startswith("Attempting to use FunctionalTensor on its own")


def test_a_higher_order_ops_own_compile_is_told_apart():
    from reprokit import compat
    from reprokit.child.router import from_higher_order_op

    def frame_in(path):
        return eval(compile("sys._getframe(0)", path, "eval"), {"sys": sys})

    assert from_higher_order_op(frame_in(os.path.join(compat.TORCH_ROOT, "_higher_order_ops", "utils.py")))
    assert not from_higher_order_op(frame_in(os.path.join(compat.TORCH_ROOT, "nn", "modules", "module.py")))
    assert not from_higher_order_op(frame_in(str(CASES / "decompose_cond_branch_tensor.py")))


# What an H200 (torch 2.11, CUDA_LAUNCH_BLOCKING=1) printed for tests/gpu_cases/aoti_relu_assert.py: the assert sits
# in a helper, so CUDA names the function "unknown", and the fault surfaced in set_rng_state, in no kernel. The
# structured trace (TORCH_TRACE) holds the kernels' sources, tab-indented.
ASSERT_PRINTED = (
    "/opt/torch/.venv/lib/python3.12/site-packages/torch/_inductor/runtime/triton_helpers.py:248: unknown: block: "
    "[0,0,0], thread: [0,0,0] Assertion `injected assert fail` failed.\n"
    "torch._inductor.exc.InductorError: AcceleratorError: CUDA error: device-side assert triggered\n"
)
AOTI_TRACE = """\tdef triton_poi_fused_0(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
\t    tmp0 = tl.load(in_ptr0 + (x0), xmask)
\t''', device_str='cuda')
\tdef triton_poi_fused_addmm_relu_sigmoid_1(in_out_ptr0, xnumel, XBLOCK : tl.constexpr):
\t    tmp31 = tmp29 + tmp30
\t    tmp32 = triton_helpers.device_assert_then(tmp31 == 0, "injected assert fail", tmp31)
\t    tmp33 = tl.sigmoid(tmp32)
"""
# torch.compile of x[i] with an index out of range, TORCH_LOGS=output_code (same machine): the printed assert and
# the kernel as the output-code log shows it.
INDEX_PRINTED = (
    "/tmp/ind2/pu/cpux.py:31: unknown: block: [0,0,0], thread: [4,0,0] Assertion `index out of bounds: "
    "0 <= tmp4 < 8` failed.\n"
)
INDEX_LOG = """V1125 02:50:36.739000 549 torch/_inductor/graph.py:2552] [0/0] [__output_code] @triton.jit
V1125 02:50:36.739000 549 torch/_inductor/graph.py:2552] [0/0] [__output_code] def triton_poi_fused_index_mul_relu_0(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK : tl.constexpr):
V1125 02:50:36.739000 549 torch/_inductor/graph.py:2552] [0/0] [__output_code]     tl.device_assert(((0 <= tmp4) & (tmp4 < 8)) | ~(xmask), "index out of bounds: 0 <= tmp4 < 8")
V1125 02:50:36.739000 549 torch/_inductor/graph.py:2552] [0/0] [__output_code] def triton_poi_fused_mul_1(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
"""


def test_a_device_assert_is_named_by_the_kernel_whose_source_holds_its_message():
    from reprokit.bisect.cuda import asserting_kernel

    assert asserting_kernel(ASSERT_PRINTED, ASSERT_PRINTED + AOTI_TRACE) == "triton_poi_fused_addmm_relu_sigmoid_1"
    assert asserting_kernel(INDEX_PRINTED, INDEX_LOG) == "triton_poi_fused_index_mul_relu_0"
    # no assert printed, no source holding it, or two kernels holding it: no name rather than a guess
    assert asserting_kernel("RuntimeError: CUDA error: an illegal memory access was encountered", AOTI_TRACE) is None
    assert asserting_kernel(ASSERT_PRINTED, INDEX_LOG) is None
    assert asserting_kernel(INDEX_PRINTED, INDEX_LOG + INDEX_LOG.replace("_index_mul_relu_0", "_index_2")) is None


# The traceback of tests/gpu_cases/triton_relu.py-style faults under CUDA_LAUNCH_BLOCKING=1 (H200, torch 2.11): the
# wrapper's launch line names the kernel; the output-code log in stderr names every kernel, and is not read for it.
LAUNCH_TRACEBACK = """  File "/opt/torch/.venv/lib/python3.12/site-packages/torch/_inductor/utils.py", line 3401, in run
    out = model(new_inputs)
  File "/tmp/ind2/nc/cnc7emnycigylm5ws6s7ibtt7khloemw6prp35fx7ga6ztijzvqw.py", line 113, in call
    triton_poi_fused_index_mul_relu_0.run(arg1_1, arg0_1, buf0, 8, stream=stream0)
  File "/opt/torch/.venv/lib/python3.12/site-packages/torch/_inductor/runtime/triton_heuristics.py", line 1495, in run
    result = launcher(
  File "/opt/torch/.venv/lib/python3.12/site-packages/torch/_inductor/runtime/static_triton_launcher.py", line 291, in run
    self.C_impl._launch_kernel(
RuntimeError: CUDA driver error: device-side assert triggered
"""


def test_the_launch_a_synchronous_fault_was_raised_at_is_read_from_the_wrappers_frame_only():
    from reprokit.bisect.cuda import launched_kernel

    assert launched_kernel(LAUNCH_TRACEBACK) == "triton_poi_fused_index_mul_relu_0"
    # a kernel the script launched itself (a custom op's Triton call): Triton's own `kernel.run(` is no wrapper's
    own = (
        '  File "/tmp/project/ima.py", line 20, in store_far\n    scatter_far[(1,)](y, y.numel(), BLOCK=64)\n'
        '  File "/x/triton/runtime/jit.py", line 733, in run\n    kernel.run(grid_0, grid_1, grid_2, stream)\n'
    )
    assert launched_kernel(own) is None
    assert launched_kernel(INDEX_LOG) is None  # the output-code log names kernels, launches none
