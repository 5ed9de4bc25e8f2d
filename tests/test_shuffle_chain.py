"""The chain test (``game.shuffle_chain``, issue 18): its forward pass against a plain sum
over every matching of a few identical cards (and over every way a tray's rounds could
have been collected), its links into the places not dealt yet against plain loops, fair
and riffled shoes (the tests' own riffle model, tests/support/riffles.py), and the alert
as the shoe is dealt, through the game core."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from shoe_controller.game.cards import ALL_CARDS
from shoe_controller.game.events import IntegrityAlert, ShoeEnded
from shoe_controller.game.protection import AnalyticsConfig, initial_state, protect
from shoe_controller.game.rules import Rules
from shoe_controller.game.shoe import Shoe
from shoe_controller.game.shuffle_chain import FAMILIES, LOOKS, ChainTest, _gaps
from tests.support.alerts import alerts_after_resuming, alerts_of, riffled_after
from tests.support.dealing import deal, hand_tray, left_the_shoe, tray
from tests.support.riffles import cut, riffles, strip

DECKS = 8
THRESHOLD = AnalyticsConfig().shuffle_chain_nats
TEST = "shuffle_chain_previous_shoe"
CODES = [c.code for c in ALL_CARDS]


def shoe_cards(seed: float, decks: int = DECKS) -> list[str]:
    cards = [c.code for c in ALL_CARDS for _ in range(decks)]
    random.Random(seed).shuffle(cards)
    return cards


def plain_log_lr(old: list[str | None], new: list[str | None], seen: int, decks: int,
                 h: np.ndarray, orders: list[tuple[float, list[str]]] | None = None) -> float:
    """The chain's sum written out: every state sequence (each old card at a new place
    holding its code, or at "not dealt yet") and, for a tray collected by hand, every
    order with its chance; against the fair chain's sum. Links into and out of the places
    not dealt yet by plain loops over them."""
    cards = 52 * decks
    dealt = new[:seen]
    later = range(seen, cards)
    unseen = cards - seen

    def link(p: int | None, q: int | None) -> float:  # None: not dealt yet
        if p is not None and q is not None:
            return h[(q - p) % cards]
        if p is not None:
            return sum(h[(u - p) % cards] for u in later)
        if q is not None:
            return sum(h[(q - u) % cards] for u in later) / unseen
        return sum(h[(v - u) % cards] for u in later for v in later) / unseen

    def states(code: str) -> list[tuple[int | None, float]]:
        here = [(p, 1.0) for p, c in enumerate(dealt) if c == code]
        left = max(decks - len(here), 0)
        return here + ([(None, left / unseen)] if unseen else [])

    def chain_sum(sequence: list[str]) -> float:
        total = 0.0
        for path in itertools.product(*(states(c) for c in sequence)):
            value = 1.0 / cards * path[0][1]
            for (p, _), (q, e) in itertools.pairwise(path):
                value *= link(p, q) * e
            total += value
        return total

    def fair(code: str) -> float:
        here = sum(1 for c in dealt if c == code)
        return math.log((here + max(decks - here, 0)) / cards)

    if orders is None:
        orders = [(1.0, [c for c in old if c is not None])]
    total = sum(w * chain_sum(seq) for w, seq in orders)
    return math.log(total) - sum(fair(c) for c in orders[0][1])


@pytest.mark.parametrize("seen", [104, 60])
def test_the_forward_pass_is_the_sum_over_every_matching(seen: int) -> None:
    """Two decks, six old cards read (three codes twice over), the new shoe seen whole
    or in part: each family's log LR equals the plain sum over all 3**6 or 2**6 paths."""
    new = shoe_cards(5, decks=2)
    old: list[str | None] = [None] * 104
    for k, code in zip((3, 4, 10, 11, 12, 40), ("AS", "KH", "AS", "7D", "KH", "7D"),
                       strict=True):
        old[k] = code
    test = ChainTest.start(old, None, decks=2, controls=2)
    got = test.scores(new, (seen,))
    for f in range(len(FAMILIES)):
        want = plain_log_lr(old, new, seen, 2, _gaps(104, FAMILIES)[f])
        assert got[f, 0, 0] == pytest.approx(want, abs=1e-4)
    # a control is the same sum with the old codes renamed
    renamed = [CODES[test.renamings[1][CODES.index(c)]] if c else None for c in old]
    want = plain_log_lr(renamed, new, seen, 2, _gaps(104, FAMILIES)[0])
    assert got[0, 0, 1] == pytest.approx(want, abs=1e-4)


def test_a_tray_by_hand_is_summed_over_both_ways_of_collecting_each_round() -> None:
    new = shoe_cards(6, decks=2)
    old = ["AS", "KH", "7D", "KH", "AS", "2C", "7D", None]
    places = [None, (1, "player"), (1, "banker"), (1, "player"), (1, "banker"),
              (2, "player"), (2, "banker"), None]
    test = ChainTest.start(old, places, decks=2, controls=2)
    got = test.scores(new, (80,))
    # round 1 is cards 1-4 (player 1, 3; banker 2, 4); round 2 cards 5-6
    ways = []
    for one, two in itertools.product((0, 1), repeat=2):
        r1 = [old[1], old[3], old[2], old[4]] if one == 0 else [old[2], old[4], old[1], old[3]]
        r2 = [old[5], old[6]] if two == 0 else [old[6], old[5]]
        ways.append((0.25, [old[0], *r1, *r2]))
    for f in (0, 3):
        want = plain_log_lr(old, new, 80, 2, _gaps(104, FAMILIES)[f], ways)
        assert got[f, 0, 0] == pytest.approx(want, abs=1e-4)


def test_several_looks_in_one_pass_are_each_look_alone() -> None:
    old, new = shoe_cards(7), shoe_cards(8)
    test = ChainTest.start(old, None, DECKS)
    at = [90, 200, 416]
    for both, one in zip(test.looks(new, at), [test.look(new[:m]) for m in at], strict=True):
        assert both.excess == pytest.approx(one.excess, abs=1e-3)
        assert both.z == pytest.approx(one.z, abs=1e-4)
        assert both.log_lr == pytest.approx(one.log_lr, abs=1e-3)


def weak_shoe(seed: int, k: int, by_hand: bool = False
              ) -> tuple[list[str], list, list[str]]:
    """(the previous shoe's cards left in order, where they went, the new shoe's cards in
    the order they leave it), the new shoe being the previous tray given ``k`` riffles,
    a strip and a cut (``k`` = 0: a fair shuffle)."""
    shoe = Shoe(Rules())
    first_cards = shoe_cards(seed)
    first = deal(first_cards, shoe)
    rng = random.Random(seed + 1)
    stack = hand_tray(first_cards, first, rng) if by_hand else tray(first_cards, first)
    cards = cut(strip(riffles(stack, k, rng), rng), rng) if k else shoe_cards(seed + 2)
    old, places = left_the_shoe(first)
    return old, places, left_the_shoe(deal(cards, shoe))[0]


def best(old: list[str], places: list, new: list[str], m: int) -> float:
    """The statistic of the first ``m`` cards, the larger of the two trays'."""
    return max(ChainTest.start(old, None, DECKS).look(new[:m]).excess,
               ChainTest.start(old, places, DECKS).look(new[:m]).excess)


def test_fair_shoes_stay_low_and_riffled_ones_rise() -> None:
    for seed in (101, 102, 103):
        old, places, new = weak_shoe(seed, 0)
        assert best(old, places, new, len(new)) < THRESHOLD
    for seed in (111, 112):  # four riffles: within the first hundred and fifty cards
        old, places, new = weak_shoe(seed, 4)
        assert best(old, places, new, 150) >= THRESHOLD
    for seed in (121, 122):  # five, the tray collected by hand: by the shoe's end
        old, places, new = weak_shoe(seed, 5, by_hand=True)
        assert ChainTest.start(old, places, DECKS).look(new).excess >= THRESHOLD


def test_a_riffled_shoe_against_another_old_shoe_is_fair() -> None:
    """The statistic is about *this* old order: against an unrelated one it is low."""
    old, places, new = weak_shoe(131, 4)
    other, other_places, _ = weak_shoe(132, 0)
    assert best(old, places, new, len(new)) > 3 * THRESHOLD
    assert best(other, other_places, new, len(new)) < THRESHOLD


def chain_alerts(events: list, config: AnalyticsConfig | None = None) -> list[IntegrityAlert]:
    return alerts_of(TEST, events, config)


def test_the_alert_comes_while_a_four_riffle_shoe_is_dealt() -> None:
    shoe = Shoe(Rules())
    first, second = riffled_after(shoe_cards(141), 142, shoe=shoe)
    assert isinstance(second[-1], ShoeEnded) and second[-1].reason == "cut_card"
    alerts = chain_alerts(first + second)
    assert len(alerts) == 1  # once a shoe
    alert = alerts[0]
    assert alert.kind == "shuffle_weak" and alert.shoe == 2
    assert alert.round is not None and alert.round < 40
    ev = alert.evidence
    assert ev["statistic"] >= ev["threshold"] == THRESHOLD
    assert ev["reference"] == "previous_shoe" and ev["previous_shoe_known"] is True
    assert "dealt in full" in ev["previous_shoe"]
    assert ev["cards_seen"] in range(LOOKS[0], LOOKS[-1] + 10) and ev["unread"] == 0
    assert ev["component"].startswith("chain")
    assert ev["estimated_riffles"].startswith("about ")
    assert ev["log_likelihood_ratio"] > ev["controls_mean"] and ev["controls_sd"] > 0
    assert ev["z"] > 0 and ev["statistic"] < ev["log_likelihood_ratio"] - ev["controls_mean"]
    assert "false_alarm_rate" in ev
    assert not chain_alerts(first + second, AnalyticsConfig(shuffle_chain=False))
    third = deal(shoe_cards(143), shoe)  # a fair shoe after it
    assert not [a for a in chain_alerts(first + second + third) if a.shoe == 3]
    # the journal begins with the riffled shoe: the previous order is not known
    assert not chain_alerts(second)


def test_a_tray_collected_by_hand_is_caught_by_its_own_tray() -> None:
    shoe = Shoe(Rules())
    first_cards = shoe_cards(151)
    first = deal(first_cards, shoe)
    rng = random.Random(152)
    second = deal(cut(strip(riffles(hand_tray(first_cards, first, rng), 4, rng), rng), rng),
                  shoe)
    alerts = chain_alerts(first + second)
    assert len(alerts) == 1
    assert alerts[0].evidence["component"].endswith("tray collected hand by hand")


def test_it_looks_at_its_marks_and_at_the_shoes_end_only() -> None:
    shoe = Shoe(Rules())
    first_cards = shoe_cards(161)
    first = deal(first_cards, shoe)
    second = deal(shoe_cards(162), shoe)
    state = initial_state(Rules())
    for ev in first:
        state, _ = protect(state, ev)
    assert state.previous_known is False
    ends = 0
    for ev in second:
        state, _ = protect(state, ev)
        passed = sum(1 for m in LOOKS if len(state.sequence) >= m)
        assert state.previous_known and state.chain_looks <= passed
        if type(ev).__name__ in ("ResultConfirmed", "ShoeEnded"):  # a look is due now
            ends += 1
            assert state.chain_looks == passed
    assert ends > 60 and state.chain_looks == len(LOOKS) and state.chain_end is True


def test_a_daemon_resuming_after_the_alert_does_not_raise_it_again() -> None:
    first, second = riffled_after(shoe_cards(171), 172)
    found = alerts_after_resuming(TEST, first + second, len(first))
    assert found == (0, 1)


def test_unread_cards_and_a_stacked_shoe_are_scored_without_error() -> None:
    old = shoe_cards(181)
    new: list[str | None] = list(shoe_cards(182))
    for k in range(0, 400, 7):
        new[k] = None
    look = ChainTest.start(old, None, DECKS).look(new[:300])
    assert math.isfinite(look.excess) and look.excess < THRESHOLD
    stacked = ["AS"] * 70 + old[:330]  # 70 copies of one code
    look = ChainTest.start(old, None, DECKS).look(stacked)
    assert math.isfinite(look.excess) and math.isfinite(look.z)
    assert math.isfinite(ChainTest.start(old, None, DECKS).look([]).excess)
