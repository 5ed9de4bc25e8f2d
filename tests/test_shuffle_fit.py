"""The whole-shoe fit (``game.shuffle_fit``, issue 18): its search against a brute force
over every matching of a small deck, fair shoes below the threshold and weak ones above
it (shuffled by the tests' own riffle model, tests/support/riffles.py), what it refuses
to score, and the alert at the end of a shoe through the game core."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from shoe_controller.game import inputs as I
from shoe_controller.game.cards import ALL_CARDS, parse_card
from shoe_controller.game.events import IntegrityAlert, ShoeEnded
from shoe_controller.game.protection import AnalyticsConfig, initial_state, protect, shoe_fit
from shoe_controller.game.rules import Rules
from shoe_controller.game.shoe import Shoe
from shoe_controller.game.shuffle_fit import (
    _anneal,
    _tray,
    fit_many,
    fit_test,
    gap_table,
    not_calibrated,
)
from tests.support.dealing import deal, tray
from tests.support.riffles import a_shuffle, cut, riffles, strip

DECKS = 8
THRESHOLD = AnalyticsConfig().shuffle_fit_z


def shoe_cards(seed: float) -> list[str]:
    cards = [c.code for c in ALL_CARDS for _ in range(DECKS)]
    random.Random(seed).shuffle(cards)
    return cards


# ------------------------------------------------------------------ the search itself


def brute_force_best(codes: list[int], orders: list[list[int]], new: list[int],
                     table: np.ndarray) -> float:
    """The best score over every matching of the new cards to the old copies of their
    codes and every old order in ``orders`` (lists of old copies, neighbours in turn),
    written plainly: each old copy takes one of its code's new positions (or none, when
    the code has more copies than new cards); neighbours both matched score
    ``table[(new position of the second - new position of the first) % n]``."""
    n = len(codes)
    slots: dict[int, list[int]] = {}
    for s, c in enumerate(codes):
        slots.setdefault(c, []).append(s)
    positions: dict[int, list[int]] = {c: [] for c in slots}
    for j, c in enumerate(new):
        positions[c].append(j)
    per_code = []
    for c, ss in slots.items():
        values = positions[c] + [-1] * (len(ss) - len(positions[c]))
        per_code.append([(ss, perm) for perm in set(itertools.permutations(values))])
    best = -np.inf
    for choice in itertools.product(*per_code):
        val = [-1] * n
        for ss, perm in choice:
            for s, v in zip(ss, perm, strict=True):
                val[s] = v
        for order in orders:
            score = sum(table[(val[b] - val[a]) % n] for a, b in itertools.pairwise(order)
                        if val[a] >= 0 and val[b] >= 0)
            best = max(best, score)
    return float(best)


def small_deck(seed: int) -> tuple[list[int], list[int], np.ndarray, list[int]]:
    """12 copies of 6 codes (two the old shoe did not show), 10 of them seen again, a
    random table, and the first matching (each code's new positions to its copies)."""
    rng = random.Random(seed)
    codes = [0, 0, 0, 1, 1, 1, 2, 2, 3, 3, 4, 5]
    rng.shuffle(codes)
    new = list(codes)
    rng.shuffle(new)
    new = new[:10]
    table = np.array([0.0] + [rng.uniform(-2, 2) for _ in range(11)])
    val = [-1] * 12
    left = {c: [j for j, x in enumerate(new) if x == c] for c in set(codes)}
    for s, c in enumerate(codes):
        if left[c]:
            val[s] = left[c].pop(0)
    return codes, new, table, val


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_search_finds_the_best_matching_of_a_small_deck(seed: int) -> None:
    codes, new, table, val = small_deck(seed)
    after = [*range(1, 10), -1, -1, -1]  # the old order: copies 0-9; 10 and 11 not shown
    expected = brute_force_best(codes, [list(range(10))], new, table)
    got = _anneal(np.array([codes]), np.array([after]), np.array([val]), table,
                  np.random.default_rng(seed), steps=3000)
    assert got[0] == pytest.approx(expected)


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_the_search_turns_rounds_collected_hand_by_hand(seed: int) -> None:
    codes, new, table, val = small_deck(seed)
    # a burn card, then two rounds P B P B and P B P B P
    places = [None, (1, "player"), (1, "banker"), (1, "player"), (1, "banker"),
              (2, "player"), (2, "banker"), (2, "player"), (2, "banker"), (2, "player")]
    one = {False: [1, 3, 2, 4], True: [2, 4, 1, 3]}  # Player's hand first, or Banker's
    two = {False: [5, 7, 9, 6, 8], True: [6, 8, 5, 7, 9]}
    orders = [[0, *one[a], *two[b]] for a in (False, True) for b in (False, True)]
    expected = brute_force_best(codes, orders, new, table)
    after, rounds = _tray(places, 12)
    got = _anneal(np.array([codes]), after[None, :], np.array([val]), table,
                  np.random.default_rng(seed), steps=4000, rounds=rounds)
    assert got[0] == pytest.approx(expected)
    # and the tray order it starts from is Player's hand first in every round
    assert [int(after[i]) for i in [0, 1, 3, 2, 4, 5, 7, 9, 6]] == [1, 3, 2, 4, 5, 7, 9, 6, 8]


def test_the_gap_table_favours_the_gaps_riffles_leave() -> None:
    # five riffles without a strip: an old card's successor comes about 32 cards later
    # (one of 32 packets); with a strip, about that far earlier
    plain, stripped = gap_table(416, (5, False)), gap_table(416, (5, True))
    assert plain[1:64].mean() > 1.0 > plain[200:216].mean()
    assert stripped[-64:].mean() > 1.0 > stripped[200:216].mean()
    assert plain[-64:].mean() < 0.5 and stripped[1:8].mean() < plain[1:8].mean()


# ---------------------------------------------------------------- fair and weak shoes


def test_fair_shoes_stay_below_the_threshold_and_five_riffles_are_caught() -> None:
    rng = random.Random(7)
    fair = [(shoe_cards(rng.random())[:400], shoe_cards(rng.random())[:400])
            for _ in range(8)]
    weak = []
    for i in range(8):
        old = shoe_cards(100 + i)
        shuffled = riffles(old, 5, rng)
        new = cut(strip(shuffled, rng) if i % 2 else shuffled, rng)
        weak.append((old[:400], new[:400]))
    fits = fit_many(fair + weak, DECKS)
    fair_z = [f.z for f in fits[:8]]
    weak_z = [f.z for f in fits[8:]]
    assert max(fair_z) < THRESHOLD, fair_z
    assert sum(z >= THRESHOLD for z in weak_z) >= 7, weak_z
    assert min(weak_z) > max(fair_z)
    # the family that fits best says whether there was a strip
    assert [f.family[1] for f in fits[8:] if f.z >= THRESHOLD] == \
        [bool(i % 2) for i, f in enumerate(fits[8:]) if f.z >= THRESHOLD]
    assert not any(f.family[2] for f in fits)  # no places given: no tray family


def test_the_same_shoe_always_scores_the_same() -> None:
    old, new = shoe_cards(1)[:400], shoe_cards(2)[:400]
    assert fit_test(old, new, DECKS, steps=500) == fit_test(old, new, DECKS, steps=500)


def test_unread_cards_and_short_shoes() -> None:
    old = shoe_cards(3)
    rng = random.Random(4)
    new = cut(a_shuffle(old, 16, rng), rng)[:400]
    blurred = [None if i % 10 == 0 else c for i, c in enumerate(new)]
    fit = fit_test(old[:400], blurred, DECKS)
    assert fit.z >= THRESHOLD  # four riffles still show with a tenth of the cards unread
    assert not_calibrated(old[:400], blurred, DECKS) == ""
    assert "not seen" in not_calibrated(old[:400], new[:300], DECKS)
    assert "decks" in not_calibrated(old[:300], new[:300], 6)
    with pytest.raises(ValueError, match="8 decks only"):
        fit_test(old[:300], new[:300], 6)


# ---------------------------------------------------------------- through the game core


def fit_alerts(events: list, config: AnalyticsConfig | None = None) -> list[IntegrityAlert]:
    state = initial_state(Rules(), config)
    out = []
    for ev in events:
        state, raised = protect(state, ev)
        assert not [e for e in raised if isinstance(e, IntegrityAlert)
                    and e.evidence.get("test") == "shuffle_fit_previous_shoe"]
        if isinstance(ev, ShoeEnded):  # as the daemon and replay call it
            state, raised = shoe_fit(state)
            out += list(raised)
            assert shoe_fit(state) == (state, ())  # once a shoe
    return out


def test_the_alert_comes_at_the_end_of_a_five_riffle_shoe() -> None:
    shoe = Shoe(Rules())
    first_cards = shoe_cards(21)
    first = deal(first_cards, shoe)
    rng = random.Random(22)
    second = deal(cut(strip(riffles(tray(first_cards, first), 5, rng), rng), rng), shoe)
    assert isinstance(second[-1], ShoeEnded) and second[-1].reason == "cut_card"
    alerts = fit_alerts(first + second)
    assert len(alerts) == 1
    alert = alerts[0]
    assert alert.kind == "shuffle_weak" and alert.shoe == 2
    assert alert.round == second[-1].rounds  # the last round: it looks at the whole shoe
    ev = alert.evidence
    assert ev["statistic"] >= ev["threshold"] == THRESHOLD
    assert ev["reference"] == "previous_shoe" and ev["previous_shoe_known"] is True
    assert "dealt in full" in ev["previous_shoe"]
    assert ev["cards_seen"] == sum(1 for e in second if type(e).__name__ in
                                   ("BurnIndicator", "CardBurned", "CardDealt"))
    assert ev["component"].startswith("whole-shoe fit, 5 riffles")
    for key in ("score", "old_neighbours_seen", "estimated_riffles", "false_alarm_rate"):
        assert key in ev
    # switched off, or a fresh shoe after it: no fit alert
    assert not fit_alerts(first + second, AnalyticsConfig(shuffle_fit=False))
    third = deal(shoe_cards(23), shoe)
    assert not [a for a in fit_alerts(first + second + third) if a.shoe == 3]


def test_no_fit_when_the_previous_shoe_was_not_dealt_to_its_end() -> None:
    shoe = Shoe(Rules())
    first_cards = shoe_cards(24)
    first = list(shoe.apply(I.NewShoe()))
    for code in first_cards[:150]:
        first += shoe.apply(I.CardSeen(parse_card(code)))
    rng = random.Random(25)
    second = deal(cut(riffles(first_cards, 4, rng), rng), shoe)
    assert not fit_alerts(first + second)


# ------------------------------------------------------------------ through the daemon


def _through_daemon(path, cards_of_shoes: list[list[str]], lose_fit: bool = False) -> None:
    from shoe_controller.daemon import Daemon
    from shoe_controller.journal import Journal

    d = Daemon(rules=Rules(), journal=Journal.open(path, table_id="T1"))
    if lose_fit:
        d.core._shoe_fit = None  # as if the process died during each shoe's fit
    d.start()
    for cards in cards_of_shoes:
        d.submit(I.NewShoe())
        for i, code in enumerate(cards):
            if i == len(cards) - 16:
                d.submit(I.CutCardSeen())
            d.submit(I.CardSeen(parse_card(code)))
        d.drain()
        d.run_projection()
    if lose_fit:
        d.journal.close()
    else:
        d.close()


def _fit_entries(path) -> list[dict]:
    from shoe_controller.journal import Journal

    with Journal.open(path, readonly=True) as j:
        return [e.data for e in j.replay() if e.type == "integrity_alert"
                and e.data["evidence"]["test"] == "shuffle_fit_previous_shoe"]


def test_a_fit_lost_at_the_end_of_a_shoe_is_run_again_on_resume(tmp_path, caplog) -> None:
    first = shoe_cards(31)
    events = deal(first, Shoe(Rules()))
    rng = random.Random(32)
    second = cut(strip(riffles(tray(first, events), 5, rng), rng), rng)
    ref = tmp_path / "ref.sqlite3"
    _through_daemon(ref, [first, second])
    expected = _fit_entries(ref)
    assert len(expected) == 1 and expected[0]["shoe"] == 2
    lost = tmp_path / "lost.sqlite3"
    _through_daemon(lost, [first, second], lose_fit=True)
    assert _fit_entries(lost) == []
    from shoe_controller.daemon import Daemon
    from shoe_controller.journal import Journal

    d = Daemon(rules=Rules(), journal=Journal.open(lost, table_id="T1"))
    d.start()
    d.close()
    assert [e["evidence"] for e in _fit_entries(lost)] == [expected[0]["evidence"]]
    assert "the whole-shoe fit's alert" in caplog.text
    d = Daemon(rules=Rules(), journal=Journal.open(lost, table_id="T1"))
    d.start()  # found in the journal now: not run again
    d.close()
    assert len(_fit_entries(lost)) == 1
