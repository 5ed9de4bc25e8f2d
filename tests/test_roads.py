"""Scoreboard roads on hand-checked sequences, plus properties of the layout and marks."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_controller.game.roads import (
    ROWS,
    RoadResult,
    RoadsInputError,
    bead_plate,
    big_road,
    build_roads,
    derived_marks,
    layout_streaks,
    parse_results,
    roads_to_dict,
)


def cells(results: str) -> list[tuple[int, int, str, int]]:
    return [(c.col, c.row, c.outcome[0].upper(), c.ties) for c in big_road(results)]


# --- ties -------------------------------------------------------------------------------


def test_ties_before_any_result_wait_for_the_first_cell() -> None:
    r = build_roads("TT")
    assert r.big_road == ()
    assert r.leading_ties == 2
    assert [c.outcome for c in r.bead_plate] == ["tie", "tie"]
    # ... and are counted on the first Banker/Player cell once it exists
    assert cells("TTP") == [(0, 0, "P", 2)]
    assert cells("TTPT") == [(0, 0, "P", 3)]


def test_ties_count_on_the_previous_cell_not_a_new_one() -> None:
    assert cells("BTTBTPT") == [(0, 0, "B", 2), (0, 1, "B", 1), (1, 0, "P", 1)]
    # a tie never breaks a streak
    assert cells("BTB") == [(0, 0, "B", 1), (0, 1, "B", 0)]


def test_ties_add_nothing_to_derived_roads() -> None:
    with_ties = build_roads("TBTPTTBPTB")
    without = build_roads("BPBPB")
    for name in ("big_eye_boy", "small_road", "cockroach_pig"):
        assert getattr(with_ties, name) == getattr(without, name)
    assert with_ties.ask == without.ask


# --- big road layout --------------------------------------------------------------------


def test_dragon_tail_turns_right_along_the_bottom_row() -> None:
    assert cells("B" * 9 + "P") == [
        (0, 0, "B", 0), (0, 1, "B", 0), (0, 2, "B", 0), (0, 3, "B", 0), (0, 4, "B", 0),
        (0, 5, "B", 0), (1, 5, "B", 0), (2, 5, "B", 0), (3, 5, "B", 0),
        (1, 0, "P", 0),
    ]


def test_streak_blocked_by_a_tail_turns_right_one_row_higher() -> None:
    # B x9 leaves a tail under columns 1..3; P; then B x6 meets it at row 5 of column 2
    got = cells("B" * 9 + "P" + "B" * 6 + "P")
    assert got[10:] == [
        (2, 0, "B", 0), (2, 1, "B", 0), (2, 2, "B", 0), (2, 3, "B", 0), (2, 4, "B", 0),
        (3, 4, "B", 0),
        (3, 0, "P", 0),
    ]
    # the logical columns do not change: three streaks of 9, 1, 6 (and the last P)
    assert build_roads("B" * 9 + "P" + "B" * 6 + "P").column_lengths == (9, 1, 6, 1)


def test_a_streak_blocked_under_its_first_cell_runs_along_the_top_row() -> None:
    # lengths 7, 6, 5, 4, 3, 2: each tail one row higher; the sixth is blocked at row 1
    lengths = [7, 6, 5, 4, 3, 2]
    placed = layout_streaks(lengths)
    assert placed[4] == [(4, 0), (4, 1), (5, 1)]
    assert placed[5] == [(5, 0), (6, 0)]
    # the next streak starts after the top-row tail, never on it
    assert layout_streaks([*lengths, 3])[6] == [(7, 0), (7, 1), (7, 2)]


def test_bead_plate_keeps_every_result_in_columns_of_six() -> None:
    plate = bead_plate("BPTBPTBP")
    assert [(c.col, c.row) for c in plate] == [
        (0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (1, 0), (1, 1)
    ]
    assert [c.outcome[0] for c in plate] == list("bptbptbp")


def test_pairs_and_naturals_reach_bead_plate_and_big_road() -> None:
    r = build_roads([RoadResult("banker", player_pair=True, natural=True),
                     RoadResult("tie", banker_pair=True)])
    assert r.bead_plate[0].player_pair and r.bead_plate[0].natural
    assert r.bead_plate[1].banker_pair
    assert r.big_road[0].player_pair and r.big_road[0].ties == 1


# --- derived roads, worked by hand ------------------------------------------------------


def test_derived_roads_hand_checked() -> None:
    # streaks B3 P1 B2 P4 B1 (worked through by hand from the rule in the issue)
    r = build_roads("BBB P BB PPPP B")
    assert r.column_lengths == (3, 1, 2, 4, 1)
    assert r.big_eye_boy == ("blue", "blue", "blue", "red", "blue", "red", "blue")
    assert r.small_road == ("red", "blue", "blue", "red", "red", "blue")
    assert r.cockroach_pig == ("red", "red", "blue", "blue")
    # each laid out like the Big Road: blue x3 | red | blue | red | blue
    assert [(c.col, c.row, c.mark[0]) for c in r.grids["big_eye_boy"]] == [
        (0, 0, "b"), (0, 1, "b"), (0, 2, "b"), (1, 0, "r"), (2, 0, "b"), (3, 0, "r"),
        (4, 0, "b"),
    ]
    assert r.ask == {
        "banker": {"big_eye_boy": "red", "small_road": "red", "cockroach_pig": "blue"},
        "player": {"big_eye_boy": "blue", "small_road": "blue", "cockroach_pig": "red"},
    }


def test_first_marks_appear_where_the_rule_says() -> None:
    # big eye boy starts at column 2 row 2, or column 3 row 1
    assert build_roads("BP").big_eye_boy == ()
    assert build_roads("BBPP").big_eye_boy == ("red",)
    assert build_roads("BPB").big_eye_boy == ("red",)
    # small road at column 3 row 2 or column 4 row 1; cockroach pig one column later
    assert build_roads("BPBB").small_road == ("blue",)
    assert build_roads("BPBP").small_road == ("red",)
    assert build_roads("BPBP").cockroach_pig == ()
    assert build_roads("BPBPP").cockroach_pig == ("blue",)
    assert build_roads("BPBPB").cockroach_pig == ("red",)


def test_long_shoes() -> None:
    chop = build_roads("BP" * 40)  # 80 single-result streaks: a "ping-pong" shoe
    assert chop.column_lengths == (1,) * 80
    assert chop.big_eye_boy == ("red",) * 78
    assert chop.small_road == ("red",) * 77
    assert chop.cockroach_pig == ("red",) * 76
    assert chop.big_road[-1].col == 79
    # the derived grid of an all-red road is one long dragon tail
    assert chop.grids["big_eye_boy"][-1].col == 72 and chop.grids["big_eye_boy"][-1].row == 5

    pairs = build_roads("BBPP" * 20)  # 40 streaks of two
    assert pairs.big_eye_boy == ("red",) * 77
    assert pairs.small_road == ("red",) * 75
    assert pairs.cockroach_pig == ("red",) * 73

    dragon = build_roads("B" * 30 + "P" * 30)  # two huge dragons: tails overlap rows
    assert dragon.big_eye_boy == ("red",) * 29
    assert dragon.big_road[29].col == 24 and dragon.big_road[29].row == 5
    # the second dragon is blocked by the first tail and runs along row 4
    assert (dragon.big_road[-1].col, dragon.big_road[-1].row) == (26, 4)


def test_parse_results_names_the_bad_result() -> None:
    assert len(parse_results("B P, t")) == 3
    with pytest.raises(RoadsInputError, match=r"result 4: 'Z'"):
        parse_results("BPTZ")


def test_dict_form_is_json_ready() -> None:
    d = roads_to_dict(build_roads("TBPPB"))
    assert d["big_road"][0] == {
        "col": 0, "row": 0, "outcome": "banker", "ties": 1, "column": 0, "depth": 0,
        "player_pair": False, "banker_pair": False,
    }
    assert set(d) >= {"bead_plate", "big_road", "big_eye_boy", "small_road",
                      "cockroach_pig", "grids", "ask"}


# --- properties -------------------------------------------------------------------------


def reference_marks(results: str, k: int) -> list[str]:
    """An independent reading of the issue's rule over the flat results string."""
    runs = [len(list(g)) for _, g in itertools.groupby(c for c in results if c != "T")]
    marks = []
    for n, length in enumerate(runs, start=1):
        for m in range(1, length + 1):
            if m >= 2:
                if n - k >= 1:
                    big_l = runs[n - k - 1]
                    marks.append("red" if m <= big_l or m > big_l + 1 else "blue")
            elif n - k - 1 >= 1:
                marks.append("red" if runs[n - 2] == runs[n - k - 2] else "blue")
    return marks


# Shoes rich in long streaks, so the 6-row grid fills and tails block other streaks.
streaky = st.lists(
    st.tuples(st.sampled_from("BP"), st.integers(1, 14), st.integers(0, 2)),
    max_size=40,
).map(lambda runs: "".join(side * n + "T" * t for side, n, t in runs))


@settings(max_examples=300, deadline=None)
@given(streaky)
def test_derived_roads_read_logical_columns_even_when_the_grid_is_full(results: str) -> None:
    grid6 = build_roads(results)
    tall = build_roads(results, rows=10_000)  # no tails at all: physical == logical
    for name, k in (("big_eye_boy", 1), ("small_road", 2), ("cockroach_pig", 3)):
        expected = reference_marks(results, k)
        assert list(getattr(grid6, name)) == expected
        assert list(getattr(tall, name)) == expected
        # the derived road's own grid holds each mark once, in a six-row grid
        grid = grid6.grids[name]
        assert [c.mark for c in grid] == expected
        assert len({(c.col, c.row) for c in grid}) == len(grid)
        assert all(0 <= c.row < ROWS for c in grid)
    assert grid6.ask == tall.ask


@settings(max_examples=300, deadline=None)
@given(streaky)
def test_big_road_layout_invariants(results: str) -> None:
    road = big_road(results)
    assert len(road) == sum(c != "T" for c in results)
    assert len({(c.col, c.row) for c in road}) == len(road)  # no cell drawn twice
    assert all(0 <= c.row < ROWS for c in road)
    assert sum(c.ties for c in road) == (results.count("T") if road else 0)
    for _, group in itertools.groupby(road, key=lambda c: c.column):
        streak = list(group)
        assert streak[0].row == 0
        assert len({c.outcome for c in streak}) == 1
        for a, b in itertools.pairwise(streak):
            # down, or right along the same row (and once right, never down again)
            assert (b.col, b.row) == (a.col, a.row + 1) or (b.row == a.row and b.col > a.col)
        turned = [i for i, (a, b) in enumerate(itertools.pairwise(streak)) if b.row == a.row]
        if turned:
            assert all(b.row == a.row for a, b in itertools.pairwise(streak[turned[0]:]))
    starts = [c.col for c in road if c.depth == 0]
    assert starts == sorted(set(starts))  # every streak starts further right


@settings(max_examples=200, deadline=None)
@given(streaky)
def test_ask_roads_predict_the_next_mark(results: str) -> None:
    now = build_roads(results)
    for side, letter in (("banker", "B"), ("player", "P")):
        nxt = build_roads(results + letter)
        for name in ("big_eye_boy", "small_road", "cockroach_pig"):
            before, after = getattr(now, name), getattr(nxt, name)
            assert after[: len(before)] == before
            added = after[len(before):]
            assert len(added) <= 1
            assert now.ask[side][name] == (added[0] if added else None)


def test_reading_the_physical_grid_instead_would_be_wrong() -> None:
    """Why the logical columns matter: with a dragon tail, the physical columns of the
    Big Road are not the streaks, and a derived road read from them differs."""
    results = "B" * 9 + "P" + "B" * 6 + "PP"
    road = big_road(results)
    physical: dict[int, int] = {}
    for c in road:
        physical[c.col] = physical.get(c.col, 0) + 1
    physical_lengths = [physical[c] for c in sorted(physical)]
    logical = build_roads(results)
    assert list(logical.column_lengths) == [9, 1, 6, 2]
    assert physical_lengths != list(logical.column_lengths)
    assert derived_marks(physical_lengths, 1) != logical.big_eye_boy
    assert list(logical.big_eye_boy) == reference_marks(results, 1)
