"""Each step of the bisector returns the frozen Isolation with what it found: the rules, one at a time, without a
search around them."""

import dataclasses

from reprokit.bisect.bisector import SLOW_STAGE_MEANING, deferring, user_backend_fails
from reprokit.bisect.findings import memory_finding, pieces_finding, say
from reprokit.data.phases import Isolation
from reprokit.data.records import Signature, StageResult
from reprokit.export.ladder import narrow_export
from unit.fakes import OTHER, bisector, failed, hung, passed, session, trial_folder

SO_FAR = Isolation(script="train.py", user_backend="my_backend", message="graph 0 of 2")


def rung(stage: str, kind: str = "pass") -> StageResult:
    return StageResult(stage=stage, kind=kind, summary=kind, seconds=1.0, same=False)


def test_every_stock_stage_passing_names_the_users_backend_after_the_last_stage():
    found = user_backend_fails(SO_FAR, [rung("aot_eager"), rung("inductor")], "my_backend")
    assert (found.failing_stage, found.last_passing_stage) == ("my_backend", "inductor")
    assert found.message == "every stock stage passes; the user's backend 'my_backend' fails; graph 0 of 2"


def test_a_last_stage_that_failed_another_way_is_no_last_passing_stage():
    found = user_backend_fails(SO_FAR, [rung("aot_eager"), rung("inductor", "exception")], None)
    assert (found.failing_stage, found.last_passing_stage) == ("user", None)


def test_a_step_returns_a_new_isolation_and_leaves_the_one_it_was_given():
    found = deferring(say(SO_FAR, "the crossref stage fails first"), "confirm", "configs")
    assert found.message == "graph 0 of 2; the crossref stage fails first"
    assert found.deferred == ("confirm", "configs")
    assert (SO_FAR.message, SO_FAR.deferred) == ("graph 0 of 2", ())
    assert say(Isolation(script="train.py"), "first").message == "first"


def test_memory_needed_only_compiled_is_a_finding_with_both_peaks(tmp_path):
    eager = passed(trial_dir=trial_folder(str(tmp_path), "baseline", {"peak_memory": {"rss_mib": 100.0}}))
    compiled = failed(trial_dir=trial_folder(str(tmp_path), "original", {"peak_memory": {"rss_mib": 900.4}}))
    found = memory_finding(Isolation(script="train.py"), compiled, eager)
    assert found.kind == "out_of_memory"
    assert found.memory == {
        "compiled_peak_mib": 900.4,
        "eager_peak_mib": 100.0,
        "measure": "peak resident set (ru_maxrss)",
    }
    assert "(RuntimeError; peak 900 MiB before it did) while eager passes (peak 100 MiB)" in found.message


def test_a_backend_that_died_compiling_a_piece_names_the_last_piece_it_started(tmp_path):
    pieces = [
        {"piece": 0, "nodes": 3, "ops": ["aten.relu.default"]},
        {"piece": 1, "nodes": 2, "ops": ["aten.add.Tensor"]},
    ]
    died = hung(trial_dir=trial_folder(str(tmp_path), "original", {"inductor_pieces": pieces}))
    found = pieces_finding(SO_FAR, died)
    assert found.inductor_pieces == {"count": 2, "failed": pieces[1], "pieces": pieces}
    assert found.message.endswith("inductor compile 2 pieces; piece 1 (2 nodes: add) failed")


def test_no_pieces_recorded_leaves_the_isolation_as_it_was(tmp_path):
    assert pieces_finding(SO_FAR, failed(trial_dir=trial_folder(str(tmp_path), "original", {}))) is SO_FAR


def test_finish_stamps_the_decisive_trials_other_failures_and_counts_on_a_copy():
    s = session(lambda spec: failed(OTHER, trial_dir="/t/other"))
    s.fails_same(s.runner(s.spec("eager", "stage-eager")))  # another bug, seen on the way
    done = s.finish(SO_FAR, decisive={"first_failing": "/t/1"})
    assert done.decisive_trials == {"first_failing": "/t/1"} and done.trials == 1
    assert [o["trial"] for o in done.other_failures] == ["/t/other"]
    assert SO_FAR.decisive_trials is None and SO_FAR.other_failures == ()


def test_a_failure_too_rare_to_ask_until_it_fails_says_so_and_is_not_bisected():
    found, bisected = bisector(lambda spec: passed()).ask_until_it_fails(SO_FAR, 1, 50)
    assert not bisected
    assert (found.flaky, found.repro_rate, found.repro_runs, found.flaky_tries) == (True, 0.02, 50, None)
    assert found.message.startswith("flaky: the original fails 1 of 50 runs")


def test_an_exported_program_refusing_a_later_call_says_the_fix(tmp_path):
    record = {"export": {"phase": "export_run", "last_phase": "export_run"}}
    refused = failed(trial_dir=trial_folder(str(tmp_path), "stage-export", record))
    found = narrow_export(session(lambda spec: passed()), SO_FAR, refused)
    assert found.message.startswith("the exported program fails on a call the script makes (")
    assert found.message.endswith("Fix: dynamic_shapes with Dim ranges for the sizes that vary")
    assert dataclasses.replace(found, message=SO_FAR.message) == SO_FAR


def test_a_slow_stage_is_asked_its_config_flips_and_every_compile_mode(tmp_path):
    slow = Signature(kind="slow", exc_type=None, message="compiled slower than eager by more than 10%", frame=None)

    def answer(spec):
        if spec.stage in ("none", "eager", "aot_eager", "aot_eager_decomp_partition"):
            return passed()
        return failed(slow, compiled=True, user_backend="inductor", note="compiled 2.0x slower than eager")

    b = bisector(answer, kind="slow", configs=False, subsystems=False)
    isolation = b.isolate()
    assert (isolation.failing_stage, isolation.last_passing_stage, isolation.kind) == (
        "inductor",
        "aot_eager_decomp_partition",
        "slow",
    )
    assert isolation.speed == {"original": "compiled 2.0x slower than eager"} and isolation.config is None
    assert isolation.modes and isolation.message == SLOW_STAGE_MEANING["inductor"]
    assert isolation.deferred == () and "torch_logs" in isolation.decisive_trials  # the original is the stage
