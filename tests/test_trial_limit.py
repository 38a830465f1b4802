"""A trial's own limit, below the run's: a reduced script's candidate may run a few times as long as the script did
(source/reduce.candidate_limit), so a cut that loops forever is refused in seconds, not at the run's limit."""

from reprokit.data.records import TrialSpec
from reprokit.data.rundir import RunDir
from reprokit.source.reduce import candidate_limit
from reprokit.trial.runner import Runner


def test_a_trial_given_a_lower_limit_is_cut_there_and_the_run_limit_stays(tmp_path):
    script = tmp_path / "loops.py"
    script.write_text("while True:\n    pass\n")
    runner = Runner(RunDir.create(str(tmp_path / "artifacts"), "limit"), timeout=300)
    try:
        out = runner(
            TrialSpec(mode="script", stage="none", script=str(script), cwd=str(tmp_path), label="cut"), limit=3
        )
    finally:
        runner.close()
    assert out.kind == "hang" and out.seconds < 30, out
    assert runner.timeout == 300


def test_a_candidate_may_run_three_times_the_script_and_at_least_30_s():
    assert (candidate_limit(5.0), candidate_limit(40.0)) == (30.0, 120.0)
