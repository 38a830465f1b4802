"""search.Share: a pass's share of time, given from its first answer's cost."""

from reprokit.search.share import Plan, Share


def test_a_share_is_given_from_the_first_answer_and_spent_at_its_deadline():
    now = [100.0]
    share = Share(lambda seconds: 30 * seconds, clock=lambda: now[0])
    assert not share.spent()  # not started: nothing is spent
    share.start(2.0)
    share.start(50.0)  # the first answer's cost holds
    assert share.given == 60.0
    now[0] = 160.0
    assert not share.spent()
    now[0] = 160.5
    assert share.spent() and share.ran_out


def test_a_planned_share_is_what_the_plan_has_left_less_its_reserve_never_under_the_floor():
    now = [0.0]
    plan = Plan(end=300.0, floor=60.0, runs_after=10, overhead=5.0)  # the reserve: 10 runs of (5 s + one answer)
    assert plan.reserve(2.0) == 70.0

    def given_at(clock: float, one_answer: float) -> float | None:
        now[0] = clock
        share = Share(lambda seconds: 240.0, clock=lambda: now[0], plan=plan)
        share.start(one_answer)
        return share.given

    assert given_at(20.0, 1.0) == 220.0  # 300 - 20 - 60: the plan's end comes before the share's own
    assert given_at(0.0, 0.0) == 240.0  # the share's own is less than the plan has left: it holds
    assert given_at(200.0, 2.0) == 60.0  # 300 - 200 - 70 is 30: the floor
    assert given_at(400.0, 2.0) == 60.0  # past the plan's end: the floor still


def test_a_planned_share_is_spent_at_its_deadline_from_its_start():
    now = [100.0]
    share = Share(lambda seconds: 240.0, clock=lambda: now[0], plan=Plan(end=250.0, floor=10.0))
    share.start(1.0)
    assert share.given == 150.0
    now[0] = 250.0
    assert not share.spent()
    now[0] = 250.5
    assert share.spent() and share.ran_out
