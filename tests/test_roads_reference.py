"""The roads on grids of other heights, from lists of words, and with both pair dots,
against layouts written out by hand from the rules in roads.py's docstring and
docs/display.md (issue 15's campaign: the ``rows`` argument, the word inputs and the
Big Road's banker pair were untested; mutants of them survived)."""

from __future__ import annotations

import pytest

from shoe_controller.game.roads import (
    RoadResult,
    RoadsInputError,
    bead_plate,
    big_road,
    build_roads,
    logical_columns,
    parse_results,
)


def test_a_big_road_on_four_rows_turns_at_the_fourth() -> None:
    """A streak goes down to the bottom row, then right along it (a dragon tail)."""
    cells = [(c.col, c.row) for c in big_road("BBBBBBBBP", rows=4)]
    assert cells == [(0, 0), (0, 1), (0, 2), (0, 3), (1, 3), (2, 3), (3, 3), (4, 3),
                     (1, 0)]
    assert [(c.col, c.row) for c in build_roads("BBBBBP", rows=4).big_road] == [
        (0, 0), (0, 1), (0, 2), (0, 3), (1, 3), (1, 0)]


def test_a_bead_plate_of_three_rows_fills_columns_of_three() -> None:
    got = [(c.col, c.row, c.outcome) for c in build_roads("BPTBP", rows=3).bead_plate]
    assert got == [(0, 0, "banker"), (0, 1, "player"), (0, 2, "tie"), (1, 0, "banker"),
                   (1, 1, "player")]


def test_derived_road_grids_use_the_rows_given() -> None:
    """Each derived road is drawn with the Big Road's layout on its own grid: a run of
    one colour goes down, and on a two-row grid turns right at the second row."""
    results = "BPBPBPBP"  # alternating: every derived mark the same colour
    flat = build_roads(results)
    low = build_roads(results, rows=2)
    for name in ("big_eye_boy", "small_road", "cockroach_pig"):
        marks = getattr(flat, name)
        assert marks and len(set(marks)) == 1, name
        assert [(c.col, c.row) for c in low.grids[name]] == (
            [(0, 0)] + [(i, 1) for i in range(len(marks) - 1)]), name
        assert [(c.col, c.row) for c in flat.grids[name]] == (
            [(0, r) for r in range(min(len(marks), 6))]
            + [(i, 5) for i in range(1, len(marks) - 5)]), name


def test_ties_before_the_first_result_count_on_the_first_cell_only() -> None:
    _, ties, lead = logical_columns("TBP")
    assert (ties, lead) == ([[1], [0]], 1)
    assert [c.ties for c in big_road("TTBPB")] == [2, 0, 0]


def test_the_big_road_carries_both_pair_dots() -> None:
    res = [RoadResult("banker", banker_pair=True), RoadResult("player", player_pair=True),
           RoadResult("player", player_pair=True, banker_pair=True)]
    assert [(c.player_pair, c.banker_pair) for c in big_road(res)] == [
        (False, True), (True, False), (True, True)]


def test_results_as_words_and_letters_and_a_bad_letter_named() -> None:
    got = [c.outcome for c in bead_plate(["banker", "player", "tie", "BP", "t b",
                                          RoadResult("player")])]
    assert got == ["banker", "player", "tie", "banker", "player", "tie", "banker", "player"]
    with pytest.raises(RoadsInputError) as info:
        parse_results("BPX")
    assert str(info.value) == "result 3: 'X' is not B, P or T"
    with pytest.raises(RoadsInputError) as info:
        bead_plate(["banker", "BANKER"])
    assert str(info.value) == "result 2: 'A' is not B, P or T"  # B, then A
    assert [r.outcome for r in parse_results("b, p\tt\nB")] == ["banker", "player", "tie",
                                                                "banker"]
