"""Wrong numbers: which of inductor's numerics modes removes the difference, and whether the first diverging node
agrees with the lowering the counters named."""

from reprokit.bisect.numerics import agreement, ask_numerics
from reprokit.data.records import Signature
from unit.fakes import failed, passed, runner_of, session, trial_folder

WRONG = Signature(kind="accuracy", message="compiled output differs from eager")
HAVE = {"numerics": {"torch": "2.15.0", "numerics": "off", "fallback_by_default": False}}


def removed_by(*modes, fallback=False):
    def answer(spec):
        if spec.config.get("numerics") in modes or (fallback and spec.config.get("fallback_by_default")):
            return passed()
        return failed(WRONG)

    return answer


def test_the_weakest_strict_mode_that_removes_the_difference_is_the_workaround(tmp_path):
    s = session(removed_by("strict_reduction", "strict"), target=WRONG)
    found = ask_numerics(s, "inductor", failed(WRONG, trial_dir=trial_folder(str(tmp_path), "t", HAVE)))
    assert (found["cause"], found["workaround"]) == ("numerics", "TORCHINDUCTOR_NUMERICS=strict_reduction")
    assert runner_of(s).executed == 4  # three strict modes and the fallback, side by side


def test_a_difference_strict_numerics_keeps_is_a_wrong_lowering(tmp_path):
    s = session(removed_by(fallback=True), target=WRONG)
    found = ask_numerics(s, "inductor", failed(WRONG, trial_dir=trial_folder(str(tmp_path), "t", HAVE)))
    assert found["cause"] == "lowering"
    assert found["workaround"] == "torch._inductor.config.fallback_by_default = True"


def test_a_torch_without_numerics_modes_is_asked_nothing(tmp_path):
    s = session(removed_by(), target=WRONG)
    found = ask_numerics(s, "inductor", failed(WRONG, trial_dir=trial_folder(str(tmp_path), "t", {})))
    assert found["cause"] is None and runner_of(s).executed == 0
    assert found["text"].startswith("numerics modes not asked")


def test_the_diverging_node_agrees_with_the_lowering_named_or_feeds_it():
    named = {"name": "lowerings", "detail": "aten.relu.default"}
    assert agreement({"node": "relu_1", "target": "aten.relu.default"}, named) == "agrees"
    assert agreement({"node": "add_2", "target": "aten.add.Tensor", "feeds": ["aten.relu.default"]}, named) == "feeds"
    assert agreement({"node": "add_2", "target": "aten.add.Tensor"}, named) == "differs"
    assert agreement({"node": "add_2", "target": "aten.add.Tensor"}, {"name": "post_grad_passes"}) is None
