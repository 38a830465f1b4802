"""Write repro.py for the smallest failing graph and check, in fresh processes, that it fails the same way."""
from __future__ import annotations

import os
import shutil

from reprokit.data.records import TrialSpec, file_hash
from reprokit.data.rundir import read_json
from reprokit.minify.testcase import write_test_repro
from reprokit.report.render import render_repro


def write_verified_repro(run, runner, v, case, edit, stage, target, accuracy, run_backward, command,
                         strict: bool = False) -> None:
    """Render repro.py, run it twice in fresh processes, and record whether it fails the same way.

    strict: the repro judges accuracy itself, against a float64 reference with no tolerance to spare (the
    graph was minified inside the script, whose own check and tolerance reprokit cannot copy); it is verified
    when it fails that check."""
    parts_out = runner(TrialSpec(mode="repro", stage=stage, case=case, edit=edit.to_dict(), label="repro-parts"))
    parts_path = os.path.join(parts_out.trial_dir, "repro_parts.json")
    if not os.path.exists(parts_path):
        v.repro_verified = False
        v.message = f"could not write repro.py: {parts_out.signature.short()}"
        return
    parts = read_json(parts_path)
    v.nodes = {"original": v.nodes["original"], "minified": parts["nodes"]}
    # Random inputs make the shortest repro; real values only where they matter (or random ones fail to repro).
    attempts = (True,) if accuracy or parts["attributes"] else (False, True)
    for use_saved in attempts:
        text = render_repro(parts, v, stage=stage, target=target, accuracy=accuracy, backward=run_backward,
                            use_saved=use_saved, command=command, original_nodes=v.nodes["original"], strict=strict)
        run.write_text("repro.py", text)
        if use_saved:
            shutil.copyfile(os.path.join(parts_out.trial_dir, "repro_inputs.pt"), run.file("repro_inputs.pt"))
        elif os.path.exists(run.file("repro_inputs.pt")):
            os.unlink(run.file("repro_inputs.pt"))
        checks = runner.map([TrialSpec(mode="script", stage="user", script=run.file("repro.py"), cwd=run.path,
                                       check_accuracy=accuracy and not strict, attempt=i, label=f"verify-repro-{i}",
                                       script_hash=file_hash(run.file("repro.py")), fresh_interpreter=True)
                          for i in range(2)])
        # An accuracy repro reports through its own check (an AssertionError) or the router's: the same failure.
        same = [c is not None and (target.matches(c.signature) or (strict or accuracy) and _fails_its_check(c.signature))
                for c in checks]
        v.repro = run.file("repro.py")
        v.repro_verified = all(same)
        v.repro_signature = checks[0].signature.to_dict() if checks[0] else None
        if v.repro_verified:
            # issue #17: the same repro as a failing PyTorch-style test (rendered with the accuracy check).
            write_test_repro(run, v, stage, target, run_backward, lambda: render_repro(
                parts, v, stage=stage, target=target, accuracy=True, backward=run_backward, use_saved=use_saved,
                command=command, original_nodes=v.nodes["original"], strict=strict), timeout=runner.timeout)
            return


def _fails_its_check(signature) -> bool:
    """A strict repro's own verdict: its accuracy assertion (or the router's accuracy check) failed."""
    return signature.kind == "accuracy" or (signature.kind == "exception" and signature.exc_type == "AssertionError")
