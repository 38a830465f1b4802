"""Config flips: all at once first (beside the script's own settings reset alone), then a minimal set."""

from reprokit.bisect.configs import config_flips, first_round, smallest_set
from unit.fakes import failed, passed, runner_of, session, trial_folder

# What the failing trial recorded: the inductor flags in force, a setting the script changed, its default.
RECORD = {
    "cuda": False,
    "flag_values": {"fallback_random": False, "pattern_matcher": True, "freezing": False, "max_autotune": False},
    "user_configs": {"torch._inductor.config.epilogue_fusion": False},
    "config_defaults": {"epilogue_fusion": True},
}


def failing(tmp_path):
    return failed(trial_dir=trial_folder(str(tmp_path), "stage-inductor", RECORD))


def fixed_by(**fix):
    """The failure goes away when every flip in `fix` is in the trial's config."""
    return lambda spec: passed() if all(spec.config.get(k) == v for k, v in fix.items()) else failed()


def config_trials(s) -> list:
    return [spec.config for spec in runner_of(s).asked]


def test_the_first_round_asks_every_flip_at_once_and_the_scripts_own_setting_reset_alone(tmp_path):
    s = session(fixed_by(freezing=True))
    config_flips(s, "inductor", failing(tmp_path))
    everything, own = config_trials(s)[:2]
    assert everything == {"fallback_random": True, "pattern_matcher": False, "freezing": True, "epilogue_fusion": True}
    assert own == {"epilogue_fusion": True}


def test_the_scripts_own_setting_that_fixes_it_alone_is_the_answer_in_one_round(tmp_path):
    s = session(fixed_by(epilogue_fusion=True))
    assert config_flips(s, "inductor", failing(tmp_path)) == {"epilogue_fusion": True}
    assert runner_of(s).executed == 2


def test_when_every_flip_together_still_fails_none_is_asked_alone(tmp_path):
    s = session(lambda spec: failed())
    assert config_flips(s, "inductor", failing(tmp_path)) is None
    assert runner_of(s).executed == 2


def test_a_minimal_set_is_found_when_the_flips_fix_it_together(tmp_path):
    s = session(fixed_by(pattern_matcher=False, freezing=True))
    assert config_flips(s, "inductor", failing(tmp_path)) == {"pattern_matcher": False, "freezing": True}


def test_one_flip_among_many_that_fixes_it(tmp_path):
    s = session(fixed_by(fallback_random=True))
    assert config_flips(s, "inductor", failing(tmp_path)) == {"fallback_random": True}


def test_a_gpu_only_flag_is_not_flipped_on_a_cpu_run(tmp_path):
    s = session(fixed_by(max_autotune=True))
    assert config_flips(s, "inductor", failing(tmp_path)) is None
    assert all("max_autotune" not in config for config in config_trials(s))


def test_a_likely_flip_is_asked_alone_in_the_first_round(tmp_path):
    s = session(fixed_by(fallback_random=True))
    assert config_flips(s, "inductor", failing(tmp_path), likely=("fallback_random",)) == {"fallback_random": True}
    assert runner_of(s).executed == 3  # all at once, the script's own setting, the likely flip


def test_the_decomposing_stage_flips_functorchs_cse():
    s = session(fixed_by(**{"functorch.cse": False}))
    assert config_flips(s, "aot_eager_decomp_partition", failed()) == {"functorch.cse": False}


def test_the_first_round_alone_settles_a_scripts_own_setting_that_fixes_it(tmp_path):
    # what a run whose time plan is short asks (Bisector.after_repro)
    s = session(fixed_by(epilogue_fusion=True))
    first = first_round(s, "inductor", failing(tmp_path))
    assert first.settled and first.answer == {"epilogue_fusion": True}
    assert runner_of(s).executed == 2


def test_flips_that_fix_it_only_together_leave_the_first_round_unsettled(tmp_path):
    s = session(fixed_by(pattern_matcher=False, freezing=True))
    first = first_round(s, "inductor", failing(tmp_path))
    assert not first.settled and first.answer is None and runner_of(s).executed == 2
    assert smallest_set(s, "inductor", first) == {"pattern_matcher": False, "freezing": True}
