"""search.bisect: the first failing rung of a ladder, and a pass/fail boundary on integers."""

from reprokit.search.bisect import find_boundary, find_boundary_guessing, first_failing


def test_first_failing_asks_in_order_and_stops_at_the_first_failure():
    asked = []

    def fails(stage):
        asked.append(stage)
        return stage in ("aot_eager", "inductor")

    assert first_failing(["eager", "aot_eager", "inductor"], fails) == 1
    assert asked == ["eager", "aot_eager"]


def test_first_failing_is_none_when_every_rung_passes():
    assert first_failing(["eager", "inductor"], lambda _: False) is None


def test_find_boundary_names_the_smallest_failing_count_in_log_questions():
    asked = []
    assert find_boundary(lambda n: asked.append(n) or n >= 37, lo=-1, hi=99) == 37
    assert len(asked) <= 7


def test_find_boundary_without_an_upper_bound_probes_exponentially():
    asked = []
    assert find_boundary(lambda n: asked.append(n) or n >= 300, lo=-1) == 300
    assert asked[:4] == [0, 2, 6, 14]  # each step twice the last, from the last that passed


def test_find_boundary_asks_width_points_a_round():
    rounds = []

    def fails_many(points):
        rounds.append(points)
        return [p >= 50 for p in points]

    assert find_boundary(lambda n: n >= 50, lo=-1, hi=99, fails_many=fails_many, width=3) == 50
    assert all(len(r) <= 3 for r in rounds)
    assert len(rounds) <= 4  # a 4-ary search over 100 points


def test_a_right_guess_finds_the_boundary_in_two_rounds_whatever_the_range():
    rounds = []

    def fails_many(points):
        rounds.append(points)
        return [p >= 4000 for p in points]

    assert find_boundary_guessing(fails_many, lo=-1, hi=9999, guesses=[4000]) == 4000
    assert rounds == [[4000], [3999]]


def test_wrong_guesses_still_narrow_the_range():
    assert find_boundary_guessing(lambda ps: [p >= 70 for p in ps], lo=-1, hi=99, guesses=[10, 90]) == 70


def test_guesses_after_the_first_failing_one_are_not_asked():
    rounds = []

    def fails_many(points):
        rounds.append(points)
        return [p >= 20 for p in points]

    find_boundary_guessing(fails_many, lo=-1, hi=99, guesses=[30, 60, 90], width=1)
    assert [60] not in rounds and [90] not in rounds
