"""The Bisector with the export ladder handed in (the app's `deployment`): a failure inside torch.export or
AOTInductor is isolated along the deployment path, from a table; so is a CUDA fault, asked again with synchronous
launches first."""

import os

from reprokit.bisect.bisector import Bisector
from reprokit.data.records import Signature
from reprokit.export.ladder import isolate_deployment
from unit.fakes import Events, FakeRunner, failed, options, passed, trial_folder

FAULT = Signature(kind="cuda_fault", exc_type="AcceleratorError", message="CUDA error: device-side assert triggered")
GUARD = Signature(kind="exception", exc_type="RuntimeError", message="Guard failed: x.size()[0] == 8")


def deployed(answer) -> Bisector:
    opts = options(configs=False, subsystems=False)
    return Bisector(opts, FakeRunner(answer), Events(), deployment=isolate_deployment)


def folder(root, name: str, export: dict | None = None, stderr: str = "") -> str:
    path = trial_folder(str(root), name, {"export": export} if export else {})
    with open(os.path.join(path, "stderr.txt"), "w") as f:
        f.write(stderr)
    return path


def test_a_device_assert_in_the_aoti_package_names_its_kernel_and_keeps_the_fault(tmp_path):
    at_run = {"entries": ["aoti_load_package"], "phase": "aoti_run", "last_phase": "aoti_run"}
    printed = "[ before_launch: triton_poi_fused_lt_0 ]\n[ after_launch: triton_poi_fused_lt_0 ]\n"
    printed += "[ before_launch: triton_poi_fused_index_1 ]\n"
    table = {
        "baseline-no-compile": passed(trial_dir=folder(tmp_path, "none")),
        "original": failed(FAULT, compiled=True, graphs=1, trial_dir=folder(tmp_path, "original", at_run)),
        "original-launch-blocking": failed(FAULT, trial_dir=folder(tmp_path, "blocking", at_run)),
        "stage-export": passed(trial_dir=folder(tmp_path, "export", {"phase": None, "nodes": 7})),
        "stage-decompose": passed(trial_dir=folder(tmp_path, "decompose", {"phase": None, "nodes": 7})),
        "aoti-kernel-names": failed(FAULT, trial_dir=folder(tmp_path, "names", stderr=printed)),
    }
    isolation = deployed(lambda spec: table.get(spec.label) or passed()).isolate()
    assert (isolation.failing_stage, isolation.last_passing_stage) == ("aoti_run", "decompose")
    assert [row["stage"] for row in isolation.ladder] == ["export", "decompose", "aoti"]
    assert isolation.compile_args == {"entries": ["aoti_load_package"]}
    assert isolation.cuda_fault is not None and isolation.aoti_kernel is not None
    assert isolation.cuda_fault["kernel"] == isolation.aoti_kernel["kernel"] == "triton_poi_fused_index_1"
    assert (isolation.cuda_fault["same"], isolation.cuda_fault["trial"]) == (
        True,
        table["original-launch-blocking"].trial_dir,
    )
    assert isolation.message.startswith("AOTInductor's package failed inside kernel triton_poi_fused_index_1")
    assert isolation.decisive_trials == {
        "first_failing": table["original-launch-blocking"].trial_dir,
        "last_passing": table["stage-decompose"].trial_dir,
    }


def test_an_export_guard_refusing_a_later_call_is_the_export_stages_failure(tmp_path):
    refused = {"phase": "export_run", "last_phase": "export_run", "nodes": 5}
    table = {
        "baseline-no-compile": passed(trial_dir=folder(tmp_path, "none")),
        "original": failed(GUARD, compiled=True, trial_dir=folder(tmp_path, "original", {"entries": ["export"]})),
        "stage-export": failed(GUARD, trial_dir=folder(tmp_path, "export", refused)),
        "stage-decompose": failed(GUARD, trial_dir=folder(tmp_path, "decompose", refused)),
    }
    isolation = deployed(lambda spec: table.get(spec.label) or passed()).isolate()
    assert (isolation.failing_stage, isolation.last_passing_stage, isolation.graph_count) == ("export", "none", 5)
    assert isolation.message.startswith("the exported program fails on a call the script makes (")
    assert isolation.decisive_trials == {
        "first_failing": table["stage-export"].trial_dir,
        "last_passing": table["baseline-no-compile"].trial_dir,
    }
    assert isolation.cuda_fault is None and isolation.deferred == ()
