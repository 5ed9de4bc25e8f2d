"""shuffle_weak: the new shoe against the previous shoe's dealt order and new-deck order.

Weak shuffles come from the tests' own riffle model (tests/support/riffles.py:
Bayer-Diaconis's ``a``-shuffle, which is ``log2 a`` Gilbert-Shannon-Reeds riffles), not
from the code under test or bench/integrity.py.
"""

from __future__ import annotations

import json
import math
import random

import msgspec

from shoe_controller.cli import main
from shoe_controller.game import inputs as I
from shoe_controller.game.cards import ALL_CARDS, parse_card
from shoe_controller.game.events import IntegrityAlert, ShoeEnded
from shoe_controller.game.protection import fold, initial_state, protect
from shoe_controller.game.rules import Rules
from shoe_controller.game.shoe import Shoe
from shoe_controller.game.shuffle_tracking import ShuffleTest, estimated_riffles, new_deck_order
from tests.support.riffles import a_shuffle, cut, strip

DECKS = 8


def shoe_cards(seed: int) -> list[str]:
    cards = [c.code for c in ALL_CARDS for _ in range(DECKS)]
    random.Random(seed).shuffle(cards)
    return cards


def rounds(cards: list[str]) -> list[list[str]]:
    """The cards in packets of five (about one round each)."""
    return [cards[i : i + 5] for i in range(0, len(cards), 5)]


def peak_after(reference: list[str], cards: list[str]) -> tuple[float, int | None]:
    """(peak statistic, packet of five at which it first reached 10) feeding ``cards``."""
    test = ShuffleTest.start(reference, DECKS)
    first = None
    for i, packet in enumerate(rounds(cards)):
        test = test.feed(packet)
        if first is None and test.peak >= 10:
            first = i + 1
    return test.peak, first


# ---------------------------------------------------------------------------- the test


def test_fair_shoes_stay_below_villes_bound():
    rng = random.Random(1)
    peaks = []
    for _ in range(150):
        old, new = shoe_cards(rng.random()), shoe_cards(rng.random())
        peaks.append(peak_after(old[:400], new[:400])[0])
    assert max(peaks) < 10
    # P(peak >= x) <= exp(-x) for a fair shuffle (looks after every five cards included)
    for x in (2, 3, 4):
        assert sum(p >= x for p in peaks) <= 2 * 150 * math.exp(-x) + 2


def test_each_card_is_a_fair_bet_under_a_fair_shuffle():
    # E[exp(statistic) after the next card] = exp(statistic now) when the next card is
    # drawn from what is left (brute force over the 52 codes): a martingale, so the
    # repeated looks cannot inflate it.
    old = shoe_cards(2)
    for seen in (shoe_cards(3)[:37], a_shuffle(old, 8, random.Random(4))[:90]):
        test = ShuffleTest.start(old, DECKS).feed(seen)
        left = {c.code: DECKS - seen.count(c.code) for c in ALL_CARDS}
        rest = sum(left.values())
        expected = sum(
            n / rest * math.exp(test.feed([code]).statistic) for code, n in left.items() if n
        )
        assert math.isclose(expected, math.exp(test.statistic), rel_tol=1e-9)


def test_riffled_previous_order_is_caught_early():
    old = shoe_cards(5)
    rng = random.Random(6)
    fired = []
    for _ in range(5):  # three riffles and a cut: eight threads
        _peak, first = peak_after(old[:400], cut(a_shuffle(old, 8, rng), rng)[:400])
        assert first is not None
        fired.append(first)
    assert sorted(fired)[2] <= 20  # median within the first 100 cards
    caught = sum(peak_after(old[:400], cut(a_shuffle(old, 16, rng), rng)[:400])[1] is not None
                 for _ in range(6))  # four riffles
    assert caught >= 4


def test_new_deck_order_given_riffles_is_caught():
    rng = random.Random(7)
    for a in (16, 32):  # four and five riffles of new decks
        _peak, first = peak_after(new_deck_order(DECKS), cut(a_shuffle(new_deck_order(DECKS),
                                                                    a, rng), rng)[:400])
        assert first is not None and first <= 40


def test_identical_cards_are_credited_once_summed_over_their_copies():
    # old order: AS KD QH AS 2C ... ; after KD QH are dealt, both copies of AS are next to
    # a dealt card (one before KD, one after QH): whichever is meant, the fronts hold AS
    # only, so a weak shuffle predicts AS with probability 1 (once, not twice)
    reference = ["AS", "KD", "QH", "AS", "2C"]
    test = ShuffleTest.start(reference, 1).feed(["KD", "QH"])
    before = test.statistic
    after = test.feed(["AS"]).statistic
    p0 = 1 / 50  # one AS among the 50 cards of one deck not seen yet
    lambdas = (0.05, 0.1, 0.2, 0.4, 0.7)
    # the three tracking modes give factor lam/p0 + 1 - lam; the fourth component, for
    # the cards dealt lately, predicts AS from both KD and QH neighbours
    assert after > before + math.log(0.05 / p0)
    factors = [lam / p0 + 1 - lam for lam in lambdas]
    assert after <= before + math.log(max(factors)) + 1e-9
    # a card no front holds is the fair shuffle's: below 1 for the trackers
    other = test.feed(["7H"]).statistic
    assert other < before


def test_unread_cards_count_for_nothing():
    old = shoe_cards(8)
    new = shoe_cards(9)[:60]
    a = ShuffleTest.start(old, DECKS).feed(new)
    b = ShuffleTest.start(old, DECKS).feed([*new[:30], None, *new[30:]])
    assert math.isclose(a.statistic, b.statistic) and b.unread == 1 and b.cards == 60


def test_estimated_riffles():
    # independent: a-shuffles with the exact count of threads they produce
    assert estimated_riffles(8, 400) == 3.0
    assert estimated_riffles(64, 100000) == 6.0
    assert estimated_riffles(300, 400) is None


# -------------------------------------------------------- through the game and replay


def deal(cards: list[str], shoe: Shoe, stop_after: int | None = None) -> tuple[list, list[str]]:
    """Feed ``cards`` to the real shoe machine (cut card 16 from the end) until the shoe
    ends; returns the events and the replay tokens used."""
    events = list(shoe.apply(I.NewShoe()))
    tokens = ["SHOE"]
    for i, code in enumerate(cards):
        if stop_after is not None and i == stop_after:
            break
        if i == len(cards) - 16:
            events += shoe.apply(I.CutCardSeen())
            tokens.append("CUT")
        events += shoe.apply(I.CardSeen(parse_card(code)))
        tokens.append(code)
        if shoe.state.phase == "ended":
            break
    return events, tokens


def discards(cards: list[str], events: list) -> list[str]:
    """The cards in the order they left the shoe, then the ones never dealt."""
    out = [e.card for e in events if type(e).__name__ in ("BurnIndicator", "CardBurned",
                                                          "CardDealt")]
    return out + cards[len(out):]


def project(events: list) -> list[IntegrityAlert]:
    state = initial_state(Rules())
    out = []
    for ev in events:
        state, raised = protect(state, ev)
        out += [e for e in raised if isinstance(e, IntegrityAlert) and e.kind == "shuffle_weak"]
    return out


def test_the_daemon_core_raises_it_across_two_shoes():
    shoe = Shoe(Rules())
    first_cards = shoe_cards(10)
    first, _ = deal(first_cards, shoe)
    assert isinstance(first[-1], ShoeEnded) and first[-1].reason == "cut_card"
    rng = random.Random(11)
    second_cards = cut(a_shuffle(discards(first_cards, first), 8, rng), rng)
    second, _ = deal(second_cards, shoe)
    assert not project(first)
    alerts = project(first + second)
    assert [a.evidence["reference"] for a in alerts][:1] == ["previous_shoe"]
    alert = alerts[0]
    assert alert.shoe == 2 and alert.round is not None and alert.round <= 20
    ev = alert.evidence
    assert ev["statistic"] >= ev["threshold"] == 11.0  # the default, docs/config.md
    assert ev["previous_shoe_known"] is True and "dealt in full" in ev["previous_shoe"]
    assert math.isclose(ev["false_alarm_bound"], math.exp(-11), rel_tol=0.03)  # 2 digits
    # the cards seen when it fired: every card that left the shoe up to that round
    upto = [e for e in second if getattr(e, "round", None) is not None
            and e.round <= alert.round and type(e).__name__ == "CardDealt"]
    burned = [e for e in second if type(e).__name__ in ("BurnIndicator", "CardBurned")]
    assert ev["cards_seen"] == len(upto) + len(burned)
    assert ev["estimated_riffles"] is None or ev["estimated_riffles"] < 6
    for key in ("rising_sequences", "old_neighbours_adjacent", "longest_clump", "mode"):
        assert key in ev
    assert ev["component"].startswith(("tracker ", "recent cards", "thread filter, "))
    # raised once per shoe and order; a freshly shuffled third shoe raises nothing
    assert len({a.evidence["test"] for a in alerts}) == len(alerts)
    third, _ = deal(shoe_cards(12), shoe)
    assert not [a for a in project(first + second + third) if a.shoe == 3]


def test_resume_by_fold_keeps_the_test_where_it_was():
    shoe = Shoe(Rules())
    first_cards = shoe_cards(13)
    first, _ = deal(first_cards, shoe)
    rng = random.Random(14)
    second, _ = deal(cut(a_shuffle(discards(first_cards, first), 16, rng), rng), shoe)
    half = len(first) + len(second) // 2
    journal = first + second
    slow = initial_state(Rules())
    for ev in journal[:half]:
        slow, _ = protect(slow, ev)
    fast = fold(initial_state(Rules()), journal[:half])
    assert fast.previous_known and slow.previous_known
    assert [(n, t.peak, t.cards) for n, t in fast.weak_tests] == \
        [(n, t.peak, t.cards) for n, t in slow.weak_tests]


def test_previous_shoe_not_dealt_in_full_falls_back_to_new_deck_order():
    shoe = Shoe(Rules())
    first, _ = deal(shoe_cards(15), shoe, stop_after=120)  # replaced early
    rng = random.Random(16)
    second, _ = deal(cut(a_shuffle(new_deck_order(DECKS), 8, rng), rng), shoe)
    assert any(isinstance(e, ShoeEnded) and e.reason == "new_shoe" for e in second)
    alerts = project(first + second)
    assert alerts and {a.evidence["reference"] for a in alerts} == {"new_deck_order"}
    assert alerts[0].evidence["previous_shoe_known"] is False
    assert "did not end at the cut card" in alerts[0].evidence["previous_shoe"]


def test_replay_text_of_two_shoes_shows_the_alert(tmp_path, capsys):
    shoe = Shoe(Rules())
    first_cards = shoe_cards(17)
    first, tokens1 = deal(first_cards, shoe)
    rng = random.Random(18)
    _second, tokens2 = deal(cut(a_shuffle(discards(first_cards, first), 8, rng), rng), shoe)
    path = tmp_path / "two-shoes.txt"
    path.write_text(" ".join(tokens1) + "\n" + " ".join(tokens2) + "\n")
    assert main(["replay", str(path), "--json"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    weak = [e for e in events if e["type"] == "integrity_alert" and e["kind"] == "shuffle_weak"]
    assert weak and weak[0]["shoe"] == 2 and weak[0]["evidence"]["reference"] == "previous_shoe"
    # and the event validates as an integrity_alert
    msgspec.json.decode(json.dumps(weak[0]).encode(), type=IntegrityAlert)


# ------------------------------------------------ the thread filter (game._Threads)


def test_four_riffles_a_strip_and_a_cut_of_the_previous_order_are_caught():
    # the case that pays a shuffle tracker (16 threads, reversed in pieces by the strip);
    # (with these seeds the trackers alone, threads=False, catch 3 of the 6; all 6 here)
    old = shoe_cards(19)
    rng = random.Random(20)
    firsts = []
    for _ in range(6):
        new = cut(strip(a_shuffle(old, 16, rng), rng), rng)[:400]
        firsts.append(peak_after(old[:400], new)[1])
    # which component fired: with a strip the strip filter leads (the zig-zag of runs in
    # old order, one strip packet after another backwards, is what it follows)
    test = ShuffleTest.start(old[:400], DECKS).feed(new)
    assert test.component().startswith("strip filter, "), test.component()
    caught = sorted(f for f in firsts if f is not None)
    assert len(caught) >= 4, firsts
    assert caught[len(caught) // 2] <= 60  # packets of five: within the first 300 cards


def test_thread_filter_shares_a_card_among_its_identical_copies():
    # Worked by hand from the model in the docstring: reference 2C AS KD AS 3H, two decks,
    # 16 threads, two forward windows: (1.0,) (the fronts open at the next old position)
    # and (0.5, 0.4, 0.1) (the three next). The first AS is either copy: each gets half of
    # it (nothing is guessed); each half opens fronts after its old position, weighted by
    # how likely each is still in the shoe (the other AS, two after the first, is half
    # dealt; the pad after the end is no card). With the wide window 3H follows both
    # copies: it collects from both halves.
    from shoe_controller.game.shuffle_tracking import _INDEX, _Threads

    reference = ["2C", "AS", "KD", "AS", "3H"]
    th = _Threads([_INDEX[c] for c in reference], 2)
    assert _Threads.PACKETS[0] == 16
    assert _Threads.WINDOWS[0] == ("forward", (1.0,))
    assert _Threads.WINDOWS[2] == ("forward", (0.5, 0.4, 0.1))
    p0 = 2 / 104
    th.predict(_INDEX["AS"], p0)
    assert not th.logm.any()  # no front yet: the fair prediction, every component
    th.place(_INDEX["AS"])
    pad = max(len(w) for _, w in _Threads.WINDOWS)
    copies = [pad + 1, pad + 3]
    assert th.dealt[0, copies].tolist() == [0.5, 0.5]
    first = 0.5 + 0.4 * (1 - 0.5) + 0.1  # wide window: KD / the other AS / 3H after copy 1
    second = 0.5  # 3H after the second copy; nothing further
    live = {  # component -> code -> live mass of its fronts
        0: {"KD": 0.5, "3H": 0.5},
        2: {"KD": 0.5 * 0.5 / first, "3H": 0.5 * 0.1 / first + 0.5 * 0.5 / second},
    }
    live_total = 1.0  # the card's whole mass went to fronts
    p0 = 2 / 103
    base = th.copy()
    for k, masses in live.items():
        for code, mass in masses.items():
            t = base.copy()
            t.predict(_INDEX[code], p0)
            p1 = mass / 16 + (1 - live_total / 16) * p0
            expected = [math.log(lam * p1 / p0 + 1 - lam) for lam in _Threads.LAMS]
            assert all(math.isclose(x, y, rel_tol=1e-12)
                       for x, y in zip(t.logm[k], expected, strict=True)), (k, code)
    # before the first AS nothing opens forward: 2C gets less than the fair prediction
    other = base.copy()
    other.predict(_INDEX["2C"], p0)
    assert all(x < 0 for x in other.logm[0]) and not base.logm.any()


def _threads_after(old: list[str], seen: list[str], n: int):
    """A thread filter on the previous shoe's first 400 cards that has predicted and placed
    the first ``n`` cards of ``seen`` (each at the fair chance of its code among the cards
    left), and how many of each code it has seen."""
    from shoe_controller.game.shuffle_tracking import _INDEX, _Threads

    th = _Threads([_INDEX[c] for c in old[:400]], DECKS)
    count = [0] * 52
    for i, code in enumerate(seen[:n]):
        c = _INDEX[code]
        th.predict(c, (DECKS - count[c]) / (416 - i))
        th.place(c)
        count[c] += 1
    return th, count


def test_thread_filter_is_a_fair_bet_card_by_card():
    # the filter alone: its prediction is a distribution over the codes left, so under a
    # fair shuffle each factor has mean 1 (brute force over the 52 codes, every component)
    import numpy as np

    old = shoe_cards(21)
    seen = cut(strip(a_shuffle(old, 16, random.Random(22)), random.Random(23)), random.Random(24))
    th, count = _threads_after(old, seen, 150)
    rest = 416 - 150
    # E[factor] = 1 for every component and mixture: the sum of p0 * exp(log factor)
    total = np.zeros_like(th.logm)
    for c in range(52):
        if count[c] < DECKS:
            t = th.copy()
            before = t.logm.copy()
            t.predict(c, (DECKS - count[c]) / rest)
            total += (DECKS - count[c]) / rest * np.exp(t.logm - before)
    assert np.allclose(total, 1.0, rtol=1e-9)


def test_thread_filter_windows_follow_the_threads_direction():
    # 16 threads read in old order, and the same deck read back to front (a strip of one
    # packet): the forward windows explain the first, the backward windows the second
    import numpy as np

    from shoe_controller.game.shuffle_tracking import _Threads

    old = shoe_cards(25)
    riffled = a_shuffle(old, 16, random.Random(26))
    windows = list(_Threads.WINDOWS)
    fwd = [i for i, (side, _) in enumerate(windows) if side == "forward"]
    bwd = [windows.index(("backward", windows[i][1])) for i in fwd]  # same weights
    for seen, winner, loser in ((riffled, fwd, bwd), (riffled[::-1], bwd, fwd)):
        th, _ = _threads_after(old, seen, 120)
        best = th.logm.max(1).reshape(len(_Threads.PACKETS), len(windows))
        assert np.all(best[:, winner] > best[:, loser] + 3), best
        assert best[:, winner].max() > 10
