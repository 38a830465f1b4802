"""search.Share: a pass's share of time, given from its first answer's cost."""

from reprokit.search.share import Share


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
