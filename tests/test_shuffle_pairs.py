"""The pair count (``game.shuffle_pairs``, issue 18): the count against a plain loop over
every pair of cards, the tray's weights against every way its rounds could have been
collected, the fair mean against the placements of a small shoe, fair shoes' z-scores
(about standard normal) and weak ones' (shuffled by the tests' own riffle model,
tests/support/riffles.py), and the alert as the shoe is dealt, through the game core."""

from __future__ import annotations

import itertools
import random
import statistics

import numpy as np
import pytest

from shoe_controller.game import inputs as I
from shoe_controller.game.cards import ALL_CARDS, parse_card
from shoe_controller.game.events import IntegrityAlert, ShoeEnded
from shoe_controller.game.protection import AnalyticsConfig
from shoe_controller.game.rules import Rules
from shoe_controller.game.shoe import Shoe
from shoe_controller.game.shuffle_pairs import (
    DISTANCES,
    MIN_CARDS,
    PairTest,
    dealt_pairs,
    kernel,
    tray_pairs,
)
from tests.support.alerts import alerts_after_resuming, alerts_of, riffled_after
from tests.support.dealing import deal, hand_tray, tray
from tests.support.riffles import cut, riffles, strip

DECKS = 8
THRESHOLD = AnalyticsConfig().shuffle_pairs_z
TEST = "shuffle_pairs_previous_shoe"


def shoe_cards(seed: float) -> list[str]:
    cards = [c.code for c in ALL_CARDS for _ in range(DECKS)]
    random.Random(seed).shuffle(cards)
    return cards


def plain_count(old: list[str | None], new: list[str | None], pairs=None) -> float:
    """The count written plainly: for every pair of new places (x, y), x != y, and every
    old pair (a, b, d, weight) whose codes they hold, weight * f_d((y - x) mod n)."""
    f = kernel(52 * DECKS)
    n = 52 * DECKS
    if pairs is None:  # old neighbours 1-4 apart, both read, weight 1
        pairs = [(old[i], old[i + d], d, 1.0) for d in range(1, DISTANCES + 1)
                 for i in range(len(old) - d) if old[i] is not None and old[i + d] is not None]
    by_codes: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for a, b, d, w in pairs:
        by_codes.setdefault((a, b), []).append((d, w))
    total = 0.0
    for x, a in enumerate(new):
        for y, b in enumerate(new):
            if x == y or a is None or b is None:
                continue
            for d, w in by_codes.get((a, b), []):
                total += w * f[d - 1][(y - x) % n]
    return total


@pytest.mark.parametrize("seed", [1, 2])
def test_the_count_is_the_sum_over_every_pair_of_cards(seed: int) -> None:
    rng = random.Random(seed)
    old: list[str | None] = shoe_cards(seed)[:300]
    new: list[str | None] = shoe_cards(seed + 10)[:250]
    for k in rng.sample(range(250), 6):
        new[k] = None
    old[5] = None
    test = PairTest.start(dealt_pairs(old), DECKS)
    (_, count, _), = test.looks(new, [len(new)])
    assert count == pytest.approx(plain_count(old, new), rel=1e-9, abs=1e-6)
    # a look at a prefix counts only the pairs whose both cards are in it
    (_, early, _), = test.looks(new, [120])
    assert early == pytest.approx(plain_count(old, new[:120]), rel=1e-9, abs=1e-6)


@pytest.mark.parametrize("burned_first", [0, 1, 2])
def test_the_tray_weights_are_every_way_of_collecting_the_rounds(burned_first: int) -> None:
    """Rounds of 4-6 cards (the first after 0-2 burned cards, a card burned between two
    rounds, a card not read); every assignment of the rounds' ways (Player's hand first
    or Banker's), tray built and its neighbour pairs counted plainly, averaged: the
    weights."""
    rng = random.Random(5 + burned_first)
    places: list[tuple[int, str] | None] = [None] * burned_first
    for r in range(1, 5):
        extra = rng.sample(["player", "banker", "player"], rng.randint(0, 2))
        hands = ["player", "banker", "player", "banker", *extra]
        places += [(r, h) for h in hands]
        if r == 2:
            places.append(None)  # a card burned between rounds
    codes: list[str | None] = [f"{'A23456789TJQK'[i % 13]}{'SHDC'[i // 13 % 4]}"
                               for i in range(len(places))]
    codes[burned_first + 5] = None  # not read: its pairs are lost
    rounds = sorted({p[0] for p in places if p})
    want: dict[tuple[str, str, int], float] = {}
    ways = list(itertools.product((0, 1), repeat=len(rounds)))
    for way in ways:
        order: list[int] = []
        k = 0
        while k < len(places):
            if places[k] is None:
                order.append(k)
                k += 1
                continue
            r = places[k][0]
            members = [j for j in range(len(places)) if places[j] and places[j][0] == r]
            player = [j for j in members if places[j][1] == "player"]
            banker = [j for j in members if places[j][1] == "banker"]
            order += player + banker if way[rounds.index(r)] == 0 else banker + player
            k = members[-1] + 1
        for d in range(1, DISTANCES + 1):
            for x, y in zip(order, order[d:], strict=False):
                if codes[x] is None or codes[y] is None:
                    continue
                key = (codes[x], codes[y], d)
                want[key] = want.get(key, 0.0) + 1.0 / len(ways)
    got = {(a, b, d): w for a, b, d, w in tray_pairs(codes, places)}
    assert got.keys() == want.keys()
    for key, w in want.items():
        assert got[key] == pytest.approx(w)


def test_the_fair_mean_is_the_mean_over_placements() -> None:
    """A short prefix of old neighbours' codes against the new cards placed at random
    (the same codes, every order alike): the mean of the plain count over 3,000 random
    placements against the test's fair mean, and their spread against its variance."""
    old = shoe_cards(7)
    new = shoe_cards(8)[:60]
    test = PairTest.start(dealt_pairs(old), DECKS)
    rng = random.Random(9)
    counts = []
    for _ in range(3000):
        placed = list(new)
        rng.shuffle(placed)
        counts.append(test.looks(placed, [len(placed)])[0][1])
    _, _, mean = test.looks(new, [len(new)])[0]
    z, count, _ = test.looks(new, [len(new)])[0]
    sd = (count - mean) / z
    assert statistics.fmean(counts) == pytest.approx(mean, abs=3 * sd / np.sqrt(3000))
    assert statistics.stdev(counts) == pytest.approx(sd, rel=0.15)


def test_fair_shoes_are_about_standard_normal_and_riffled_ones_far_above() -> None:
    fair = [PairTest.start(dealt_pairs(shoe_cards(100 + s)), DECKS).z(shoe_cards(200 + s))
            for s in range(120)]
    assert abs(statistics.fmean(fair)) < 0.3
    assert 0.7 < statistics.stdev(fair) < 1.15
    assert max(fair) < THRESHOLD
    rng = random.Random(3)
    for k, least in ((4, THRESHOLD), (5, THRESHOLD)):
        weak = []
        for s in range(6):
            old = shoe_cards(300 + 10 * k + s)
            weak.append(PairTest.start(dealt_pairs(old), DECKS).z(
                cut(strip(riffles(old, k, rng), rng), rng)))
        assert statistics.median(weak) >= least, (k, weak)


def test_the_kernel_averages_zero_and_favours_the_gaps_riffles_leave() -> None:
    f = kernel(52 * DECKS)
    assert f.shape == (DISTANCES, 52 * DECKS)
    assert np.allclose(f[:, 1:].mean(axis=1), 0.0) and not f[:, 0].any()
    # the tests' own riffles: old neighbours' new gaps, over 40 shoes
    rng = random.Random(4)
    n = 52 * DECKS
    gain = []
    for _ in range(40):
        moved = cut(strip(riffles(list(range(n)), 6, rng), rng), rng)
        where = {card: p for p, card in enumerate(moved)}
        gain += [f[0][(where[i + 1] - where[i]) % n] for i in range(n - 1)]
    assert statistics.fmean(gain) > 1.0  # a fair gap averages 0


# ------------------------------------------------------------------ through the game core


def pair_alerts(events: list, config: AnalyticsConfig | None = None) -> list[IntegrityAlert]:
    return alerts_of(TEST, events, config)


def test_the_alert_comes_while_a_four_riffle_shoe_is_dealt() -> None:
    shoe = Shoe(Rules())
    first, second = riffled_after(shoe_cards(31), 32, shoe=shoe)
    assert isinstance(second[-1], ShoeEnded) and second[-1].reason == "cut_card"
    alerts = pair_alerts(first + second)
    assert len(alerts) == 1  # once a shoe
    alert = alerts[0]
    assert alert.kind == "shuffle_weak" and alert.shoe == 2
    assert alert.round is not None and alert.round < second[-1].rounds  # before the end
    ev = alert.evidence
    assert ev["statistic"] >= ev["threshold"] == THRESHOLD
    assert ev["reference"] == "previous_shoe" and ev["previous_shoe_known"] is True
    assert "dealt in full" in ev["previous_shoe"]
    assert ev["cards_seen"] >= MIN_CARDS and ev["unread"] == 0
    assert ev["component"].startswith("pair count")
    for key in ("count", "fair_mean", "estimated_riffles", "false_alarm_rate"):
        assert key in ev
    assert not pair_alerts(first + second, AnalyticsConfig(shuffle_pairs=False))
    third = deal(shoe_cards(33), shoe)  # a fair shoe after it
    assert not [a for a in pair_alerts(first + second + third) if a.shoe == 3]


def test_a_tray_collected_hand_by_hand_is_caught_by_its_own_family() -> None:
    shoe = Shoe(Rules())
    first_cards = shoe_cards(41)
    first = deal(first_cards, shoe)
    rng = random.Random(42)
    collected = hand_tray(first_cards, first, rng)
    assert sorted(collected) == sorted(first_cards)
    second = deal(cut(strip(riffles(collected, 4, rng), rng), rng), shoe)
    alerts = pair_alerts(first + second)
    assert len(alerts) == 1
    assert alerts[0].evidence["component"].endswith("tray collected hand by hand")


def test_no_pair_count_without_the_previous_shoe_in_full() -> None:
    shoe = Shoe(Rules())
    first_cards = shoe_cards(51)
    first = deal(first_cards, shoe)
    rng = random.Random(52)
    second = deal(cut(strip(riffles(tray(first_cards, first), 4, rng), rng), rng), shoe)
    assert pair_alerts(first + second)
    # the journal begins with the riffled shoe: the previous order is not known
    assert not pair_alerts(second)
    # the previous shoe stopped after 150 cards, not at its cut card
    shoe = Shoe(Rules())
    partial = list(shoe.apply(I.NewShoe()))
    for code in first_cards[:150]:
        partial += shoe.apply(I.CardSeen(parse_card(code)))
    third = deal(cut(strip(riffles(first_cards, 4, rng), rng), rng), shoe)
    assert not pair_alerts(partial + third)



def test_a_daemon_resuming_after_the_alert_does_not_raise_it_again() -> None:
    """The journal folded on resume (``protection.fold``) marks the alert raised, so the
    rest of the shoe does not raise it a second time; resumed before it, the rest does."""
    first, second = riffled_after(shoe_cards(71), 72)
    found = alerts_after_resuming(TEST, first + second, len(first))
    assert found == (0, 1)


def test_dealt_pairs_are_the_read_neighbours_one_to_four_apart() -> None:
    old = ["AS", "KH", None, "2C", "3D", "4S", "5H"]
    want = [(old[i], old[i + d], d, 1.0) for d in range(1, 5) for i in range(len(old) - d)
            if old[i] is not None and old[i + d] is not None]
    assert list(dealt_pairs(old)) == want
    assert ("AS", "3D", 4, 1.0) in want and not [p for p in want if p[2] > 4]


def test_pairs_farther_than_the_kernel_reaches_are_left_out() -> None:
    old, new = shoe_cards(81), shoe_cards(82)[:300]
    near = PairTest.start(dealt_pairs(old), DECKS).looks(new, [300])
    far = PairTest.start(dealt_pairs(old, distances=DISTANCES + 2), DECKS).looks(new, [300])
    assert far[0] == pytest.approx(near[0])


def test_looks_too_early_or_with_no_pair_in_view() -> None:
    old, new = shoe_cards(91), shoe_cards(92)
    test = PairTest.start(dealt_pairs(old), DECKS)
    got = test.looks(new, [0, 1, 200, 2, 416])
    assert got[0] == got[1] == (0.0, 0.0, 0.0)
    assert got[2] == test.looks(new, [200])[0] and got[4] == test.looks(new, [416])[0]
    assert got[3][1] == pytest.approx(plain_count(old, new[:2]))
    # two cards whose codes were never old neighbours: nothing to count, z 0 (not NaN)
    lone = PairTest.start((("AS", "KH", 1, 1.0),), DECKS)
    assert lone.looks(["2C", "3D", "4S"], [3]) == [(0.0, 0.0, 0.0)]
    assert lone.z(["AS", "KH"]) != 0.0


def test_a_look_at_a_prefix_is_the_prefix_alone_whatever_order_the_pairs_come_in() -> None:
    old, new = shoe_cards(101), shoe_cards(102)
    pairs = dealt_pairs(old, distances=DISTANCES + 2)
    test = PairTest.start(pairs, DECKS)
    backwards = PairTest.start(pairs[::-1], DECKS)  # farther pairs first: each is skipped
    for m in (150, 333):
        whole, alone = test.looks(new, [m])[0], test.looks(new[:m], [m])[0]
        assert whole == pytest.approx(alone)
        assert backwards.looks(new, [m])[0] == pytest.approx(whole)


def test_a_stacked_shoe_of_one_code_is_counted_up_to_its_limit() -> None:
    """A shoe of 70 aces of spades among other cards (foreign cards: the core alerts on
    them): the count takes the first 64 copies and does not fail."""
    old = shoe_cards(111)
    new = ["AS"] * 70 + shoe_cards(112)[:200]
    random.Random(113).shuffle(new)
    (z, count, _), = PairTest.start(dealt_pairs(old), DECKS).looks(new, [len(new)])
    kept, seen = [], 0
    for card in new:  # the 65th ace on is not counted
        seen += card == "AS"
        kept.append(None if card == "AS" and seen > 64 else card)
    assert count == pytest.approx(plain_count(old, kept), rel=1e-9, abs=1e-6)
    assert np.isfinite(z)
