"""The discard tray of a dealer who collects each round hand by hand (issue 18): the
tray's neighbour probabilities against a brute-force count over every way the rounds can
be collected, the thread filter following such a tray, and the martingale kept."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter

import pytest

from shoe_controller.game.cards import ALL_CARDS
from shoe_controller.game.shuffle_tracking import ShuffleTest, tray_edges, tray_units
from tests.support.dealing import deal, left_the_shoe
from tests.support.riffles import a_shuffle

DECKS = 8


def deal_places(cards: int, rng: random.Random, burned: int = 3) -> list[tuple[int, str] | None]:
    """Where each card of a shoe went: ``burned`` burned cards, then rounds of 4-6 cards
    dealt Player, Banker, Player, Banker and up to one third card each."""
    places: list[tuple[int, str] | None] = [None] * burned
    rnd = 0
    while len(places) < cards:
        rnd += 1
        size = rng.choice((4, 5, 5, 6))
        hands = ["player", "banker", "player", "banker", rng.choice(("player", "banker"))]
        if size == 6:
            hands[4:] = ["player", "banker"]
        places += [(rnd, h) for h in hands[:size]]
    return places[:cards]


def collect(places: list[tuple[int, str] | None], player_first: list[bool]) -> list[int]:
    """The tray, as indices of the dealt order: burned cards as they came, each round's
    Player cards then Banker's (or the other way round), each hand in the order dealt."""
    out: list[int] = []
    rounds: dict[int, list[int]] = {}
    order: list[int | tuple[int]] = []
    for i, p in enumerate(places):
        if p is None:
            order.append((i,))
        else:
            if p[0] not in rounds:
                rounds[p[0]] = []
                order.append(p[0])
            rounds[p[0]].append(i)
    for item in order:
        if isinstance(item, tuple):
            out.append(item[0])
            continue
        cards = rounds[item]
        hand = {h: [i for i in cards if places[i][1] == h] for h in ("player", "banker")}
        first, second = ("player", "banker") if player_first[item - 1] else ("banker", "player")
        out += hand[first] + hand[second]
    return out


def test_tray_edges_are_the_share_of_collections_that_put_the_two_cards_together() -> None:
    rng = random.Random(3)
    places = deal_places(23, rng, burned=2)
    n_rounds = max(p[0] for p in places if p is not None)
    assert n_rounds >= 4
    counts: Counter[tuple[int, int]] = Counter()
    orders = list(itertools.product((True, False), repeat=n_rounds))
    for player_first in orders:
        tray = collect(places, list(player_first))
        assert sorted(tray) == list(range(len(places)))
        counts.update(itertools.pairwise(tray))
    want = {edge: n / len(orders) for edge, n in counts.items()}
    got = tray_edges(places)
    assert got.keys() == want.keys()
    for edge, p in want.items():
        assert math.isclose(got[edge], p), (edge, got[edge], p)


def test_burned_cards_and_a_one_hand_round_keep_the_dealt_order() -> None:
    places = [None, None, (1, "player"), (1, "player"), None]
    assert tray_edges(places) == {(0, 1): 1.0, (1, 2): 1.0, (2, 3): 1.0, (3, 4): 1.0}


def test_places_must_match_the_reference() -> None:
    old = [c.code for c in ALL_CARDS]
    with pytest.raises(ValueError, match="places: 3 for 52 reference cards"):
        ShuffleTest.start(old, 1, places=[None] * 3)


def by_hand_shoe(seed: int, a: int) -> tuple[list[str], list[tuple[int, str] | None], list[str]]:
    """(previous shoe's dealt order, its places, the new shoe's first 380 cards): the
    previous shoe collected hand by hand, given an ``a``-shuffle and a cut."""
    rng = random.Random(seed)
    codes = [c.code for c in ALL_CARDS for _ in range(DECKS)]
    rng.shuffle(codes)
    places = deal_places(len(codes), rng)
    tray = collect(places, [rng.random() < 0.5 for _ in range(len(codes))])
    new = a_shuffle(tray, a, rng)
    k = rng.randrange(100, 300)
    new = new[k:] + new[:k]
    return codes, places, [codes[i] for i in new[:380]]


def test_a_tray_collected_by_hand_is_followed_when_the_rounds_are_known() -> None:
    # five riffles of a tray collected hand by hand: the thread filter that knows the
    # rounds follows the threads across the hands' ends (without it, every thread breaks
    # at every round), and the evidence names the tray
    gains, fired_with, fired_without = [], 0, 0
    for seed in range(6):
        old, places, new = by_hand_shoe(seed, 32)
        with_places = ShuffleTest.start(old, DECKS, places=places).feed(new)
        without = ShuffleTest.start(old, DECKS).feed(new)
        gains.append(with_places.peak - without.peak)
        fired_with += with_places.peak >= 10
        fired_without += without.peak >= 10
        if with_places.peak >= 10:
            assert "tray" in with_places.component(), with_places.component()
    assert min(gains) > 2, gains  # natural log: e**2 times the evidence, or more
    assert (fired_with, fired_without) >= (3, 0), (fired_with, fired_without)
    assert fired_without == 0


def test_with_the_tray_each_card_is_still_a_fair_bet() -> None:
    # E[exp(statistic) after the next card] = exp(statistic now), the next card drawn from
    # what is left (brute force over the 52 codes): the repeated looks stay honest
    old, places, new = by_hand_shoe(9, 16)
    for seen in (new[:45], new[:160]):
        test = ShuffleTest.start(old, DECKS, places=places).feed(seen)
        left = {c.code: DECKS - seen.count(c.code) for c in ALL_CARDS}
        rest = sum(left.values())
        expected = sum(n / rest * math.exp(test.feed([code]).statistic)
                       for code, n in left.items() if n)
        assert math.isclose(expected, math.exp(test.statistic), rel_tol=1e-9)


def test_the_tray_components_are_named() -> None:
    from shoe_controller.game.shuffle_tracking import _component_name, _Threads

    old, places, _new = by_hand_shoe(1, 16)
    threads = ShuffleTest.start(old, DECKS, places=places)._trackers[4]
    names = {_component_name(threads, i) for i in range(len(threads.values))}
    per_packets = len(_Threads.WINDOWS) + len(_Threads.TRAY_SIDES)
    assert len(names) == len(_Threads.PACKETS) * per_packets
    assert "thread filter, 16 threads, tray forward" in names
    assert "thread filter, 48 threads, tray backward" in names


def test_the_projection_hands_the_previous_shoes_rounds_to_the_test() -> None:
    # two shoes through the real game core and the projection: the first collected hand by
    # hand, given five riffles and a cut. The alert's statistic is the test's with the
    # rounds as the events tell them (read here from the events, independently of the
    # projection); without them the test would not have fired by then.
    from shoe_controller.game.events import IntegrityAlert
    from shoe_controller.game.protection import initial_state, protect
    from shoe_controller.game.rules import Rules
    from shoe_controller.game.shoe import Shoe

    for seed in range(40, 60):
        rng = random.Random(seed)
        shoe = Shoe(Rules())
        first_cards = [c.code for c in ALL_CARDS for _ in range(DECKS)]
        rng.shuffle(first_cards)
        first = deal(first_cards, shoe)
        old, places = left_the_shoe(first)
        tray = [old[i] for i in collect(places, [rng.random() < 0.5 for _ in range(200)])]
        stack = tray + first_cards[len(old):]
        ids = a_shuffle(list(range(len(stack))), 32, rng)
        k = rng.randrange(100, 300)
        second_cards = [stack[i] for i in ids[k:] + ids[:k]]
        second = deal(second_cards, shoe)
        state, alerts = initial_state(Rules()), []
        for ev in first + second:
            state, raised = protect(state, ev)
            alerts += [e for e in raised if isinstance(e, IntegrityAlert)
                       and e.evidence.get("test") == "shuffle_weak_previous_shoe"]
        if not alerts:
            continue
        alert = alerts[0]
        seen, _ = left_the_shoe([e for e in second if getattr(e, "round", 0) is None
                                 or getattr(e, "round", 0) <= alert.round])
        with_rounds = ShuffleTest.start(old, DECKS, places=places).feed(seen)
        without = ShuffleTest.start(old, DECKS).feed(seen)
        assert alert.evidence["statistic"] == round(with_rounds.peak, 2)
        assert without.peak < alert.evidence["threshold"] <= with_rounds.peak
        return
    raise AssertionError("no shoe of these seeds raised shuffle_weak against the previous shoe")


def tray_reference_values(reference: list[str | None], places: list, new: list[str],
                          decks: int):
    """Every thread-filter component's log-martingale after each card of ``new``, from
    test_shuffle_tracking_mutants.py's plainly written filter, with the two tray windows
    of ``_Threads.TRAY_SIDES`` after each packet count's four plain ones: a card at old
    position ``q`` opens fronts at the cards that follow it in the tray (forward) or
    precede it (backward), each weighted by the brute-force-tested ``tray_edges``."""
    from tests.test_shuffle_tracking_mutants import (
        INDEX,
        PACKETS,
        WINDOWS,
        RefComponent,
        deal_through,
    )

    edges = tray_edges(places)

    class RefTray(RefComponent):
        def __init__(self, ref: list[int], a: int, forward: bool) -> None:
            super().__init__(ref, a, "forward", (), decks)
            self.forward = forward

        def fronts(self, q: int) -> list[tuple[int, float]]:
            if self.forward:
                return [(j, p) for (i, j), p in edges.items() if i == q]
            return [(i, p) for (i, j), p in edges.items() if j == q]

    ref = [INDEX[x] if x is not None else -1 for x in reference]
    comps: list[RefComponent] = []
    for a in PACKETS:
        comps += [RefComponent(ref, a, side, w, decks) for side, w in WINDOWS]
        comps += [RefTray(ref, a, True), RefTray(ref, a, False)]
    for _ in deal_through(comps, new, decks):
        yield [v for comp in comps for v in comp.logm]


def tray_cases() -> list[tuple[str, list, list, list, int]]:
    rng = random.Random(5)
    codes = [c.code for c in ALL_CARDS for _ in range(2)]
    rng.shuffle(codes)
    places = deal_places(len(codes), rng)
    tray = collect(places, [rng.random() < 0.5 for _ in range(len(codes))])
    whole = [codes[i] for i in a_shuffle(tray, 4, rng)]
    holed = [None if i in (0, 7, 8, 60) else x for i, x in enumerate(codes)]
    # a code whose only read copy is dealt twice makes the filter discontinuous (see
    # test_shuffle_tracking_mutants.cases): such codes are not dealt
    one_copy = {x for x in holed if x is not None and holed.count(x) == 1}
    old8, places8, new8 = by_hand_shoe(4, 32)
    return [
        ("2 decks, a tray given 2 riffles, whole shoe", codes, places, whole, 2),
        ("2 decks, unread reference cards", holed, places,
         [x for x in whole if x not in one_copy], 2),
        ("8 decks, a tray given 5 riffles", old8, places8, new8[:90], DECKS),
    ]


@pytest.mark.parametrize("name,reference,places,new,decks", tray_cases(),
                         ids=[c[0] for c in tray_cases()])
def test_the_tray_windows_are_their_description_card_by_card(name, reference, places, new,
                                                              decks) -> None:
    from shoe_controller.game.shuffle_tracking import _Threads

    want = tray_reference_values(reference, places, new, decks)
    test = ShuffleTest.start(reference, decks, places=places)
    for end, expected in enumerate(want):
        if end:
            test = test.feed(new[end - 1 : end])
        (flt,) = [t for t in test._trackers if isinstance(t, _Threads)]
        got = flt.values
        assert len(got) == len(expected)
        for i, (g, w) in enumerate(zip(got, expected, strict=True)):
            assert math.isclose(g, w, rel_tol=1e-9, abs_tol=1e-9), (name, end, i, g, w)


# -- the strip filter over the tray (a tray collected hand by hand, riffled, stripped) ----


def test_tray_before_is_the_share_of_collections_with_that_card_so_far_before() -> None:
    from shoe_controller.game.shuffle_tracking import tray_before

    rng = random.Random(8)
    places = deal_places(23, rng, burned=2)
    n_rounds = max(p[0] for p in places if p is not None)
    counts: Counter[tuple[int, int, int]] = Counter()  # (card, distance, card before)
    orders = list(itertools.product((True, False), repeat=n_rounds))
    for player_first in orders:
        tray = collect(places, list(player_first))
        for at, q in enumerate(tray):
            for d in (1, 2, 3):
                if at - d >= 0:
                    counts[(q, d, tray[at - d])] += 1
    got = tray_before(places, 3)
    assert len(got) == len(places)
    want = {key: n / len(orders) for key, n in counts.items()}
    have = {(q, d + 1, r): p for q, per in enumerate(got) for d, at in enumerate(per)
            for r, p in at.items()}
    assert have.keys() == want.keys()
    for key, p in want.items():
        assert math.isclose(have[key], p), (key, have[key], p)


def tray_strip_values(reference: list[str | None], places: list, new: list[str],
                      decks: int):
    """Every component of the strip filter over the tray, after each card of ``new``, from
    test_shuffle_strip.py's plainly written strip filter with the tray's neighbours: a
    card's forward front at the cards that may follow it in the tray (``tray_edges``,
    tested above by brute force), its backward fronts at the cards one, two and three
    before it there (``BACK`` times ``tray_before``, likewise)."""
    from shoe_controller.game.shuffle_tracking import _INDEX, tray_before
    from tests.test_shuffle_strip import BACK, STRIP_PACKETS, RefStrip
    from tests.test_shuffle_tracking_mutants import deal_through

    edges = tray_edges(places)
    before = tray_before(places, 3)

    class RefTrayStrip(RefStrip):
        def after(self, q: int) -> list[tuple[int, float]]:
            return [(j, p) for (i, j), p in edges.items() if i == q]

        def before(self, q: int) -> list[tuple[int, float]]:
            return [(r, w * p) for w, at in zip(BACK, before[q], strict=True)
                    for r, p in at.items()]

    ref = [_INDEX[x] if x is not None else -1 for x in reference]
    comps = [RefTrayStrip(ref, a, decks) for a in STRIP_PACKETS]
    for _ in deal_through(comps, new, decks):
        yield [v for comp in comps for v in comp.logm]


def stripped_by_hand_shoe(seed: int, a: int) -> tuple[list[str], list, list[str]]:
    """(previous shoe's dealt order, its places, the new shoe's first 380 cards): the
    previous shoe collected hand by hand, given an ``a``-shuffle, a strip and a cut."""
    from tests.test_shuffle_strip import strip

    rng = random.Random(seed)
    codes = [c.code for c in ALL_CARDS for _ in range(DECKS)]
    rng.shuffle(codes)
    places = deal_places(len(codes), rng)
    tray = collect(places, [rng.random() < 0.5 for _ in range(len(codes))])
    new = strip(a_shuffle(tray, a, rng), rng)
    k = rng.randrange(100, 300)
    new = new[k:] + new[:k]
    return codes, places, [codes[i] for i in new[:380]]


def tray_strip_cases() -> list[tuple[str, list, list, list, int]]:
    from tests.test_shuffle_strip import strip

    rng = random.Random(6)
    codes = [c.code for c in ALL_CARDS for _ in range(2)]
    rng.shuffle(codes)
    places = deal_places(len(codes), rng)
    tray = collect(places, [rng.random() < 0.5 for _ in range(len(codes))])
    whole = [codes[i] for i in strip(a_shuffle(tray, 4, rng), rng)]
    holed = [None if i in (0, 7, 8, 60) else x for i, x in enumerate(codes)]
    one_copy = {x for x in holed if x is not None and holed.count(x) == 1}  # see tray_cases
    old8, places8, new8 = stripped_by_hand_shoe(4, 16)
    return [
        ("2 decks, a tray given 2 riffles and a strip, whole shoe", codes, places, whole, 2),
        ("2 decks, unread reference cards", holed, places,
         [x for x in whole if x not in one_copy], 2),
        ("8 decks, a tray given 4 riffles and a strip", old8, places8, new8[:90], DECKS),
    ]


def _tray_strip(test: ShuffleTest):
    from shoe_controller.game.shuffle_tracking import _component_name, _StripThreads

    (flt,) = [t for t in test._trackers if isinstance(t, _StripThreads)
              and _component_name(t, 0).endswith(", tray")]
    return flt


@pytest.mark.parametrize("name,reference,places,new,decks", tray_strip_cases(),
                         ids=[c[0] for c in tray_strip_cases()])
def test_the_strip_filter_over_the_tray_is_its_description_card_by_card(
        name, reference, places, new, decks) -> None:
    want = tray_strip_values(reference, places, new, decks)
    test = ShuffleTest.start(reference, decks, places=places)
    for end, expected in enumerate(want):
        if end:
            test = test.feed(new[end - 1 : end])
        got = _tray_strip(test).values
        assert len(got) == len(expected) == 9
        for i, (g, w) in enumerate(zip(got, expected, strict=True)):
            assert math.isclose(g, w, rel_tol=1e-9, abs_tol=1e-9), (name, end, i, g, w)


def test_the_strip_filter_over_the_tray_is_a_fair_bet_card_by_card() -> None:
    # each of its components' factors has mean 1 under a fair shuffle (brute force over
    # the codes left), with its fronts in use; the whole test with it is checked above
    # (test_with_the_tray_each_card_is_still_a_fair_bet)
    import numpy as np

    old, places, new = stripped_by_hand_shoe(12, 16)
    flt = _tray_strip(ShuffleTest.start(old, DECKS, places=places).feed(new[:120])).copy()
    assert flt.fwd.sum() > 0 and flt.back.sum() > 0
    left = {c.code: DECKS - new[:120].count(c.code) for c in ALL_CARDS}
    rest = sum(left.values())
    total = np.zeros_like(flt.logm)
    from shoe_controller.game.shuffle_tracking import _INDEX

    for code, n in left.items():
        if n:
            t = flt.copy()
            before = t.logm.copy()
            t.predict(_INDEX[code], n / rest)
            total += n / rest * np.exp(t.logm - before)
    assert np.allclose(total, 1.0, rtol=1e-9)


def test_a_stripped_tray_collected_by_hand_is_followed_better_over_the_tray() -> None:
    # four riffles, a strip and a cut of a tray collected hand by hand: the strip filter
    # over the tray scores above the strip filter over the dealt order in most shoes
    from shoe_controller.game.shuffle_tracking import _component_name, _StripThreads

    wins, margins = 0, []
    for seed in range(8):
        old, places, new = stripped_by_hand_shoe(300 + seed, 16)
        test = ShuffleTest.start(old, DECKS, places=places).feed(new)
        best = {}
        for t in test._trackers:
            if isinstance(t, _StripThreads):
                best[_component_name(t, 0).endswith(", tray")] = max(t.values)
        wins += best[True] > best[False]
        margins.append(best[True] - best[False])
    assert wins >= 6, margins
    assert sorted(margins)[4] > 2, margins  # median gain above e**2


def test_tray_units_give_each_round_players_hand_then_bankers() -> None:
    # written out plainly: a round with both hands is (Player's indices, Banker's indices)
    # in the order dealt; a burned card, or a round with one hand only, is a plain list
    places = [None, (1, "player"), (1, "banker"), (1, "player"), (1, "banker"), (1, "banker"),
              None, (2, "banker"), (2, "player"), (2, "banker"), (2, "player"), (3, "player")]
    want = [[0], ([1, 3], [2, 4, 5]), [6], ([8, 10], [7, 9]), [11]]
    assert tray_units(places) == want
