"""search.ddmin: a 1-minimal list that keeps failing, in few questions."""

from reprokit.search.ddmin import ddmin


def test_a_single_culprit_is_found_in_about_2_log2_n_questions():
    asked = []

    def fails(items):
        asked.append(items)
        return 13 in items

    assert ddmin(list(range(64)), fails) == [13]
    assert len(asked) <= 2 * 6 + 2


def test_two_culprits_far_apart_are_both_kept_in_order():
    assert ddmin(list(range(20)), lambda items: 3 in items and 17 in items) == [3, 17]


def test_the_result_is_1_minimal_removing_any_item_stops_the_failure():
    culprits = {2, 5, 11}
    result = ddmin(list(range(16)), lambda items: culprits <= set(items))
    assert sorted(result) == sorted(culprits)


def test_the_full_list_is_not_asked_again():
    asked = []
    ddmin([1, 2, 3, 4], lambda items: asked.append(list(items)) or 1 in items)
    assert [1, 2, 3, 4] not in asked


def test_a_batch_oracle_takes_the_first_failing_candidate_in_order():
    # Both halves fail: the first, in order, wins, as the parallel runner's answers must be deterministic.
    def first_of(candidates):
        return next((i for i, c in enumerate(candidates) if c), None)

    assert ddmin([7, 8], lambda items: True, first_failing_of=first_of) == [7]
