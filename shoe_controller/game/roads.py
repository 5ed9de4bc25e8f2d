"""Scoreboard roads: the shoe's history as players read it on the table display.

Pure functions of the sequence of round results. Five roads:

- **Bead Plate**: every result, ties included, one cell each, in columns of six.
- **Big Road**: Banker/Player streaks. A *logical column* is one streak; its *physical
  cells* are where it is drawn on a six-row grid. A streak that reaches the bottom row,
  or finds the cell below taken, turns right along its row (a "dragon tail"). A tie is
  not a cell: it is counted on the cell of the previous result (ties before the first
  Banker/Player result are counted on the first cell, once it exists).
- **Big Eye Boy, Small Road, Cockroach Pig** (k = 1, 2, 3): one red/blue mark per Big
  Road entry, read from the *logical* columns, never from the physical grid (a dragon
  tail changes where a streak is drawn, not how long it is). Each is drawn on its own
  grid with the same streak/tail layout as the Big Road.
- **Ask roads**: the mark each derived road would add if the next result were Banker,
  and if it were Player.

>>> r = build_roads("BBPPPTB")
>>> [(c.col, c.row, c.outcome, c.ties) for c in r.big_road]
[(0, 0, 'banker', 0), (0, 1, 'banker', 0), (1, 0, 'player', 0), (1, 1, 'player', 0), \
(1, 2, 'player', 1), (2, 0, 'banker', 0)]
>>> r.big_eye_boy, r.small_road, r.cockroach_pig
(('red', 'blue', 'blue'), (), ())
>>> r.ask["banker"]["big_eye_boy"], r.ask["player"]["big_eye_boy"]
('red', 'blue')
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final, Literal

import msgspec

__all__ = [
    "DERIVED_ROADS",
    "ROWS",
    "BeadCell",
    "BigRoadCell",
    "MarkCell",
    "RoadResult",
    "Roads",
    "RoadsInputError",
    "ask_roads",
    "bead_plate",
    "big_road",
    "build_roads",
    "derived_marks",
    "layout_streaks",
    "logical_columns",
    "parse_results",
    "roads_to_dict",
]

Outcome = Literal["banker", "player", "tie"]
Mark = Literal["red", "blue"]

#: Rows of every road grid (the casino standard).
ROWS: Final = 6
#: Derived roads and the column offset k each compares with.
DERIVED_ROADS: Final = (("big_eye_boy", 1), ("small_road", 2), ("cockroach_pig", 3))

_LETTER: Final = {"B": "banker", "P": "player", "T": "tie"}


class RoadsInputError(ValueError):
    """A results string holds something that is not B, P or T."""


class RoadResult(msgspec.Struct, frozen=True):
    """One finished round as the roads see it: who won, and the side facts shown as dots.

    >>> RoadResult("banker", player_pair=True)
    RoadResult(outcome='banker', player_pair=True, banker_pair=False, natural=False)
    """

    outcome: Outcome
    player_pair: bool = False
    banker_pair: bool = False
    natural: bool = False


class BeadCell(msgspec.Struct, frozen=True):
    """A Bead Plate cell: result number ``index`` (0-based) at ``col``, ``row``."""

    col: int
    row: int
    outcome: Outcome
    player_pair: bool = False
    banker_pair: bool = False
    natural: bool = False


class BigRoadCell(msgspec.Struct, frozen=True):
    """A Big Road cell. ``column``/``depth`` are the logical streak and the position in it
    (both 0-based); ``col``/``row`` where it is drawn; ``ties`` counted on it."""

    col: int
    row: int
    outcome: Outcome
    ties: int
    column: int
    depth: int
    player_pair: bool = False
    banker_pair: bool = False


class MarkCell(msgspec.Struct, frozen=True):
    """A derived road cell."""

    col: int
    row: int
    mark: Mark


class Roads(msgspec.Struct, frozen=True):
    """All five roads and the ask roads for one sequence of results."""

    bead_plate: tuple[BeadCell, ...]
    big_road: tuple[BigRoadCell, ...]
    #: logical Big Road columns: the length of each streak, in order
    column_lengths: tuple[int, ...]
    #: ties before the first Banker/Player result (shown on the first cell once it exists)
    leading_ties: int
    big_eye_boy: tuple[Mark, ...]
    small_road: tuple[Mark, ...]
    cockroach_pig: tuple[Mark, ...]
    #: derived road name -> its cells on its own grid
    grids: dict[str, tuple[MarkCell, ...]]
    #: "banker"/"player" -> derived road name -> the mark it would add (None: nothing)
    ask: dict[str, dict[str, Mark | None]]


def parse_results(text: str) -> tuple[RoadResult, ...]:
    """Read a results string such as ``"BPPTB"`` (case-insensitive; spaces, commas ignored).

    >>> [r.outcome for r in parse_results("bp t")]
    ['banker', 'player', 'tie']
    >>> parse_results("BPX")
    Traceback (most recent call last):
    ...
    shoe_controller.game.roads.RoadsInputError: result 3: 'X' is not B, P or T
    """
    out: list[RoadResult] = []
    for ch in text.upper():
        if ch in " ,\t\n":
            continue
        if ch not in _LETTER:
            raise RoadsInputError(f"result {len(out) + 1}: {ch!r} is not B, P or T")
        out.append(RoadResult(_LETTER[ch]))  # type: ignore[arg-type]
    return tuple(out)


def _as_results(results: str | Iterable[RoadResult | str]) -> tuple[RoadResult, ...]:
    if isinstance(results, str):
        return parse_results(results)
    out = []
    for r in results:
        if isinstance(r, RoadResult):
            out.append(r)
        elif r in ("banker", "player", "tie"):
            out.append(RoadResult(r))  # type: ignore[arg-type]
        else:
            out.extend(parse_results(r))
    return tuple(out)


def bead_plate(results: str | Iterable[RoadResult | str], rows: int = ROWS) -> tuple[
        BeadCell, ...]:
    """Every result, ties included, down columns of ``rows``.

    >>> [(c.col, c.row, c.outcome[0]) for c in bead_plate("BPTBPTB")]
    [(0, 0, 'b'), (0, 1, 'p'), (0, 2, 't'), (0, 3, 'b'), (0, 4, 'p'), (0, 5, 't'), (1, 0, 'b')]
    """
    return tuple(
        BeadCell(i // rows, i % rows, r.outcome, r.player_pair, r.banker_pair, r.natural)
        for i, r in enumerate(_as_results(results))
    )


def layout_streaks(lengths: Sequence[int], rows: int = ROWS) -> list[list[tuple[int, int]]]:
    """Place streaks of the given lengths on a grid of ``rows`` rows: ``(col, row)`` per entry.

    Each streak starts at the top of the first column after the previous streak's start
    whose top cell is free; it goes down until the bottom row or a taken cell, then turns
    right along its row (a dragon tail) and keeps going right.

    >>> layout_streaks([7, 1])
    [[(0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (1, 5)], [(1, 0)]]

    A streak blocked by the tail of the one before turns right one row higher:

    >>> layout_streaks([7, 6], rows=6)[1]
    [(1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (2, 4)]
    """
    taken: set[tuple[int, int]] = set()
    placed: list[list[tuple[int, int]]] = []
    start = -1
    for length in lengths:
        start += 1
        while (start, 0) in taken:
            start += 1
        col, row = start, 0
        cells = [(col, row)]
        taken.add((col, row))
        turned = False
        for _ in range(length - 1):
            if not turned and row + 1 < rows and (col, row + 1) not in taken:
                row += 1
            else:
                turned = True
                col += 1
                # a tail never overwrites: skip right past anything already drawn
                while (col, row) in taken:
                    col += 1
            cells.append((col, row))
            taken.add((col, row))
        placed.append(cells)
    return placed


def logical_columns(results: str | Iterable[RoadResult | str]) -> tuple[
        list[list[RoadResult]], list[list[int]], int]:
    """Group results into Big Road streaks.

    Returns ``(columns, ties, leading_ties)``: each column the list of its Banker/Player
    results, ``ties[n][m]`` the ties counted on entry m of column n, and the ties seen
    before any Banker/Player result (also counted on the first cell when it exists).

    >>> cols, ties, lead = logical_columns("TTBBTPTT")
    >>> [[r.outcome[0] for r in c] for c in cols], ties, lead
    ([['b', 'b'], ['p']], [[2, 1], [2]], 2)
    """
    columns: list[list[RoadResult]] = []
    ties: list[list[int]] = []
    leading = 0
    for r in _as_results(results):
        if r.outcome == "tie":
            if columns:
                ties[-1][-1] += 1
            else:
                leading += 1
            continue
        if columns and columns[-1][0].outcome == r.outcome:
            columns[-1].append(r)
            ties[-1].append(0)
        else:
            columns.append([r])
            ties.append([leading if len(columns) == 1 else 0])
    return columns, ties, leading


def big_road(results: str | Iterable[RoadResult | str], rows: int = ROWS) -> tuple[
        BigRoadCell, ...]:
    """The Big Road cells, in the order they were drawn.

    >>> [(c.col, c.row, c.ties) for c in big_road("TBBBBBBBP")]
    [(0, 0, 1), (0, 1, 0), (0, 2, 0), (0, 3, 0), (0, 4, 0), (0, 5, 0), (1, 5, 0), (1, 0, 0)]
    """
    columns, ties, _ = logical_columns(results)
    placed = layout_streaks([len(c) for c in columns], rows)
    return tuple(
        BigRoadCell(col, row, r.outcome, ties[n][m], n, m, r.player_pair, r.banker_pair)
        for n, (column, cells) in enumerate(zip(columns, placed, strict=True))
        for m, (r, (col, row)) in enumerate(zip(column, cells, strict=True))
    )


def _mark(lengths: Sequence[int], n: int, m: int, k: int) -> Mark | None:
    """The derived-road mark for entry ``m`` (1-based row) of logical column ``n`` (1-based).

    The rule of the issue, verbatim: if m >= 2 compare with column n-k of length L (red if
    m <= L, blue if m == L+1, red if m > L+1); if m == 1 compare the lengths of columns n-1
    and n-k-1 (red if equal, blue otherwise); nothing when a column needed does not exist.
    """
    if m >= 2:
        if n - k < 1:
            return None
        length = lengths[n - k - 1]
        return "blue" if m == length + 1 else "red"
    if n - k - 1 < 1:
        return None
    return "red" if lengths[n - 2] == lengths[n - k - 2] else "blue"


def derived_marks(lengths: Sequence[int], k: int) -> tuple[Mark, ...]:
    """The marks of the derived road with offset ``k`` for Big Road streak ``lengths``.

    Each entry of each logical column is read in order, with earlier columns complete.

    >>> derived_marks([2, 3, 1], 1)   # B B | P P P | B
    ('red', 'blue', 'blue')
    >>> derived_marks([1, 1, 1, 1], 1), derived_marks([1, 1, 1, 1], 2)
    (('red', 'red'), ('red',))
    """
    out: list[Mark] = []
    for n0, length in enumerate(lengths):
        for m in range(1, length + 1):
            mark = _mark(lengths, n0 + 1, m, k)
            if mark is not None:
                out.append(mark)
    return tuple(out)


def _grid(marks: Sequence[Mark], rows: int) -> tuple[MarkCell, ...]:
    lengths: list[int] = []
    for i, mark in enumerate(marks):
        if i and mark == marks[i - 1]:
            lengths[-1] += 1
        else:
            lengths.append(1)
    cells = [cell for column in layout_streaks(lengths, rows) for cell in column]
    return tuple(MarkCell(c, r, mark) for (c, r), mark in zip(cells, marks, strict=True))


def ask_roads(lengths: Sequence[int], last: Outcome | None) -> dict[str, dict[str, Mark | None]]:
    """What each derived road would add if the next result were Banker, or Player.

    ``lengths`` are the Big Road streak lengths, ``last`` the outcome of the last streak.

    >>> ask_roads([2, 3], "player")["banker"]
    {'big_eye_boy': 'blue', 'small_road': None, 'cockroach_pig': None}
    """
    out: dict[str, dict[str, Mark | None]] = {}
    for side in ("banker", "player"):
        nxt = [*lengths[:-1], lengths[-1] + 1] if last == side else [*lengths, 1]
        n, m = len(nxt), nxt[-1]
        out[side] = {name: _mark(nxt, n, m, k) for name, k in DERIVED_ROADS}
    return out


def build_roads(results: str | Iterable[RoadResult | str], rows: int = ROWS) -> Roads:
    """Every road and the ask roads for a sequence of results (``"BPT..."`` or RoadResults).

    >>> r = build_roads("TBPB")
    >>> r.leading_ties, r.big_road[0].ties, r.column_lengths, r.big_eye_boy
    (1, 1, (1, 1, 1), ('red',))
    >>> build_roads("").ask["banker"]
    {'big_eye_boy': None, 'small_road': None, 'cockroach_pig': None}
    """
    res = _as_results(results)
    columns, _, leading = logical_columns(res)
    lengths = tuple(len(c) for c in columns)
    marks = {name: derived_marks(lengths, k) for name, k in DERIVED_ROADS}
    return Roads(
        bead_plate=bead_plate(res, rows),
        big_road=big_road(res, rows),
        column_lengths=lengths,
        leading_ties=leading,
        big_eye_boy=marks["big_eye_boy"],
        small_road=marks["small_road"],
        cockroach_pig=marks["cockroach_pig"],
        grids={name: _grid(marks[name], rows) for name, _ in DERIVED_ROADS},
        ask=ask_roads(lengths, columns[-1][0].outcome if columns else None),
    )


def roads_to_dict(roads: Roads) -> dict[str, object]:
    """Plain JSON-ready data: what ``shoe-controller roads --json`` prints and the display
    state carries.

    >>> d = roads_to_dict(build_roads("BPB"))
    >>> d["big_road"][0]
    {'col': 0, 'row': 0, 'outcome': 'banker', 'ties': 0, 'column': 0, 'depth': 0, \
'player_pair': False, 'banker_pair': False}
    >>> d["big_eye_boy"], d["grids"]["big_eye_boy"]
    (['red'], [{'col': 0, 'row': 0, 'mark': 'red'}])
    """
    # a JSON round trip turns tuples into lists, so the result compares equal to decoded JSON
    return msgspec.json.decode(msgspec.json.encode(
        {
            "bead_plate": roads.bead_plate,
            "big_road": roads.big_road,
            "column_lengths": roads.column_lengths,
            "leading_ties": roads.leading_ties,
            "big_eye_boy": roads.big_eye_boy,
            "small_road": roads.small_road,
            "cockroach_pig": roads.cockroach_pig,
            "grids": roads.grids,
            "ask": roads.ask,
        }
    ))
