"""The generic search knows nothing of torch: pure predicates over lists and integers."""

import random

import pytest

from reprokit.search import Pass, Problem, ddmin, find_boundary, find_boundary_guessing, first_failing, run_passes


def test_ddmin_finds_single_culprit_in_few_questions():
    asked = []

    def fails(xs):
        asked.append(list(xs))
        return 37 in xs

    assert ddmin(list(range(100)), fails) == [37]
    assert len(asked) <= 2 * 7 + 2


def test_ddmin_finds_a_pair_that_must_stay_together():
    result = ddmin(list(range(40)), lambda xs: 3 in xs and 31 in xs)
    assert result == [3, 31]


def test_ddmin_result_is_one_minimal():
    def fails(xs):
        return sum(xs) >= 10

    result = ddmin([1, 2, 3, 4, 5, 6], fails)
    assert fails(result)
    for i in range(len(result)):
        assert not fails(result[:i] + result[i + 1 :])


@pytest.mark.parametrize("boundary", [0, 1, 7, 42, 99])
def test_find_boundary_with_known_upper_bound(boundary):
    asked = []

    def fails(n):
        asked.append(n)
        return n >= boundary

    assert find_boundary(fails, lo=-1, hi=99) == boundary
    assert len(asked) <= 8


@pytest.mark.parametrize("boundary", [0, 5, 1000])
def test_find_boundary_probes_exponentially_without_upper_bound(boundary):
    assert find_boundary(lambda n: n >= boundary, lo=-1) == boundary


def _rounds(boundary):
    rounds = []

    def fails_many(points):
        rounds.append(list(points))
        return [p >= boundary for p in points]

    return rounds, fails_many


def test_a_right_guess_ends_the_boundary_search_in_two_rounds():
    rounds, fails_many = _rounds(9)
    assert find_boundary_guessing(fails_many, lo=-1, hi=77, guesses=[3, 9, 20], width=2) == 9
    assert rounds == [[3, 9], [8]]


def test_guesses_after_the_first_failing_one_are_never_asked():
    rounds, fails_many = _rounds(3)
    assert find_boundary_guessing(fails_many, lo=-1, hi=77, guesses=[20, 3, 9, 40], width=2) == 3
    assert rounds == [[3, 9], [2]]


@pytest.mark.parametrize("boundary", [0, 1, 8, 9, 10, 42, 77])
@pytest.mark.parametrize("guesses", [[], [9], [3, 30], [76], [0, 77]])
def test_wrong_guesses_still_find_the_boundary(boundary, guesses):
    rounds, fails_many = _rounds(boundary)
    assert find_boundary_guessing(fails_many, lo=-1, hi=77, guesses=guesses, width=2) == boundary
    assert sum(len(r) for r in rounds) <= len(guesses) + 1 + 2 * 5


def test_first_failing_stops_at_first():
    seen = []
    assert first_failing(["a", "b", "c"], lambda s: seen.append(s) or s == "b") == 1
    assert seen == ["a", "b"]
    assert first_failing([1, 2], lambda s: False) is None


def test_fixpoint_repeats_until_no_progress():
    def halve(problem, n):  # one step a round: the rounds go on while a round shrinks the state
        return n // 2 if n > 3 and problem.consider(n // 2) else n

    assert run_passes(Problem(100, lambda n: True, size=lambda n: n), [Pass("halve", halve)]) == 3


# The search package's imports and private torch names are checked over the whole import graph in
# test_architecture.py.


@pytest.mark.parametrize("boundary", [0, 1, 13, 42, 99])
def test_find_boundary_asks_several_points_per_round(boundary):
    rounds = []

    def many(points):
        rounds.append(points)
        return [p >= boundary for p in points]

    assert find_boundary(lambda n: n >= boundary, lo=-1, hi=99, fails_many=many, width=2) == boundary
    assert len(rounds) <= 5  # log3(100) rounds instead of log2(100)


def test_ddmin_with_batched_questions_gives_the_same_answer():
    batches = []

    def first_of(cands):
        batches.append(len(cands))
        return next((i for i, c in enumerate(cands) if 37 in c and 5 in c), None)

    assert ddmin(list(range(64)), lambda xs: 37 in xs and 5 in xs, first_failing_of=first_of) == [5, 37]
    assert max(batches) > 1


# -- Problem: the one acceptance rule ----------------------------------------------------------------------
# Candidates are tuples of ints; "fails the same way" means: contains every culprit (and, for a different
# failure, contains a decoy instead). size is the length.


def culprit_oracle(culprits, decoy=None):
    asked = []

    def fails_same(c):
        asked.append(c)
        return c is not None and set(culprits) <= set(c) and (decoy is None or decoy not in c)

    return fails_same, asked


def random_candidates(rng, universe, n):
    return [tuple(sorted(rng.sample(universe, rng.randint(0, len(universe))))) for _ in range(n)]


@pytest.mark.parametrize("seed", range(20))
def test_acceptance_never_grows_the_best_and_keeps_it_failing(seed):
    rng = random.Random(seed)
    universe = list(range(12))
    culprits = rng.sample(universe, rng.randint(1, 3))
    fails_same, _ = culprit_oracle(culprits)
    improved = []
    problem = Problem(tuple(universe), fails_same, size=len, on_improve=improved.append)
    sizes = [len(problem.best)]
    for c in random_candidates(rng, universe, 60):
        before = problem.best
        accepted = problem.consider(c)
        assert accepted == (len(c) < len(before) and fails_same(c))
        assert problem.best == (c if accepted else before)
        assert len(problem.best) <= len(before)
        sizes.append(len(problem.best))
    assert sizes == sorted(sizes, reverse=True)
    assert fails_same(problem.best)
    # on_improve saw every new best, each strictly smaller than the one before.
    assert [len(c) for c in improved] == sorted({len(c) for c in improved}, reverse=True)
    assert (improved[-1] if improved else tuple(universe)) == problem.best


def test_consider_refuses_a_smaller_candidate_that_fails_differently():
    fails_same, _ = culprit_oracle([3], decoy=7)
    problem = Problem((1, 2, 3, 4), fails_same, size=len)
    assert not problem.consider((3, 7))  # smaller, but the failure is a different one
    assert problem.best == (1, 2, 3, 4)
    assert problem.consider((3,))
    assert problem.best == (3,) and problem.improvements == [(None, 1)]


def test_consider_does_not_ask_about_a_candidate_that_is_not_smaller():
    fails_same, asked = culprit_oracle([1])
    problem = Problem((1, 2), fails_same, size=len)
    assert not problem.consider((1, 3)) and not problem.consider((1, 2, 3))
    assert asked == []


def test_test_answers_the_oracle_but_accepts_only_smaller():
    fails_same, _ = culprit_oracle([1])
    problem = Problem((1, 2), fails_same, size=len)
    assert problem.test((1, 3)) is True  # fails the same way: said so, but not smaller, so not the best
    assert problem.best == (1, 2)
    assert problem.test((1,)) is True and problem.best == (1,)
    assert problem.test((2,)) is False and problem.best == (1,)


def test_batch_forms_ask_once_and_accept_through_the_same_rule():
    fails_same, _ = culprit_oracle([5])
    batches = []

    def first_of(cands):
        batches.append(list(cands))
        return next((i for i, c in enumerate(cands) if fails_same(c)), None)

    def mask(cands):
        batches.append(list(cands))
        return [fails_same(c) for c in cands]

    problem = Problem(
        (1, 5, 6, 7),
        lambda c: pytest.fail("the batch forms answer"),
        size=len,
        first_failing=first_of,
        failing_mask=mask,
    )
    assert problem.first_failing([(1, 6), (5, 6, 7), (5,)]) == 1
    assert problem.best == (5, 6, 7)
    assert problem.failing_mask([(5, 6, 7, 8, 9), (1,), (5, 6)]) == [True, False, True]
    assert problem.best == (5, 6)  # the larger hit was not taken
    assert len(batches) == 2
    assert problem.first_failing([(1,), (6,)]) is None and problem.best == (5, 6)


@pytest.mark.parametrize("seed", range(10))
def test_passes_reach_a_fixed_point_that_keeps_failing(seed):
    rng = random.Random(seed)
    universe = list(range(30))
    culprits = rng.sample(universe, 3)
    fails_same, _ = culprit_oracle(culprits)
    problem = Problem(tuple(universe), fails_same, size=len)

    def halves(p, state):  # proposes the first or second half
        for part in (state[: len(state) // 2], state[len(state) // 2 :]):
            if part and p.consider(part):
                return part
        return state

    def singles(p, state):  # proposes dropping each element in turn
        for x in list(state):
            smaller = tuple(y for y in state if y != x)
            if p.consider(smaller):
                state = smaller
        return state

    result = run_passes(problem, [Pass("halves", halves), Pass("drop-one", singles)])
    assert result == problem.best == tuple(sorted(culprits))
    assert {name for name, _ in problem.improvements} <= {"halves", "drop-one"}
    assert problem.current_pass is None
    sizes = [s for _, s in problem.improvements]
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == len(sizes)


def test_passes_with_ddmin_propose_through_the_problem():
    fails_same, asked = culprit_oracle([4, 17])
    problem = Problem(tuple(range(20)), fails_same, size=len)
    shrink = Pass(
        "ddmin",
        lambda p, s: tuple(
            ddmin(
                list(s),
                lambda xs: p.test(tuple(xs)),
                first_failing_of=lambda cs: p.first_failing([tuple(c) for c in cs]),
            )
        ),
    )
    assert run_passes(problem, [shrink]) == (4, 17) == problem.best


def test_a_share_is_given_by_its_first_answer_and_spent_after_its_deadline():
    from reprokit.search import Share

    now = [100.0]
    share = Share(lambda seconds: 10 * seconds, clock=lambda: now[0])
    assert not share.spent() and share.given is None  # nothing asked yet: nothing to spend
    share.start(2.0)
    share.start(50.0)  # only the first answer gives the share
    assert share.given == 20.0
    now[0] = 120.0
    assert not share.spent() and not share.ran_out
    now[0] = 120.5
    assert share.spent() and share.ran_out


def test_a_check_that_fails_walks_back_through_what_was_accepted_to_the_first():
    """A reduction's best that does not hold up (a flaky failure whose rate fell as it was cut) gives way to a
    larger candidate it accepted before, at most `most` of them asked: the best, one halfway back, the first."""
    from reprokit.search import verified_back

    problem = Problem(list(range(16)), lambda xs: 3 in xs and (len(xs) > 4 or 5 in xs), len)
    assert ddmin(problem.best, problem.test) == [3, 5]
    assert [len(c) for c in problem.accepted] == [16, 8, 6, 4, 3, 2], problem.accepted

    def holds(xs):
        return len(xs) >= 4  # fresh checks of anything under 4 items pass: the failure has thinned out

    asked = []
    at = verified_back(problem.accepted, lambda xs: asked.append(len(xs)) or holds(xs), most=3)
    assert (at, asked) == (2, [2, 6]), (at, asked)
    asked.clear()
    assert verified_back(problem.accepted, lambda xs: asked.append(len(xs)) or len(xs) > 16, most=3) is None
    assert asked == [2, 6, 16]
    asked.clear()
    assert verified_back(problem.accepted, lambda xs: asked.append(len(xs)) or False, most=1) is None
    assert asked == [2]


def test_a_round_that_ends_on_a_detour_is_followed_by_one_from_the_best_without_it():
    """A detour (an inlined helper) may leave a longer text; the cut that follows it worked on that text alone."""
    problem = Problem("aaaa", lambda s: len(s) >= 2, size=len)

    def lengthen(problem, state):  # proposes nothing the problem accepts: its text is longer than the best
        return state + "xxxx"

    def cut(problem, state):
        while problem.consider(state[:-1]):
            state = state[:-1]
        return state

    passes = [Pass("inline", lengthen, detour=True), Pass("cut", cut)]
    assert run_passes(problem, passes) == "aa" == problem.best
    assert [name for name, _ in problem.improvements] == ["cut", "cut"]
