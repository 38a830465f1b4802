"""Counted subsystems: the subsystem that fixes the failure when off, and its first application that breaks it."""

from reprokit.bisect.subsystems import subsystem
from unit.fakes import failed, passed, runner_of, session, trial_folder

COUNTS = {"inductor/pre_grad_passes": 3, "inductor/post_grad_passes": 4, "inductor/lowerings": 100}


def breaks_at(name: str, application: int, also_fixed_by=()):
    """The failure needs subsystem `name` to reach `application` (0-based); `also_fixed_by`: subsystems whose
    turning off hides it too."""

    def answer(spec):
        sub = spec.subsystem
        if sub is None:
            return failed(counters=COUNTS)
        if "names" in sub:  # several turned off at once
            return passed() if name in sub["names"] or set(also_fixed_by) & set(sub["names"]) else failed()
        if sub["name"] in also_fixed_by and sub["max"] == -1:
            return passed()
        if sub["name"] != name or sub["max"] >= application:
            return failed(bisect_detail=f"{name} #{sub['max']}")
        return passed()

    return answer


def test_the_first_application_that_breaks_it_is_named_with_what_it_did():
    s = session(breaks_at("lowerings", 37))
    found = subsystem(s, "inductor", failed(counters=COUNTS), confirm=False)
    assert found is not None
    assert (found["name"], found["application"], found["applications"]) == ("lowerings", 37, 100)
    assert found["detail"] == "lowerings #37"


def test_the_application_search_costs_a_logarithm_of_the_count():
    s = session(breaks_at("lowerings", 37), jobs=1)
    subsystem(s, "inductor", failed(counters=COUNTS), confirm=False)
    searched = [spec for spec in runner_of(s).asked if spec.subsystem and spec.subsystem.get("max", -1) >= 0]
    assert len(searched) <= 8  # log2(100) and the one that reads the boundary's detail


def test_a_pass_that_fixes_it_alone_is_named_before_the_lowerings():
    s = session(breaks_at("post_grad_passes", 2, also_fixed_by=("lowerings",)))
    found = subsystem(s, "inductor", failed(counters=COUNTS), confirm=False)
    assert found is not None and (found["name"], found["application"]) == ("post_grad_passes", 2)


def test_no_single_pass_is_asked_when_all_passes_off_still_fail():
    s = session(breaks_at("lowerings", 5))
    subsystem(s, "inductor", failed(counters=COUNTS), confirm=False)
    turned_off = [spec.label for spec in runner_of(s).asked if spec.label.endswith("-off")]
    assert turned_off == ["all-but-lowerings-off", "lowerings-off"]


def test_only_the_subsystems_the_failing_run_consulted_are_asked():
    s = session(breaks_at("lowerings", 5))
    subsystem(s, "inductor", failed(counters=COUNTS), confirm=False)
    names = {spec.subsystem.get("name") for spec in runner_of(s).asked if spec.subsystem}
    assert "cudagraphs" not in names and "joint_graph_passes" not in names


def test_nothing_is_named_when_no_subsystem_off_fixes_it():
    s = session(lambda spec: failed(counters=COUNTS))
    assert subsystem(s, "inductor", failed(counters=COUNTS), confirm=False) is None


def test_without_a_count_the_boundary_is_probed_upward():
    s = session(breaks_at("lowerings", 300))
    found = subsystem(s, "inductor", failed(counters={}), confirm=False)
    assert found is not None and found["application"] == 300 and found["applications"] is None


def test_the_boundary_is_confirmed_on_a_rerun_of_both_sides():
    s = session(breaks_at("lowerings", 37))
    found = subsystem(s, "inductor", failed(counters=COUNTS), confirm=True)
    assert found is not None and found["confirmed"] is True
    confirm = [spec.subsystem["max"] for spec in runner_of(s).asked if spec.attempt == 1]
    assert confirm == [37, 36]


def test_a_boundary_that_moves_on_its_rerun_is_not_confirmed():
    answer = breaks_at("lowerings", 37)
    s = session(lambda spec: passed() if spec.attempt == 1 else answer(spec))
    found = subsystem(s, "inductor", failed(counters=COUNTS), confirm=True)
    assert found is not None and found["confirmed"] is False


def kernel_named_failure(tmp_path, ops: list, kernel: str):
    """A failing trial whose traceback stops in inductor's generated module, on a line calling `kernel`, and whose
    record lists the lowering applications' ops in order (what guess.lowering_guesses reads)."""
    module = tmp_path / "inductor" / "ab" / "cab.py"
    module.parent.mkdir(parents=True)
    module.write_text(f"def call(args):\n    buf0 = empty()\n    {kernel}(buf0)\n")
    folder = trial_folder(str(tmp_path), "original", {"lowering_ops": ops})
    (tmp_path / "original" / "stderr.txt").write_text(
        f'  File "{module}", line 3, in call\n    {kernel}(buf0)\nRuntimeError: bad lowering of relu\n'
    )
    return failed(counters={"inductor/lowerings": len(ops)}, trial_dir=folder)


def test_the_first_application_of_an_op_in_the_failing_kernel_is_asked_first(tmp_path):
    ops = ["aten.add.Tensor" for _ in range(60)] + ["aten.relu.default"] + ["aten.mul.Tensor"] * 39
    failing = kernel_named_failure(tmp_path, ops, "cpp_fused_relu_0")
    s = session(breaks_at("lowerings", 60), jobs=1)
    found = subsystem(s, "inductor", failing, confirm=False)
    assert found is not None and found["application"] == 60
    bounded = [spec.subsystem["max"] for spec in runner_of(s).asked if spec.subsystem.get("max", -1) >= 0]
    assert bounded[:2] == [60, 59]  # the guess, then the point before it: two rounds, whatever the count
