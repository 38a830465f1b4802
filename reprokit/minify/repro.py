"""Write repro.py for the smallest failing graph and check, in fresh processes, that it fails the same way.

Its inputs are synthetic by default (matched on the recorded shapes, dtypes, strides and value statistics); real
values only when synthetic ones do not reproduce: inline when few, else from repro_inputs.pt (which the pack
attaches only with --include-data). The repro is scrubbed as the pack would scrub it, and verified as scrubbed."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import os
import shutil
from dataclasses import dataclass

from reprokit.data.kinds import OutcomeKind
from reprokit.data.phases import Isolation, Repro
from reprokit.data.records import TrialSpec, file_hash
from reprokit.data.run_facts import RunFacts
from reprokit.data.rundir import read_json
from reprokit.data.signature import MISMATCH, Signature
from reprokit.fx.graphcase import Edit
from reprokit.minify.alone import HANG_GRACE, alone_signature, failed, keep_run, reported_hang, run_alone
from reprokit.minify.testcase import discard_test_repro, judge_test, write_test_repro
from reprokit.report.redact import Redactor
from reprokit.report.render import render_repro

# How repro.py gets its inputs, in the order tried: (name, use_saved, inline).
INPUT_MODES = (("synthetic", False, False), ("inline", False, True), ("file", True, False))


@dataclass(frozen=True)
class ReproJob:
    """What write_verified_repro renders and checks: a graph cut (case, edit) of the isolation's failing graph, the
    stage it compiles with, how it is judged (target, accuracy, strict), and the run's facts (the command named in
    its header, the interpreter it runs alone with, a captured hang's phase).

    strict: the repro judges accuracy itself, against a float64 reference with no tolerance to spare (the graph
    was minified inside the script, whose own check and tolerance reprokit cannot copy); it is verified when it
    fails that check."""

    isolation: Isolation
    case: str
    edit: Edit
    stage: str
    target: Signature
    accuracy: bool
    run_backward: bool
    facts: RunFacts
    nodes_before: int
    strict: bool = False


def write_verified_repro(run, runner, job: ReproJob) -> Repro:
    """Render repro.py, run it in fresh processes (test_repro.py beside it): the written repro, verified when it
    fails the same way (its kind, attempts, trials and seconds are the minifier's to fill in)."""
    parts_out = runner(
        TrialSpec(mode="repro", stage=job.stage, case=job.case, edit=job.edit.to_dict(), label="repro-parts")
    )
    parts_path = os.path.join(parts_out.trial_dir, "repro_parts.json")
    if not os.path.exists(parts_path):
        return Repro(verified=False, message=f"could not write repro.py: {parts_out.signature.short()}")
    parts = read_json(parts_path)
    size = {"nodes_before": job.nodes_before, "nodes_after": parts["nodes"]}
    input_bytes = int(parts.get("input_bytes") or 0)
    redactor = Redactor.for_run(run.path, argv=list(job.isolation.argv or ()))
    render = functools.partial(
        render_repro,
        parts,
        job.isolation,
        stage=job.stage,
        target=job.target,
        backward=job.run_backward,
        command=job.facts.command,
        original_nodes=job.nodes_before,
        strict=job.strict,
        hang=_hang_watch(runner, job),
    )
    synthetic_gave = None
    written = Repro()
    for name, use_saved, inline in INPUT_MODES:
        if inline and not parts.get("inline"):
            continue
        text = render(accuracy=job.accuracy, use_saved=use_saved, inline=inline)
        _place_inputs(run, parts_out.trial_dir, use_saved)
        # test_repro.py is rendered from the same parts and run beside repro.py's check: when the repro verifies,
        # its run is already done (the example's repro phase 17.3 s -> about 9 s; one fresh interpreter fewer).
        test_render = functools.partial(render, accuracy=True, use_saved=use_saved, inline=inline)
        first, written, tested = _verify_scrubbed(run, runner, job, redactor, text, test_render)
        if name == "synthetic":
            synthetic_gave = first
        if written.verified:
            path, seconds, verified, failure = tested
            # issue #17: the same repro as a failing PyTorch-style test (rendered with the accuracy check).
            return dataclasses.replace(
                written,
                **size,
                input_bytes=input_bytes,
                inputs=name,
                inputs_note=_why_real_data(name, synthetic_gave, input_bytes),
                test_repro=path,
                test_repro_seconds=seconds,
                test_repro_verified=verified,
                test_repro_failure=failure,
            )
        discard_test_repro(run)
    return dataclasses.replace(
        written,
        **size,
        input_bytes=input_bytes,
        inputs=None,
        inputs_note="no input mode reproduced the failure (synthetic, then the real values)",
    )


def _verify_scrubbed(run, runner, job: ReproJob, redactor, text, test_render):
    """Verify repro.py as written and, when the pack's scrub changes it and it verified, verify the scrubbed text
    too (test_repro.py beside the last check). Returns the first run's signature of the text as written, the
    written repro and test_repro.py's run."""
    scrubbed = redactor.scrub(text, "repro.py")
    # The pack scrubs repro.py: when that changes it, the scrubbed file is the one verified (and packed).
    changed = scrubbed != text
    test = (job.stage, job.run_backward, test_render)
    first, written, tested = _write_and_verify(run, runner, text, job, test=None if changed else test)
    if written.verified and changed:
        _, written, tested = _write_and_verify(run, runner, scrubbed, job, test=test)
    return first, dataclasses.replace(written, scrubbed=changed), tested


def _place_inputs(run, trial_dir: str, use_saved: bool) -> None:
    """repro_inputs.pt beside repro.py for the real-values attempt, and nowhere otherwise."""
    if use_saved:
        shutil.copyfile(os.path.join(trial_dir, "repro_inputs.pt"), run.file("repro_inputs.pt"))
        os.chmod(run.file("repro_inputs.pt"), 0o600)
    elif os.path.exists(run.file("repro_inputs.pt")):
        os.unlink(run.file("repro_inputs.pt"))


def _write_and_verify(run, runner, text, job: ReproJob, test=None):
    """Write repro.py and run it as the user will (minify/alone.py: one run; two for a flaky failure), beside
    test_repro.py's run when `test` is (stage, backward, render); verified when each run failed the same way: an
    accuracy repro by its own check, a crash or an exception also by the trial's same-failure rules. Returns the
    first run's signature, the written repro and test_repro.py's (path, seconds, verified, failure), or None."""
    run.write_text("repro.py", text)
    target, accuracy, strict, v, python = job.target, job.accuracy, job.strict, job.isolation, job.facts.python
    runs = 2 if v.flaky else 1
    # judged by its own report: a trial of it would wait out the same limit again
    hang = target.kind == OutcomeKind.HANG
    judged_alone = accuracy or strict or target.kind == OutcomeKind.ACCURACY or hang
    limit = (max(runner.timeout, (v.hang_limit or {}).get("seconds") or 0.0) + HANG_GRACE) if hang else runner.timeout
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        testing = (
            pool.submit(write_test_repro, run, v, test[0], target, test[1], test[2], python, timeout=limit)
            if test
            else None
        )
        try:
            alone = [run_alone(run, "repro.py", limit, python) for _ in range(runs)]
            # A crash's same-failure rules read what the trial's classifier saw (root cause, frame, kernel).
            checks = None if judged_alone else runner.map(_trial_specs(run, runs))
            tested = testing.result() if testing else None
        except BaseException:
            runner.cancel()  # Ctrl-C while test_repro.py runs: kill it, or leaving `with` waits it out (12-15 s)
            raise
    said = [alone_signature(code, output, judge_test(target, code, output)[1]) for code, output, _ in alone]
    if hang:
        same = [reported_hang(code, output) for code, output, _ in alone]
    elif judged_alone:
        same = [_fails_its_check(s) for s in said]
        # Its own check's AssertionError is a comparison that found tensors differ: one wrong result, as a trial
        # of the repro (versions/check.py) reports it.
        said = [
            dataclasses.replace(s, cause=MISMATCH) if ok and s.kind == OutcomeKind.EXCEPTION else s
            for s, ok in zip(said, same)
        ]
    else:
        same = [
            failed(a[0], a[1]) and c is not None and target.matches(c.signature) for a, c in zip(alone, checks or [])
        ]
    keep_run(run, alone[0][0], alone[0][1], said[0])
    written = Repro(path=run.file("repro.py"), verified=all(same), fresh_runs=runs, signature=said[0].to_dict())
    return said[0], written, tested


def _hang_watch(runner, job: ReproJob) -> dict | None:
    """A hang's repro.py watchdog: the verdict's hang limit (else the trials' own), and whether it hung compiling
    or running (the capture's phase; a bisect in place finds hangs in the compile)."""
    if job.target.kind != OutcomeKind.HANG:
        return None
    limit = (job.isolation.hang_limit or {}).get("seconds") or runner.timeout
    phase = job.facts.capture_phase
    return {"limit": f"{limit:g}", "doing": "running" if phase in ("run", "backward") else "compiling"}


def _trial_specs(run, runs: int) -> list:
    """repro.py as trials (the router's classifier names the failure), for a crash's same-failure rules."""
    return [
        TrialSpec(
            mode="script",
            stage="user",
            script=run.file("repro.py"),
            cwd=run.path,
            attempt=i,
            label=f"verify-repro-{i}",
            script_hash=file_hash(run.file("repro.py")),
            fresh_interpreter=True,
        )
        for i in range(runs)
    ]


def _why_real_data(mode: str, synthetic_gave, nbytes: int) -> str:
    """Why repro.py carries real values, in ISSUE.md's words ("" when its inputs are synthetic)."""
    if mode == "synthetic":
        return ""
    gave = (
        "passed"
        if synthetic_gave is None or synthetic_gave.kind == OutcomeKind.PASS
        else f"failed differently ({synthetic_gave.short()})"
    )
    where = "written into the repro" if mode == "inline" else f"in a data file of {nbytes} bytes the repro loads"
    return (
        f"the failure needs the real input values ({where}): with synthetic inputs matched on shape, dtype, "
        f"stride, range and special values (NaN/inf/zero) the repro {gave}"
    )


def _fails_its_check(signature) -> bool:
    """A strict repro's own verdict: its accuracy assertion (or the router's accuracy check) failed."""
    return signature.kind == OutcomeKind.ACCURACY or (
        signature.kind == OutcomeKind.EXCEPTION and signature.exc_type == "AssertionError"
    )
