"""Probabilistic delta debugging on pure predicates: ddmin's answer in fewer questions (issue #50, item 4)."""

import random

from reprokit.search import Problem, ddmin, learned, probdd
from reprokit.search.learned import EditMemory, edit_of
from reprokit.search.probdd import learn_refused, removal_sets


def counted(fails):
    asked = []

    def oracle(xs):
        asked.append(list(xs))
        return fails(xs)

    return asked, oracle


def test_a_single_culprit_is_found_in_few_questions():
    asked, fails = counted(lambda xs: 37 in xs)
    assert probdd(list(range(100)), fails) == [37]
    # ddmin's best case (subsets first: 10 questions); removing a tenth at a time, with no lone culprit assumed,
    # costs a few more.
    assert len(asked) <= 16, len(asked)


def test_a_pair_that_must_stay_together_stays():
    assert probdd(list(range(40)), lambda xs: 3 in xs and 31 in xs) == [3, 31]


def test_the_answer_is_one_minimal_on_a_monotone_failure():
    def fails(xs):
        return sum(xs) >= 10

    result = probdd([1, 2, 3, 4, 5, 6], fails)
    assert fails(result)
    for i in range(len(result)):
        assert not fails(result[:i] + result[i + 1 :])


def test_equal_items_are_told_apart():
    assert probdd(["a", "b", "a", "c"], lambda xs: xs.count("a") == 2) == ["a", "a"]


def test_a_refused_set_is_split_and_an_item_refused_alone_is_needed():
    p = [0.1] * 4
    learn_refused(p, {0, 1})
    assert 0.5 < p[0] == p[1] < 0.6 and p[2] == 0.1  # 0.1 / (1 - 0.9 * 0.9)
    learn_refused(p, {2})
    assert p[2] == 1.0
    # The items now more likely needed are not removed together again, and a needed one not at all.
    sets = removal_sets([0, 1, 2, 3], p, width=3)
    assert all(len(s & {0, 1}) <= 1 for s in sets) and all(2 not in s for s in sets)


def test_side_by_side_removals_are_disjoint_and_give_the_same_answer():
    batches = []

    def first_of(cands):
        batches.append(len(cands))
        return next((i for i, c in enumerate(cands) if 37 in c and 5 in c), None)

    assert probdd(list(range(64)), lambda xs: 37 in xs and 5 in xs, first_failing_of=first_of, width=2) == [5, 37]
    assert max(batches) == 2
    assert all(not (a & b) for a, b in [tuple(removal_sets(list(range(20)), [0.1] * 20, width=2))])


def _script_like(rng: random.Random):
    """A script's statements: a few needed, each needing a chain of earlier ones (a name bound before its use)."""
    n = rng.choice([20, 40, 60])
    needed = set(rng.sample(range(n), rng.randint(1, n // 5)))
    uses = {}
    for a in list(needed):
        for _ in range(rng.randint(0, 3)):
            if a == 0:
                break
            uses[a], a = (b := rng.randrange(a)), b

    def fails(xs):
        kept = set(xs)
        return needed <= kept and all(b in kept for a, b in uses.items() if a in kept)

    return n, fails


def test_on_script_like_failures_it_reaches_ddmins_size_with_40_percent_fewer_questions():
    rng = random.Random(50)
    questions = {"ddmin": 0, "probdd": 0}
    for _ in range(40):
        n, fails = _script_like(rng)
        sizes = {}
        for name, search in (("ddmin", ddmin), ("probdd", probdd)):
            asked, oracle = counted(fails)
            sizes[name] = len(search(list(range(n)), oracle))
            questions[name] += len(asked)
        assert sizes["probdd"] <= sizes["ddmin"]
    assert questions["probdd"] <= 0.6 * questions["ddmin"], questions


def test_through_a_problem_each_removal_that_keeps_failing_becomes_the_best():
    problem = Problem(tuple(range(30)), lambda c: 4 in c and 20 in c, size=len)
    probdd(list(problem.best), lambda kept: problem.test(tuple(kept)))
    assert problem.best == (4, 20)
    assert [len(c) for c in problem.accepted] == sorted((len(c) for c in problem.accepted), reverse=True)


# -- sweeps of proposals: an edit refused before is asked last, then not at all -----------------------------------
def test_an_edit_is_named_by_what_it_changes_and_its_surroundings():
    assert edit_of("x = a + b\ny = 1\n", "x = a\ny = 1\n")[1:3] == (" + b", "")
    # The same edit on a text changed far from it has the same name; one whose surroundings changed does not.
    between = "y = 1\n" * 10
    changed = edit_of("x = a + b\n" + between + "z = 3\n", "x = a\n" + between + "z = 3\n")
    assert changed == edit_of("x = a + b\n" + between + "z = 2\n", "x = a\n" + between + "z = 2\n")
    assert edit_of("x = a + b\n", "x = a\n") != edit_of("w = a + b\n", "w = a\n")


class Sweeps:
    """A problem whose candidates fail the same way when they are in `failing`; it records what it was asked."""

    def __init__(self, failing):
        self.failing, self.asked = failing, []
        self.current_pass, self.improvements = "simplify", []

    def first_failing(self, candidates):
        for i, c in enumerate(candidates):
            self.asked.append(c)
            if c in self.failing:
                return i
        return None


def test_a_refused_edit_is_not_asked_again_and_the_hit_is_indexed_in_the_callers_order(monkeypatch):
    monkeypatch.setattr(learned, "CONTEXT", 0)  # one-letter texts: an edit is named by its change alone
    memory, problem = EditMemory(), Sweeps({"abd"})
    assert memory.first_failing(problem, "abcd", ["bcd", "acd", "abd"]) == 2
    problem.asked.clear()
    # From the new text, the two edits refused before (dropping "a", dropping "b") are left out.
    assert memory.first_failing(problem, "abd", ["bd", "ad", "ab"]) is None
    assert problem.asked == ["ab"] and memory.skipped == 2


def test_with_two_refusals_allowed_a_refused_edit_waits_for_the_new_ones(monkeypatch):
    monkeypatch.setattr(learned, "CONTEXT", 0)
    memory, problem = EditMemory(skip_after=2), Sweeps({"ab"})
    memory.first_failing(problem, "abd", ["bd"])
    problem.asked.clear()
    assert memory.first_failing(problem, "abd", ["bd", "ad", "ab"]) == 2
    assert problem.asked == ["ad", "ab"]  # the unseen edits first; "bd" would have been last


def test_what_was_refused_is_asked_again_once_another_pass_shrank_the_text(monkeypatch):
    monkeypatch.setattr(learned, "CONTEXT", 0)
    memory, problem = EditMemory(), Sweeps(set())
    memory.first_failing(problem, "abd", ["bd", "ad"])
    problem.improvements.append(("simplify", 2))  # its own hit: what it refused stays refused
    assert memory.first_failing(problem, "abd", ["bd", "ad"]) is None and memory.skipped == 2
    problem.improvements.append(("delete_statements", 2))  # may have removed what made them fail
    problem.asked.clear()
    memory.first_failing(problem, "abd", ["bd", "ad"])
    assert problem.asked == ["bd", "ad"]


def test_an_edit_refused_again_after_another_pass_shrank_the_text_is_not_asked_in_later_rounds(monkeypatch):
    monkeypatch.setattr(learned, "CONTEXT", 0)
    memory, problem = EditMemory(), Sweeps(set())
    memory.first_failing(problem, "abd", ["bd", "ad"])  # round 1: both refused
    problem.improvements.append(("delete_statements", 2))
    memory.first_failing(problem, "abd", ["bd", "ad", "ab"])  # round 2: asked again once, with a new edit
    problem.improvements.append(("delete_statements", 1))
    problem.asked.clear()
    assert memory.first_failing(problem, "abd", ["bd", "ad", "ab"]) is None
    assert problem.asked == ["ab"]  # refused once since the last shrink; "bd" and "ad" twice over the reduction
