"""False-alarm and detection rates of the shuffle-integrity and edge-sorting tests.

    .venv/bin/python bench/integrity.py                 # ~1,000 fair shoes: a few minutes
    nice -n 10 .venv/bin/python bench/integrity.py --shoes 10000 --weak 300 --workers 2
                                                        # the full measurement

``--workers N`` (at most 2 on the shared build machine) runs the fair shoes and the weak
shuffles in N processes; every figure is the same as with one (seeded per task).

Fair shoes: seeded random 8-deck shoes, dealt round by round by the tableau (burn by the
first card, cut card 16 cards from the end), each card's orientation independent of its
rank (each shoe draws its own share of upside-down cards, from none to half). The real
projection (``game.protection.protect``, default ``AnalyticsConfig``) is fed the same
events the game core emits and evaluates every test after every round, so the rate
printed is per shoe, with all the repeated looks included. The repeat test is measured
against *every* earlier fair shoe of the run (a larger history than the default 500).

Stacked shoes: several kinds of unshuffled, lightly shuffled, reused and edge-sorted
shoes; prints how many were detected and the median round of the first alert.

Weak shuffles (``--weak N`` shoes of each kind): a fair shoe is dealt, its cards go to the
discard tray in dealt order (or, "collected by hand", each round's cards Player's hand
then Banker's or the other way round, chosen per round), the cards never dealt go on
top, and the new shoe is that stack given ``k`` Gilbert-Shannon-Reeds riffles of the
whole shoe, a strip (packets of 5-15 cards run off into a pile, reversing their order)
and a cut (anywhere in the middle half). Prints how many shoes the ``shuffle_weak`` test
caught (and any shuffle test), and the round of the first alert (median, 90th
percentile), for k = 4..8; and new decks given 4-6 riffles (against new-deck order).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import multiprocessing
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import msgspec

from shoe_controller.game import edge_sorting as es
from shoe_controller.game import shuffle_integrity as si
from shoe_controller.game.cards import ALL_CARDS, parse_card
from shoe_controller.game.events import (
    BurnIndicator,
    CardBurned,
    CardDealt,
    IntegrityAlert,
    LastRound,
    ResultConfirmed,
    RoundStarted,
    ShoeEnded,
    ShoeStarted,
)
from shoe_controller.game.protection import AnalyticsConfig, initial_state, protect
from shoe_controller.game.rules import Rules
from shoe_controller.game.shuffle_integrity import FingerprintSet
from shoe_controller.game.tableau import coup

DECKS = 8
CUT_LEFT = 16
# integrity only (odds: bench/odds.py); the whole-shoe fit and the pair count are measured
# apart (--fit, --fit-null, --pairs, --pairs-null, --chain, --chain-null)
CONFIG = AnalyticsConfig(shoe_analysis=False, shuffle_fit=False, shuffle_pairs=False,
                         shuffle_chain=False)
_CODE_INDEX = {c.code: c.index for c in ALL_CARDS}


def shoe_events(shoe: int, cards: list[str], orient: Callable[[str], str | None],
                cut_left: int = CUT_LEFT) -> Iterator[Any]:
    """The events the game core emits for a shoe dealt in this order (no misdeals), the
    cut card ``cut_left`` cards from the end."""
    yield ShoeStarted(shoe=shoe, decks=DECKS)
    first = cards[0]
    burn = parse_card(first).value or 10
    yield BurnIndicator(shoe=shoe, card=first, burn_count=burn)
    for code in cards[1 : 1 + burn]:
        yield CardBurned(shoe=shoe, card=code)
    pos, rnd = 1 + burn, 0
    while len(cards) - pos >= 6:
        rnd += 1
        last = len(cards) - pos <= cut_left + 6
        yield RoundStarted(shoe=shoe, round=rnd)
        if last:
            yield LastRound(shoe=shoe, round=rnd)
        player, banker = coup(parse_card(c).value for c in cards[pos : pos + 6])
        order = ["player", "banker", "player", "banker"] + ["player"] * (len(player) - 2)
        order += ["banker"] * (len(banker) - 2)
        count = {"player": 0, "banker": 0}
        for hand, code in zip(order, cards[pos : pos + len(order)], strict=False):
            count[hand] += 1
            yield CardDealt(shoe=shoe, round=rnd, hand=hand, position=count[hand], card=code,
                            orientation=orient(code))
        pos += len(order)
        yield ResultConfirmed(shoe=shoe, round=rnd)
        if last:
            break
    yield ShoeEnded(shoe=shoe, rounds=rnd, reason="cut_card")


def fresh_cards() -> list[str]:
    return [c.code for c in ALL_CARDS for _ in range(DECKS)]


def run_shoe(state: Any, shoe: int, cards: list[str], orient: Callable[[str], str | None],
             ends: list[int] | None = None):
    """Feed one shoe through the projection; (state, alerts). ``ends``, when given, gets
    the cards that had left the shoe at each round's end (where the projection looks)."""
    found = []
    for ev in shoe_events(shoe, cards, orient):
        state, out = protect(state, ev)
        found += [e for e in out if isinstance(e, IntegrityAlert)]
        if ends is not None and isinstance(ev, ResultConfirmed):
            ends.append(len(state.sequence))
    return state, found


def _pairs_worst(state: Any, ends: list[int]) -> float:
    """The largest z of the projection's own pair counts (``state.pair_tests``, built at
    its first look) over every look it made in the shoe just fed: what the alert compares
    with ``shuffle_pairs_z``."""
    from shoe_controller.game import shuffle_pairs as sp

    if not state.pair_tests:
        return -math.inf
    dealt = state.sequence[: state.ended_cards] if state.ended else state.sequence
    at = [m for m in ends if m <= len(dealt)
          and sum(1 for c in dealt[:m] if c is not None) >= sp.MIN_CARDS]
    return max((z for _, t in state.pair_tests for z, _, _ in t.looks(dealt, at)),
               default=-math.inf)


def riffle(cards: list[str], rng: random.Random) -> list[str]:
    half = len(cards) // 2 + rng.randint(-20, 20)
    left, right = cards[:half], cards[half:]
    out: list[str] = []
    while left or right:
        for pile in (left, right):
            k = rng.randint(1, 4)
            out += pile[:k]
            del pile[:k]
    return out


def gsr(cards: list[str], rng: random.Random) -> list[str]:
    """One Gilbert-Shannon-Reeds riffle: a binomial cut, then each card dropped from a
    half with probability proportional to the cards left in it."""
    cut_at = sum(rng.random() < 0.5 for _ in cards)
    left, right = cards[:cut_at], cards[cut_at:]
    out: list[str] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if rng.random() * (len(left) - i + len(right) - j) < len(left) - i:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out


def strip(cards: list[str], rng: random.Random, low: int = 5, high: int = 15) -> list[str]:
    """Packets of ``low``-``high`` cards run off the top into a pile: their order reverses."""
    out: list[str] = []
    i = 0
    while i < len(cards):
        k = rng.randint(low, high)
        out = cards[i : i + k] + out
        i += k
    return out


def cut(cards: list[str], rng: random.Random) -> list[str]:
    k = rng.randint(len(cards) // 4, 3 * len(cards) // 4)
    return cards[k:] + cards[:k]


def weakly_shuffled(stack: list[str], riffles: int, rng: random.Random,
                    stripped: bool = True) -> list[str]:
    cards = list(stack)
    for _ in range(riffles):
        cards = gsr(cards, rng)
    return cut(strip(cards, rng) if stripped else cards, rng)


def discard_stack(cards: list[str], events: list[Any], by_hand: bool, rng: random.Random
                  ) -> list[str]:
    """The tray after a shoe dealt from ``cards``: every card that left the shoe in the
    order dealt (``by_hand``: each round's cards Player's hand then Banker's, or Banker's
    then Player's, chosen per round), then the cards never dealt."""
    out: list[str] = []
    hands: dict[str, list[str]] = {"player": [], "banker": []}
    for ev in events:
        if isinstance(ev, BurnIndicator | CardBurned):
            out.append(ev.card)
        elif isinstance(ev, CardDealt):
            if by_hand:
                hands[ev.hand].append(ev.card)
            else:
                out.append(ev.card)
        elif isinstance(ev, ResultConfirmed) and by_hand:
            first, second = ("player", "banker") if rng.random() < 0.5 else ("banker", "player")
            out += hands[first] + hands[second]
            hands = {"player": [], "banker": []}
    return out + cards[len(out):]


def _fair_chunk(task: tuple[int, int, int, bool]) -> dict[str, Any]:
    """Fair shoes ``first``..``first + count - 1`` (one chain: each shoe's previous is the
    one before it), seeded by ``seed``; with ``pairs``, the pair count on as well."""
    first, count, seed, pairs = task
    rng = random.Random(seed)
    config = msgspec.structs.replace(CONFIG, shuffle_pairs=True) if pairs else CONFIG
    state = initial_state(Rules(), config, salt=b"bench")
    alarms: Counter[str] = Counter()
    alarmed: list[int] = []
    fingerprints: list[tuple[int, ...]] = []
    worst: dict[str, float] = {"order_run": 0, "suit_run": 0, "z deck order": 0.0,
                               "z previous shoe": 0.0, "weak previous shoe": 0.0,
                               "weak new-deck order": 0.0, "edge p (min)": 1.0}
    weak_peaks: list[float] = []
    for shoe in range(first, first + count):
        cards = fresh_cards()
        rng.shuffle(cards)
        p_down = rng.choice((0.0, 0.02, 0.1, 0.3, 0.5))
        orient_rng = random.Random(rng.random())

        def orient(code: str, r: random.Random = orient_rng, p: float = p_down) -> str:
            return "down" if r.random() < p else "up"

        state = replace(state, known=FingerprintSet())  # repeats: measured by the caller
        ends: list[int] = []
        state, found = run_shoe(state, shoe, cards, orient, ends)
        if pairs:
            worst["pairs z"] = max(worst.get("pairs z", -math.inf), _pairs_worst(state, ends))
        tests = {a.evidence["test"] for a in found if a.kind != "advantage"}
        alarms.update(tests)
        if tests:
            alarmed.append(shoe)
        fingerprints.append(tuple(state.fingerprints))
        seq = state.sequence
        worst["order_run"] = max(worst["order_run"], si.longest_order_run(seq))
        worst["suit_run"] = max(worst["suit_run"], si.longest_suit_run(seq))
        worst["z deck order"] = max(worst["z deck order"],
                                    si.adjacency_test(seq, si.DECK_ORDER).z)
        if state.previous_neighbours:
            worst["z previous shoe"] = max(worst["z previous shoe"],
                                           si.adjacency_test(seq, state.previous_neighbours).z)
        for name, test in state.weak_tests:
            key = "weak previous shoe" if name == "previous_shoe" else "weak new-deck order"
            worst[key] = max(worst[key], test.peak)
            weak_peaks.append(test.peak)
        t = es.edge_sorting_test(state.oriented, CONFIG.edge_sorting_min_expected)
        for p in (t.key_p, t.ranks_p):
            if p is not None:
                worst["edge p (min)"] = min(worst["edge p (min)"], p)
    return {"alarms": alarms, "alarmed": alarmed, "fingerprints": fingerprints,
            "worst": worst, "weak_peaks": weak_peaks}


def fair_run(shoes: int, seed: int, workers: int = 1, budget: float = 0.0,
             chunk: int = 250, pairs: bool = False) -> None:
    """False alarms in ``shoes`` fair shoes (chains of ``chunk`` shoes run in ``workers``
    processes; the repeat test is then measured here against every earlier shoe of the
    run). With a ``budget`` (seconds), stops taking results after it and reports the
    shoes done (a smaller ``chunk`` reports more often on a busy machine; the shoes
    differ with it: each chain is seeded by its first shoe)."""
    start = time.perf_counter()
    tasks = [(first, min(chunk, shoes - first + 1), seed * 1_000_003 + first, pairs)
             for first in range(1, shoes + 1, chunk)]
    alarms: Counter[str] = Counter()
    alarmed_shoes: set[int] = set()
    history: set[int] = set()
    worst: dict[str, float] = {}
    peaks: list[float] = []
    repeats_worst = 0
    done = 0
    with multiprocessing.Pool(workers) if workers > 1 else _Serial() as pool:
        for (first, _n, _s, _p), res in zip(tasks, pool.imap(_fair_chunk, tasks), strict=True):
            alarms.update(res["alarms"])
            peaks += res["weak_peaks"]
            for key, value in res["worst"].items():
                better = min if key.startswith("edge") else max
                worst[key] = better(worst.get(key, value), value)
            for i, fps in enumerate(res["fingerprints"]):
                repeats = sum(1 for fp in fps if fp in history)
                repeats_worst = max(repeats_worst, repeats)
                if repeats >= CONFIG.repeat_min_windows:
                    alarms["repeat"] += 1
                    alarmed_shoes.add(first + i)
                history.update(fps)
            alarmed_shoes.update(res["alarmed"])
            done += _n
            print(f"  ... {done} fair shoes, {len(alarmed_shoes)} with an alarm "
                  f"({time.perf_counter() - start:.0f} s)", flush=True)
            if budget and time.perf_counter() - start > budget:
                print(f"  (time budget of {budget:.0f} s reached: {done} shoes)")
                break
    shoes = done
    worst["repeat windows"] = repeats_worst
    elapsed = time.perf_counter() - start
    n_alarmed = len(alarmed_shoes)
    bound = 3 / shoes if n_alarmed == 0 else None
    print(f"fair shoes: {shoes}, shoes with any false alarm (shuffle or edge test): "
          f"{n_alarmed} (rate {n_alarmed / shoes:.2e}"
          + (f"; 95% upper bound {bound:.1e})" if bound else ")")
          + f"   target <= 1e-4   [{elapsed:.0f} s, {workers} worker(s)]")
    for test in ("order_run", "suit_run", "adjacency_deck_order", "adjacency_previous_shoe",
                 "repeat", "shuffle_weak_previous_shoe", "shuffle_weak_new_deck_order",
                 *(("shuffle_pairs_previous_shoe",) if pairs else ()), "edge_sorting"):
        print(f"  {test:28s} false alarms {alarms[test]}")
    c = CONFIG
    limits = {"order_run": c.order_run_threshold, "suit_run": c.suit_run_threshold,
              "z deck order": c.adjacency_z, "z previous shoe": c.adjacency_z,
              "weak previous shoe": c.shuffle_weak_threshold,
              "weak new-deck order": c.shuffle_weak_threshold,
              "repeat windows": c.repeat_min_windows, "edge p (min)": c.edge_sorting_alpha,
              **({"pairs z": c.shuffle_pairs_z} if pairs else {})}
    print("  worst statistic over the fair shoes (alert threshold); shuffle_weak: the peak"
          " over every look of the shoe:")
    for name in limits:
        value = worst.get(name, 0)
        shown = f"{value:.2e}" if name.startswith("edge") else f"{value:.2f}"
        print(f"    {name:20s} {shown:>10s}   ({limits[name]:g})")
    if peaks:
        print("  shuffle_weak null distribution of the per-shoe peak (both orders), against "
              "Ville's bound exp(-x):")
        for x in (2, 4, 6, 8, 10):
            seen = sum(1 for p in peaks if p >= x) / len(peaks)
            print(f"    P(peak >= {x:2d}) = {seen:.2e}   bound {math.exp(-x):.2e}")


class _Serial:
    """A stand-in for a one-process pool."""

    def __enter__(self) -> _Serial:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    @staticmethod
    def imap(fn: Callable[[Any], Any], tasks: list[Any]) -> Iterator[Any]:
        return map(fn, tasks)


def _weak_task(task: tuple[str, int, bool, int, int, bool]) -> list[tuple[bool, int | None,
                                                                           int | None, str]]:
    """``count`` trials of one weak-shuffle kind: (caught by shuffle_weak, its round, the
    round of the first shuffle alert of any kind, the reference that fired). ``fast``:
    the shuffle_weak test alone, fed round by round as the projection feeds it (no other
    test: the third field is then None)."""
    kind, riffles, by_hand, count, seed, fast = task
    rng = random.Random(seed)
    if fast:
        return [_weak_fast(kind, riffles, by_hand, rng) for _ in range(count)]
    out = []
    for _ in range(count):
        state = initial_state(Rules(), CONFIG, salt=b"bench")
        if kind.startswith("previous"):
            previous = fresh_cards()
            rng.shuffle(previous)
            events = list(shoe_events(1, previous, lambda c: None))
            for ev in events:
                state, _ = protect(state, ev)
            stack = discard_stack(previous, events, by_hand, rng)
        else:  # new decks, no shoe before
            stack = [c.code for _ in range(DECKS) for c in ALL_CARDS]
        cards = weakly_shuffled(stack, riffles, rng, stripped=not kind.endswith("no strip"))
        state, found = run_shoe(state, 2, cards, lambda c: None)
        shuffle_alerts = [a for a in found if a.kind.startswith("shuffle")]
        weak = [a for a in shuffle_alerts if a.kind == "shuffle_weak"]
        out.append((bool(weak), weak[0].round if weak else None,
                    shuffle_alerts[0].round if shuffle_alerts else None,
                    weak[0].evidence["reference"] if weak else ""))
    return out


def _weak_fast(kind: str, riffles: int, by_hand: bool, rng: random.Random
               ) -> tuple[bool, int | None, int | None, str]:
    from shoe_controller.game.shuffle_tracking import ShuffleTest, new_deck_order

    tests = [("new_deck_order", ShuffleTest.start(new_deck_order(DECKS), DECKS, threads=False))]
    if kind.startswith("previous"):
        previous = fresh_cards()
        rng.shuffle(previous)
        events = list(shoe_events(1, previous, lambda c: None))
        dealt = [ev.card for ev in events
                 if isinstance(ev, BurnIndicator | CardBurned | CardDealt)]
        places = [(ev.round, ev.hand) if isinstance(ev, CardDealt) else None for ev in events
                  if isinstance(ev, BurnIndicator | CardBurned | CardDealt)]
        tests.insert(0, ("previous_shoe", ShuffleTest.start(dealt, DECKS, places=places)))
        stack = discard_stack(previous, events, by_hand, rng)
    else:
        stack = [c.code for _ in range(DECKS) for c in ALL_CARDS]
    cards = weakly_shuffled(stack, riffles, rng, stripped=not kind.endswith("no strip"))
    batch: list[str] = []
    for ev in shoe_events(2, cards, lambda c: None):
        if isinstance(ev, BurnIndicator | CardBurned | CardDealt):
            batch.append(ev.card)
        elif isinstance(ev, ResultConfirmed):
            tests = [(name, t.feed(batch)) for name, t in tests]
            batch = []
            for name, t in tests:
                if t.peak >= CONFIG.shuffle_weak_threshold:
                    return True, ev.round, None, name
    return False, None, None, ""


def weak_run(per_kind: int, seed: int, workers: int = 1, fast: bool = False) -> None:
    kinds = [("previous", k, False) for k in (4, 5, 6, 7, 8)]
    kinds += [("previous", k, True) for k in (4, 5, 6, 7, 8)]
    kinds += [("new", k, False) for k in (4, 5, 6)]
    kinds += [("previous, no strip", k, False) for k in (4, 5, 6)]
    chunk = 25
    tasks = []
    for n, (kind, k, by_hand) in enumerate(kinds):
        for first in range(0, per_kind, chunk):
            tasks.append((kind, k, by_hand, min(chunk, per_kind - first),
                          seed * 7919 + n * 100_003 + first, fast))
    start = time.perf_counter()
    results: dict[tuple[str, int, bool], list[Any]] = {}
    with multiprocessing.Pool(workers) if workers > 1 else _Serial() as pool:
        for task, res in zip(tasks, pool.imap(_weak_task, tasks), strict=True):
            results.setdefault(task[:3], []).extend(res)
    print(f"weak shuffles ({per_kind} of each kind; GSR riffles of the whole shoe, then a "
          f"strip of 5-15-card packets and a cut{'; shuffle_weak alone' if fast else ''}) "
          f"[{time.perf_counter() - start:.0f} s]:")
    print(f"  {'shoe before -> new shoe':55s} shuffle_weak caught   round: median  90%   "
          "any shuffle alert")
    for kind, k, by_hand in kinds:
        res = results[(kind, k, by_hand)]
        caught = [r for r in res if r[0]]
        rounds = sorted(r[1] for r in caught)
        anyone = sum(1 for r in res if r[2] is not None)
        if kind == "previous":
            name = (f"previous shoe, {'collected by hand' if by_hand else 'dealt order'}, "
                    f"{k} riffles")
        elif kind.startswith("previous"):
            name = f"previous shoe, dealt order, {k} riffles, cut, no strip"
        else:
            name = f"new decks, {k} riffles"
        med = f"{statistics.median(rounds):6.1f}" if rounds else "     -"
        p90 = f"{rounds[math.ceil(0.9 * len(rounds)) - 1]:4d}" if rounds else "   -"
        also = "-" if fast else f"{anyone}/{len(res)}"
        print(f"  {name:55s} {len(caught):4d}/{len(res)} ({len(caught) / len(res):6.1%})"
              f"   {med} {p90}   {also}")


def rising_sequences(old_positions: list[int]) -> int:
    """Rising sequences of a new order given, for each new card, its old position:
    1 + the old positions ``j`` whose successor ``j + 1`` came out before ``j``."""
    pos = {q: i for i, q in enumerate(old_positions)}
    return 1 + sum(1 for q in pos if q + 1 in pos and pos[q + 1] < pos[q])


def _matchings(old: list[str], new_ids: list[int], rng: random.Random) -> dict[str, int]:
    """Rising sequences of a new shoe (``new_ids``: old index of each card) under three
    matchings of identical cards: the true one, a random one, and the greedy one that
    maximises rising sequences (each card to the copy adding the most descents)."""
    codes = [old[i] for i in new_ids]
    copies: dict[str, list[int]] = {}
    for q, c in enumerate(old):
        copies.setdefault(c, []).append(q)
    out = {"true": rising_sequences(new_ids)}
    pools = {c: rng.sample(qs, len(qs)) for c, qs in copies.items()}
    out["random"] = rising_sequences([pools[c].pop() for c in codes])
    used: set[int] = set()
    greedy = []
    for c in codes:
        best = max((q for q in copies[c] if q not in used),
                   key=lambda q: (q - 1 >= 0 and q - 1 not in used) + (q + 1 in used))
        used.add(best)
        greedy.append(best)
    out["most rising sequences"] = rising_sequences(greedy)
    return out


def matching_run(shoes: int, seed: int) -> None:
    """Why the matching of identical cards cannot be the least suspicious one."""
    rng = random.Random(seed)
    rows: dict[str, dict[str, list[int]]] = {}
    for _ in range(shoes):
        old = fresh_cards()
        rng.shuffle(old)
        ids = list(range(len(old)))
        fair = list(ids)
        rng.shuffle(fair)
        for name, new_ids in (("fair shuffle", fair),
                              ("4 riffles", _riffled_ids(ids, 4, rng)),
                              ("6 riffles", _riffled_ids(ids, 6, rng))):
            for how, r in _matchings(old, new_ids, rng).items():
                rows.setdefault(name, {}).setdefault(how, []).append(r)
    print(f"rising sequences of a 416-card shoe against the old order ({shoes} shoes, "
          "median), by how identical cards are matched to old copies:")
    print(f"  {'':14s} {'true matching':>14s} {'random':>8s} {'most rising sequences':>22s}")
    for name, by in rows.items():
        print(f"  {name:14s} {statistics.median(by['true']):14.0f} "
              f"{statistics.median(by['random']):8.0f} "
              f"{statistics.median(by['most rising sequences']):22.0f}")


def _riffled_ids(ids: list[int], riffles: int, rng: random.Random) -> list[int]:
    cards = [str(i) for i in ids]
    for _ in range(riffles):
        cards = gsr(cards, rng)
    return [int(c) for c in cards]


#: Oracle (bench only): recency time scales of the fronts (inf: every live front alike),
#: mixture weights, and the old-order neighbourhoods a front opens at.
ORACLE_TAUS = (8.0, 24.0, 64.0, 160.0, math.inf)
ORACLE_LAMS = (0.1, 0.3, 0.5, 0.8, 0.95)
ORACLE_OFFSETS: dict[str, dict[int, float]] = {
    "forward": {1: 1.0},
    "backward": {-1: 1.0},
    "both": {1: 1.0, -1: 1.0},
    "window 3": {1: .6, -1: .6, 2: .25, -2: .25, 3: .15, -3: .15},
}


def _mixture_step(logm: Any, lams: Any, p1: Any, p0: Any) -> float:
    """Add one card to every (component, bet size) log-martingale in ``logm`` (in place):
    each bets the share ``lam`` of its wealth on the card's probability ``p1`` against the
    fair ``p0``. Returns the log of the mixture's mean wealth over all of them.

    >>> import numpy as np
    >>> logm = np.zeros((1, 2))
    >>> round(_mixture_step(logm, np.array([0.5, 1.0]), np.array([0.2]), 0.1), 4)  # log(1.75)
    0.5596
    >>> logm.round(4).tolist()  # log(1.5), log(2)
    [[0.4055, 0.6931]]
    """
    import numpy as np

    logm += np.log(lams[None, :] * (p1 / p0)[:, None] + 1.0 - lams[None, :])
    top = float(logm.max())
    return top + math.log(float(np.exp(logm - top).mean()))


def _oracle_peak(codes: list[str], ids: list[int], dealt: int, by_identity: bool,
                 graph: dict[int, dict[int, float]] | None = None
                 ) -> tuple[float, int | None]:
    """The front predictor given every new card's TRUE old position (only a simulation
    knows it). Fronts: the undealt old positions next to a dealt one (forward, backward,
    both, a 3-deep window, or ``graph``: the tray neighbours over both collection orders
    of every round), weighted by how recently that neighbour was dealt (time scale tau;
    inf: all alike). ``P1`` = the fronts' share on the card's identity (``by_identity``:
    scored against the fair ``1 / cards left``) or on its code (against ``P0(c)``: what
    a test at a table, which sees codes only, could score if it knew the old position of
    every card already dealt). The log of the mean over components and mixtures of the
    product of ``(lam P1 + (1 - lam) P0) / P0``: a fair-shuffle martingale like the real
    test's. Returns (peak over the first ``dealt`` cards, card at which it reached 10)."""
    import numpy as np

    n = len(codes)
    code = np.array([_CODE_INDEX[c] for c in codes])
    offsets = dict(ORACLE_OFFSETS)
    if graph is not None:
        offsets = {"both": ORACLE_OFFSETS["both"], "graph": {}}
    comps = [(o, tau) for o in offsets for tau in ORACLE_TAUS]
    pad = 4
    u = np.zeros((len(comps), n + 2 * pad))
    gone = np.zeros(n + 2 * pad, bool)
    gone[:pad] = gone[n + pad:] = True
    onehot = np.zeros((n + 2 * pad, 52))
    onehot[np.arange(pad, n + pad), code] = 1.0
    lams = np.array(ORACLE_LAMS)
    logm = np.zeros((len(comps), len(lams)))
    seen = np.zeros(52)
    peak, first = 0.0, None
    for t, q in enumerate(ids[:dealt]):
        p = q + pad
        left = n - t
        total = u.sum(1)
        if by_identity:
            p0 = 1.0 / left
            mass = u[:, p]
        else:
            p0 = (DECKS - seen[code[q]]) / left
            mass = u @ onehot[:, code[q]]
        p1 = np.where(total > 0, mass / np.maximum(total, 1e-300), p0)
        value = _mixture_step(logm, lams, p1, p0)
        peak = max(peak, value)
        if first is None and value >= CONFIG.shuffle_weak_threshold:
            first = t
        seen[code[q]] += 1
        gone[p] = True
        u[:, p] = 0.0
        for k, (o, tau) in enumerate(comps):
            e = 1.0 if tau == math.inf else math.exp(t / tau)
            near = ((r - q, w) for r, w in graph.get(q, {}).items()) if o == "graph" and graph \
                else offsets[o].items()
            for d, w in near:
                if 0 <= q + d < n and not gone[p + d]:
                    u[k, p + d] += w * e
    return peak, first


def tray_graph(events: list[Any]) -> dict[int, dict[int, float]]:
    """Neighbours in the discard tray of every card of a shoe (by its position in the
    dealt order) when each round's cards are collected hand by hand, Player's then
    Banker's or the reverse: over both orders, weight 1 within a hand, 1/2 across the
    junction of the two hands, 1/4 between rounds (burn cards keep their dealt order)."""
    nb: dict[int, dict[int, float]] = {}

    def link(x: int, y: int, w: float) -> None:
        nb.setdefault(x, {})[y] = nb.get(x, {}).get(y, 0.0) + w
        nb.setdefault(y, {})[x] = nb.get(y, {}).get(x, 0.0) + w

    i = 0
    ends: list[tuple[int, float]] = []
    hands: dict[str, list[int]] = {"player": [], "banker": []}
    for ev in events:
        if isinstance(ev, BurnIndicator | CardBurned):
            for e, w in ends:
                link(e, i, w)
            ends = [(i, 1.0)]
            i += 1
        elif isinstance(ev, CardDealt):
            hands[ev.hand].append(i)
            i += 1
        elif isinstance(ev, ResultConfirmed):
            pl, bk = hands["player"], hands["banker"]
            for h in (pl, bk):
                for x, y in itertools.pairwise(h):
                    link(x, y, 1.0)
            link(pl[-1], bk[0], 0.5)
            link(bk[-1], pl[0], 0.5)
            for e, w in ends:
                link(e, pl[0], w / 2)
                link(e, bk[0], w / 2)
            ends = [(pl[-1], 0.5), (bk[-1], 0.5)]
            hands = {"player": [], "banker": []}
    return nb


def exact_gsr_llr(old_positions: list[int], riffles: int) -> float:
    """The exact log-likelihood ratio of ``riffles`` GSR riffles against a fair shuffle
    for a whole deck (no strip, no cut), given every card's old position:
    ``log(C(a + n - r, n) / a**n * n!)`` with ``a = 2**riffles`` and ``r`` rising
    sequences (Bayer and Diaconis); ``-inf`` when ``r > a``.

    >>> exact_gsr_llr(list(range(52)), 1) > 100, exact_gsr_llr([1, 0, 3, 2], 1)
    (True, -inf)
    """
    return gsr_llr(rising_sequences(old_positions), 2 ** riffles, len(old_positions))


def gsr_llr(r: int, a: int, n: int) -> float:
    """``log(n! C(a + n - r, n) / a**n)``: the log-likelihood ratio of an ``a``-shuffle
    against a fair shuffle for one permutation of ``n`` cards with ``r`` rising sequences;
    ``-inf`` when ``r > a``.

    >>> math.isclose(gsr_llr(1, 2, 2), math.log(3 * 2 / 4)), gsr_llr(3, 2, 2)
    (True, -inf)
    """
    if r > a:
        return -math.inf
    return math.lgamma(a + n - r + 1) - math.lgamma(a - r + 1) - n * math.log(a)


def by_position(events: list[Any]) -> tuple[list[Any], int]:
    """The same events with each card that left the shoe named by its position in the
    order it left (``"0"``, ``"1"``, ...), and how many left.

    >>> tagged, n = by_position(list(shoe_events(1, fresh_cards(), lambda c: None)))
    >>> n > 400, [ev.card for ev in tagged if hasattr(ev, "card")][:3]
    (True, ['0', '1', '2'])
    """
    tagged: list[Any] = []
    i = 0
    for ev in events:
        if isinstance(ev, BurnIndicator | CardBurned | CardDealt):
            tagged.append(msgspec.structs.replace(ev, card=str(i)))
            i += 1
        else:
            tagged.append(ev)
    return tagged, i


def _oracle_shoe(riffles: int, stripped: bool, by_hand: bool, rng: random.Random
                 ) -> tuple[list[str], list[int], list[Any]]:
    """A fair previous shoe dealt, its tray (``discard_stack``) given the weak shuffle:
    (its dealt order, the new shoe as positions in that order, its events)."""
    previous = fresh_cards()
    rng.shuffle(previous)
    events = list(shoe_events(1, previous, lambda c: None))
    tagged, _ = by_position(events)
    stack = discard_stack([str(j) for j in range(len(previous))], tagged, by_hand, rng)
    new = weakly_shuffled(stack, riffles, rng, stripped=stripped)
    return previous, [int(s) for s in new], events


def _real_peak(old: list[str], events: list[Any], ids: list[int], dealt: int
               ) -> tuple[float, int | None]:
    """The real test on the same shoe: ``shuffle_weak`` against the previous shoe's dealt
    order (codes only, as the projection runs it), fed card by card. Returns (peak over
    the first ``dealt`` cards, card at which it reached the threshold)."""
    from shoe_controller.game.shuffle_tracking import ShuffleTest

    reference = [ev.card for ev in events if isinstance(ev, BurnIndicator | CardBurned | CardDealt)]
    test = ShuffleTest.start(reference, DECKS)
    first = None
    for t, q in enumerate(ids[:dealt]):
        test = test.feed([old[q]])
        if first is None and test.peak >= CONFIG.shuffle_weak_threshold:
            first = t
    return test.peak, first


def _caught(res: list[tuple[float, int | None]], per_kind: int) -> str:
    """One cell of the oracle tables: shoes caught (``(peak, card at which it reached
    10)``, ``None``: never), the median round it fired in, the median peak.

    >>> _caught([(12.0, 5), (3.0, None)], 2)
    '  1/2 ( 50%)   1.0     7.5'
    """
    got = sorted(max(1, math.ceil((f - 5) / 4.9)) for _, f in res if f is not None)
    med = f"{statistics.median(got):5.1f}" if got else "    -"
    peak = statistics.median(p for p, _ in res)
    return f"{len(got):3d}/{per_kind} ({len(got) / per_kind:4.0%}) {med} {peak:7.1f}"


def oracle_run(per_kind: int, seed: int, real: bool = True) -> None:
    """How far a test could go if identical cards were not identical: the weak-shuffle
    table's riffles, strip, cut and tray (dealt order or collected by hand), the previous
    shoe's dealt order as the reference, every card's true old position given. Scored by
    identity (an upper reference: what distinct cards would allow) and by code (the
    information a table's test sees, with the old positions of the cards already dealt
    known: what resolving identical copies perfectly would allow); and the exact GSR
    likelihood ratio of the whole deck without strip or cut. The real test
    (``shuffle_weak``, codes only) on the same shoes for comparison."""
    rng = random.Random(seed)
    start = time.perf_counter()
    kinds = (("strip, cut", True, False), ("no strip, cut", False, False),
             ("collected by hand, strip, cut", True, True))
    print(f"oracle: every card's true old position known ({per_kind} shoes each; the "
          "weak-shuffle table's shuffles; not achievable at a table), and the real test "
          "on the same shoes (codes only): caught (reached 10 by the cut card), median "
          "round, median peak")
    print(f"  {'shuffle':32s} {'riffles':>7s}   {'scored by identity':>26s}   "
          f"{'scored by code':>26s}   {'the real test':>26s}")
    for name, stripped, by_hand in kinds:
        for k in (4, 5, 6, 7, 8):
            cells = []
            results: dict[str, list[tuple[float, int | None]]] = {
                "identity": [], "code": [], "real": []}
            for _ in range(per_kind):
                old, ids, events = _oracle_shoe(k, stripped, by_hand, rng)
                graph = tray_graph(events) if by_hand else None
                dealt = len(old) - CUT_LEFT
                results["identity"].append(_oracle_peak(old, ids, dealt, True, graph))
                results["code"].append(_oracle_peak(old, ids, dealt, False, graph))
                if real:
                    results["real"].append(_real_peak(old, events, ids, dealt))
            for how in ("identity", "code", "real"):
                if not results[how]:
                    cells.append("-")
                    continue
                cells.append(_caught(results[how], per_kind))
            print(f"  {name:32s} {k:7d}   {cells[0]:>26s}   {cells[1]:>26s}   {cells[2]:>26s}",
                  flush=True)
    print("  exact GSR log-likelihood ratio of the whole 416-card deck, no strip and no "
          "cut (median, min):", end="")
    for k in (4, 5, 6, 7, 8, 9, 10):
        vals = [exact_gsr_llr(_riffled_ids(list(range(416)), k, rng), k)
                for _ in range(per_kind)]
        print(f"  {k}: {statistics.median(vals):.0f}, {min(vals):.0f}", end="")
    print(f"\n  [{time.perf_counter() - start:.0f} s]")


#: Partial-resolution oracle: the posterior weight of a front on a card's own copy when
#: the copy is not revealed (the real filter's choice, shuffle_tracking's lambda 0.5).
RESOLVE_PL = 0.5


def _resolution_peak(codes: list[str], ids: list[int], dealt: int, q: float,
                     rng: random.Random) -> tuple[float, int | None, float]:
    """The oracle's front predictor scored by code (``_oracle_peak`` without a graph),
    where each dealt card's TRUE old copy is revealed with probability ``q`` only. An
    unrevealed card is resolved as a table's test must: each component spreads it over
    the undealt copies of its code by the posterior ``RESOLVE_PL`` x (the component's
    front share) + (1 - ``RESOLVE_PL``) x (free share), opens its fronts by that
    posterior and counts it dealt by that posterior (fronts on dealt mass fade). ``q = 1``
    is the oracle's "scored by code" column; ``q = 0`` a self-resolving front filter.
    Returns (peak, card at which it reached 10, the median over cards 51-300 of the
    leading component's front share on the card's true copy among its code's copies)."""
    import numpy as np

    n = len(codes)
    code = np.array([_CODE_INDEX[c] for c in codes])
    pad = 4
    copies = [np.flatnonzero(code == c) + pad for c in range(52)]
    comps = [(o, tau) for o in ORACLE_OFFSETS for tau in ORACLE_TAUS]
    u = np.zeros((len(comps), n + 2 * pad))
    d = np.zeros((len(comps), n + 2 * pad))
    d[:, :pad] = d[:, n + pad:] = 1.0
    lams = np.array(ORACLE_LAMS)
    logm = np.zeros((len(comps), len(lams)))
    seen = np.zeros(52)
    peak, first, shares = 0.0, None, []
    for t, q_old in enumerate(ids[:dealt]):
        c = code[q_old]
        cp = copies[c]
        p0 = (DECKS - seen[c]) / (n - t)
        live = u * (1.0 - d)
        total = live.sum(1)
        mass = live[:, cp]
        p1 = np.where(total > 0, mass.sum(1) / np.maximum(total, 1e-300), p0)
        value = _mixture_step(logm, lams, p1, p0)
        peak = max(peak, value)
        if first is None and value >= CONFIG.shuffle_weak_threshold:
            first = t
        lead = int(np.argmax(logm.max(1)))
        if 50 <= t < 300 and mass[lead].sum() > 0:
            shares.append(float(mass[lead, list(cp).index(q_old + pad)] / mass[lead].sum()))
        seen[c] += 1
        if rng.random() < q:
            post = np.tile((cp == q_old + pad).astype(float), (len(comps), 1))
        else:
            free = 1.0 - d[:, cp]
            fs = free.sum(1, keepdims=True)
            fr = np.where(fs > 1e-12, free / np.maximum(fs, 1e-300), 1.0 / len(cp))
            pf = np.where((total > 0)[:, None], mass / np.maximum(total, 1e-300)[:, None], 0.0)
            post = RESOLVE_PL * pf + (1 - RESOLVE_PL) * p0 * fr
            post /= np.maximum(post.sum(1, keepdims=True), 1e-300)
        d[:, cp] = np.minimum(d[:, cp] + post, 1.0)
        for k, (o, tau) in enumerate(comps):
            e = 1.0 if tau == math.inf else math.exp(t / tau)
            for off, w in ORACLE_OFFSETS[o].items():
                np.add.at(u[k], cp + off, w * e * post[k])
    return peak, first, statistics.median(shares) if shares else math.nan


def resolution_run(per_kind: int, seed: int) -> None:
    """How many of the identical copies a code-scored front test must resolve: the
    oracle's shuffles (previous shoe's dealt order, riffles, strip, cut), each card's true
    copy revealed with probability q, the rest resolved by the test's own posterior
    (``_resolution_peak``); the real test (``shuffle_weak``) on the same shoes."""
    start = time.perf_counter()
    print(f"copy resolution: each dealt card's true old copy revealed with probability q, "
          f"the rest resolved by the fronts' posterior ({per_kind} shoes each, strip and cut,"
          f" dealt order): caught (reached 10 by the cut card), median round, median peak, "
          f"median share of the leading component's fronts on the card's true copy (cards "
          f"51-300)")
    for k, qs in ((4, (0.0, 0.25, 0.5, 1.0)), (5, (0.0, 0.1, 0.2, 0.25, 0.5, 1.0)),
                  (6, (0.0, 0.5, 0.6, 0.8, 0.9, 1.0))):
        rng = random.Random(seed * 31 + k)
        shoes = [_oracle_shoe(k, True, False, rng) for _ in range(per_kind)]
        rows: list[tuple[str, list[tuple[float, int | None]], float]] = []
        real = [_real_peak(old, events, ids, len(old) - CUT_LEFT) for old, ids, events in shoes]
        rows.append(("the real test", real, math.nan))
        for q in qs:
            r = random.Random(seed + int(q * 100))
            res = [_resolution_peak(old, ids, len(old) - CUT_LEFT, q, r) for old, ids, _ in shoes]
            rows.append((f"q = {q:.2f}", [(p, f) for p, f, _ in res],
                         statistics.median(s for _, _, s in res)))
        for name, res, share in rows:
            sh = "" if math.isnan(share) else f"   share {share:.3f}"
            print(f"  {k} riffles  {name:14s} {_caught(res, per_kind)}{sh}", flush=True)
    print(f"  [{time.perf_counter() - start:.0f} s]")


def hindsight_posteriors(codes: list[str], ids: list[int], threads: int, backward: bool
                         ) -> list[float]:
    """Each old card's posterior on its true new position, with hindsight: the whole new
    shoe ``ids`` (old positions, in new order) seen, the copies of a code weighed by a
    forward-backward pass along the old order (a card's thread neighbour ``threads``
    cards away on average, geometrically, in the new order; forward or ``backward``, 10%
    of links broken). Identical cards are the only unknown: the best a matching of copies
    can do when every card before *and after* is known, as an upper look at resolution.

    >>> old = [c.code for c in ALL_CARDS for _ in range(2)]
    >>> p = hindsight_posteriors(old, list(range(len(old))), 2, False)
    >>> round(min(p), 2) > 0.5
    True
    """
    import numpy as np

    n = len(ids)
    where = {i: t for t, i in enumerate(ids)}
    pos: dict[str, list[int]] = {}
    for t, i in enumerate(ids):
        pos.setdefault(codes[i], []).append(t)
    width = max(len(v) for v in pos.values())
    P = np.full((len(codes), width), -1)
    for i, c in enumerate(codes):
        P[i, :len(pos[c])] = pos[c]
    valid = P >= 0
    q = 1.0 - 1.0 / threads
    x, y = P[:-1, :, None].astype(float), P[1:, None, :].astype(float)
    d = (x - y) if backward else (y - x)
    f = np.where(d >= 1, q ** np.clip(d - 1, 0, None) / threads, 0.0)
    T = (0.9 * n * f + 0.1) * (valid[:-1, :, None] & valid[1:, None, :])
    alpha = np.zeros(P.shape)
    alpha[0] = valid[0] / valid[0].sum()
    for i in range(len(codes) - 1):
        v = alpha[i] @ T[i]
        alpha[i + 1] = v / v.sum()
    beta = np.ones(P.shape)
    for i in range(len(codes) - 2, -1, -1):
        v = T[i] @ beta[i + 1]
        beta[i] = v / v.sum()
    post = alpha * beta * valid
    post /= post.sum(1, keepdims=True)
    return [float(post[i, list(P[i]).index(where[i])]) for i in range(len(codes))]


def hindsight_run(per_kind: int, seed: int) -> None:
    """How well identical copies can be told apart with the whole shoe seen
    (``hindsight_posteriors``): the median posterior on a card's true copy and the share
    of cards above one half, for 4-6 riffles of a shuffled 8-deck shoe, without and with
    a strip (then threads run backward), a cut in both."""
    start = time.perf_counter()
    print(f"copy resolution with hindsight: the whole new shoe seen, a forward-backward pass"
          f" along the old order ({per_kind} shoes each): median posterior on the true copy,"
          f" share of cards above 0.5")
    for k in (4, 5, 6):
        for stripped in (False, True):
            rng = random.Random(seed * 37 + k * 2 + stripped)
            med, above = [], []
            for _ in range(per_kind):
                codes = fresh_cards()
                rng.shuffle(codes)
                ids = weakly_shuffled(list(range(len(codes))), k, rng, stripped)  # type: ignore[arg-type]
                post = hindsight_posteriors(codes, ids, 2 ** k, stripped)
                med.append(statistics.median(post))
                above.append(sum(p > 0.5 for p in post) / len(post))
            print(f"  {k} riffles, {'strip and cut' if stripped else 'cut, no strip':14s} "
                  f"median {statistics.median(med):.2f}   above 0.5: "
                  f"{statistics.median(above):.0%}", flush=True)
    print(f"  [{time.perf_counter() - start:.0f} s]")


def _weak_null_chunk(task: tuple[int, int]) -> list[tuple[float, float]]:
    """Peaks of the shuffle_weak test (previous shoe, new-deck order) on a chain of fair
    shoes, each against the one before it: the same test the projection runs (its peak is
    taken after every card, so feeding whole shoes gives the peak of every look)."""
    from shoe_controller.game.shuffle_tracking import ShuffleTest, new_deck_order

    count, seed = task
    rng = random.Random(seed)
    previous = fresh_cards()
    rng.shuffle(previous)
    out = []
    for _ in range(count):
        cards = fresh_cards()
        rng.shuffle(cards)
        seen = [c for c in _dealt(cards)]
        prev_seen, places = _dealt_places(previous)
        a = ShuffleTest.start(prev_seen, DECKS, places=places).feed(seen)
        b = ShuffleTest.start(new_deck_order(DECKS), DECKS, threads=False).feed(seen)
        out.append((a.peak, b.peak))
        previous = cards
    return out


def _dealt(cards: list[str], cut_left: int = CUT_LEFT) -> list[str]:
    """The cards that leave the shoe when ``cards`` is dealt (burn, rounds to the cut)."""
    return _dealt_places(cards, cut_left)[0]


def _dealt_places(cards: list[str], cut_left: int = CUT_LEFT
                  ) -> tuple[list[str], list[tuple[int, str] | None]]:
    """``_dealt`` and where each of those cards went (``shuffle_tracking.Place``)."""
    out = [ev for ev in shoe_events(0, cards, lambda c: None, cut_left)
           if isinstance(ev, BurnIndicator | CardBurned | CardDealt)]
    return ([ev.card for ev in out],
            [(ev.round, ev.hand) if isinstance(ev, CardDealt) else None for ev in out])


def weak_null_run(shoes: int, seed: int, workers: int = 1, budget: float = 0.0,
                  chunk: int = 250) -> None:
    """``shoes`` fair shoes for the shuffle_weak test alone, in chunks (a progress line
    each); with a ``budget`` (seconds), stops taking chunks after it and reports the
    shoes done (chunks are seeded by their index, so a shorter run is a prefix)."""
    tasks = [(min(chunk, shoes - i), seed * 31 + i) for i in range(0, shoes, chunk)]
    start = time.perf_counter()
    threshold = CONFIG.shuffle_weak_threshold
    peaks: list[tuple[float, float]] = []
    with multiprocessing.Pool(workers) if workers > 1 else _Serial() as pool:
        for res in pool.imap(_weak_null_chunk, tasks):
            peaks += res
            alarms = sum(1 for a, b in peaks if max(a, b) >= threshold)
            print(f"  ... {len(peaks)} fair shoes, {alarms} with an alarm, worst "
                  f"{max(a for a, _ in peaks):.2f} / {max(b for _, b in peaks):.2f} "
                  f"({time.perf_counter() - start:.0f} s)", flush=True)
            if budget and time.perf_counter() - start > budget:
                print(f"  (time budget of {budget:.0f} s reached: {len(peaks)} shoes)")
                break
    alarms = sum(1 for a, b in peaks if max(a, b) >= threshold)
    print(f"shuffle_weak alone on {len(peaks)} fair shoes (each against the shoe before it "
          f"and new-deck order; every card a look) [{time.perf_counter() - start:.0f} s]:")
    print(f"  shoes with an alarm: {alarms} (threshold {threshold:g}; Ville's bound "
          f"{2 * math.exp(-threshold):.1e} per shoe for both orders)")
    print(f"  worst peak: previous shoe {max(a for a, _ in peaks):.2f}, new-deck order "
          f"{max(b for _, b in peaks):.2f}")
    for x in (2, 4, 6, 8, 10):
        both = [v for pair in peaks for v in pair]
        seen = sum(1 for v in both if v >= x) / len(both)
        print(f"    P(peak >= {x:2d}) = {seen:.2e}   bound exp(-x) = {math.exp(-x):.2e}")


def speed_run(shoes: int, seed: int) -> None:
    """CPU time of the shuffle_weak test alone: both reference orders, fed round by round
    (about five cards), as the projection does."""
    from shoe_controller.game.shuffle_tracking import ShuffleTest, new_deck_order

    rng = random.Random(seed)
    total_cards = 0
    start = time.process_time()
    for _ in range(shoes):
        old, new = fresh_cards(), fresh_cards()
        rng.shuffle(old)
        rng.shuffle(new)
        dealt, places = _dealt_places(old)  # the previous shoe's rounds: the tray windows
        tests = [ShuffleTest.start(dealt, DECKS, places=places),
                 ShuffleTest.start(new_deck_order(DECKS), DECKS, threads=False)]
        for i in range(0, 400, 5):
            tests = [t.feed(new[i : i + 5]) for t in tests]
        total_cards += 400
    cpu = time.process_time() - start
    looks = shoes * 80
    print(f"shuffle_weak cost: {shoes} shoes of 400 cards, both orders (the thread filter, "
          f"with the tray's rounds, against the previous shoe only), fed 5 cards a look: "
          f"{cpu / total_cards * 1e6:.0f} us CPU per card, {cpu / looks * 1e3:.2f} ms per "
          f"look, {cpu / shoes * 1e3:.1f} ms per shoe")


def stacked_run(per_kind: int, seed: int) -> None:
    rng = random.Random(seed)

    def random_orient(code: str) -> str:
        return rng.choice(("up", "down"))

    def shuffled() -> list[str]:
        cards = fresh_cards()
        rng.shuffle(cards)
        return cards

    def new_decks() -> list[str]:
        return [c.code for _ in range(DECKS) for c in ALL_CARDS]

    def rank_sorted() -> list[str]:
        return sorted(fresh_cards(), key=lambda c: parse_card(c).rank)

    def suit_blocks() -> list[str]:  # sorted by suit, ranks shuffled within each suit
        cards = shuffled()
        return sorted(cards, key=lambda c: c[1])

    def strip_shuffled() -> list[str]:  # new decks, packets of 5-15 reversed in order
        cards, out = new_decks(), []
        while cards:
            k = rng.randint(5, 15)
            out = cards[:k] + out
            del cards[:k]
        return out

    kinds: dict[str, tuple[Callable[[], list[str]], str, Callable[[str], str | None]]] = {
        "new decks, unshuffled": (new_decks, "new", random_orient),
        "rank-sorted shoe": (rank_sorted, "new", random_orient),
        "suit blocks": (suit_blocks, "new", random_orient),
        "new decks, one riffle": (lambda: riffle(new_decks(), rng), "new", random_orient),
        "new decks, two riffles": (
            lambda: riffle(riffle(new_decks(), rng), rng), "new", random_orient),
        "new decks, strip cut only": (strip_shuffled, "new", random_orient),
        "previous shoe reused": (None, "reuse", random_orient),  # type: ignore[dict-item]
        "previous shoe, cut only": (None, "cut", random_orient),  # type: ignore[dict-item]
        "previous shoe, one riffle": (None, "riffle", random_orient),  # type: ignore[dict-item]
        "edge-sorted 6-9 (all)": (
            shuffled, "new",
            lambda c: "down" if parse_card(c).rank in (6, 7, 8, 9) else "up"),
        "edge-sorted 6-9 (80%, rest 50/50)": (
            shuffled, "new",
            lambda c: ("down" if rng.random() < 0.8 else "up")
            if parse_card(c).rank in (6, 7, 8, 9) else rng.choice(("up", "down"))),
    }
    print(f"stacked shoes ({per_kind} of each kind): detected, median round of the first alert")
    for name, (make, how, orient) in kinds.items():
        detected, rounds, tests = 0, [], Counter()
        for i in range(per_kind):
            state = initial_state(Rules(), CONFIG, salt=b"bench")
            previous = shuffled()
            state, _ = run_shoe(state, 1, previous, random_orient)
            if how == "new":
                cards = make()
            elif how == "reuse":
                cards = list(previous)
            elif how == "cut":
                k = rng.randint(50, 350)
                cards = previous[k:] + previous[:k]
            else:
                cards = riffle(previous, rng)
            state, found = run_shoe(state, 2, cards, orient)
            if found:
                detected += 1
                rounds.append(found[0].round or 0)
                tests.update({found[0].evidence["test"]})
            del i
        med = statistics.median(rounds) if rounds else "-"
        first = ", ".join(f"{t} {n}" for t, n in tests.most_common())
        print(f"  {name:36s} {detected:4d}/{per_kind}   round {med}   first: {first}")


# --------------------------------------------------------------------------------------
# The whole-shoe fit (game/shuffle_fit.py): fair shoes' scores, and weak shoes caught

FIT_KINDS = [("previous", k, False, True) for k in (4, 5, 6, 7, 8)]
FIT_KINDS += [("previous", k, False, False) for k in (5, 6)]
FIT_KINDS += [("previous", k, True, True) for k in (4, 5, 6)]


def _pairs_shoe(riffles: int, by_hand: bool, stripped: bool, rng: random.Random,
                cut_left: int = CUT_LEFT) -> tuple[list[str], list[Any], list[str], list[Any]]:
    """(the previous shoe's dealt cards, where they went, the new shoe's, where they
    went): a fair shoe when ``riffles`` is 0, else the previous shoe's tray riffled
    ``riffles`` times (then a strip and a cut)."""
    previous = fresh_cards()
    rng.shuffle(previous)
    events = list(shoe_events(1, previous, lambda c: None, cut_left))
    if riffles:
        cards = weakly_shuffled(discard_stack(previous, events, by_hand, rng), riffles, rng,
                                stripped=stripped)
    else:
        cards = fresh_cards()
        rng.shuffle(cards)
    old, places = _dealt_places(previous, cut_left)
    new, new_places = _dealt_places(cards, cut_left)
    return old, places, new, new_places


def _fit_pair(riffles: int, by_hand: bool, stripped: bool, rng: random.Random,
              cut_left: int = CUT_LEFT) -> tuple[list[str], list[str], list[Any]]:
    """``_pairs_shoe`` as (the previous shoe's cards, the new shoe's, where the previous
    shoe's cards went)."""
    old, places, new, _ = _pairs_shoe(riffles, by_hand, stripped, rng, cut_left)
    return old, new, places


def _fit_chunk(task: tuple[int, int, bool, bool, int, int, int]) -> dict[str, Any]:
    from shoe_controller.game import shuffle_fit as sf

    count, riffles, by_hand, stripped, seed, cut_left, steps = task
    rng = random.Random(seed)
    shoes = [_fit_pair(riffles, by_hand, stripped, rng, cut_left) for _ in range(count)]
    raw = sf.family_scores(shoes, DECKS, steps, seed=seed)
    fits = sf.best_fits(shoes, DECKS, raw)
    pairs = [f.pairs for f in fits]
    out = {"raw": {f: s.tolist() for f, s in raw.items()}, "z": [f.z for f in fits],
           "pairs": pairs, "cards": [len(sh[1]) for sh in shoes]}
    if riffles:  # and the card-by-card test on the same shoes (its peak over every look)
        from shoe_controller.game.shuffle_tracking import ShuffleTest

        out["peak"] = [ShuffleTest.start(old, DECKS, places=places).feed(new).peak
                       for old, new, places in shoes]
    return out


def _fit_tasks(total: int, chunk: int, riffles: int, by_hand: bool, stripped: bool,
               seed: int, cut_left: int, steps: int
               ) -> list[tuple[int, int, bool, bool, int, int, int]]:
    sizes = [min(chunk, total - i) for i in range(0, total, chunk)]
    return [(n, riffles, by_hand, stripped, seed * 7919 + 104729 * riffles + 31 * i
             + (1 if by_hand else 0) + (2 if stripped else 0), cut_left, steps)
            for i, n in enumerate(sizes)]


def fit_null_run(shoes: int, seed: int, workers: int = 1, chunk: int = 96,
                 cut_left: int = CUT_LEFT, steps: int = 0, save: str = "") -> None:
    """Fair shoes' best fits: each family's raw score (mean, sd, and per old-neighbour
    pair: shuffle_fit.NULL's constants), the z-scores against NULL, their worst, and the
    shoes at or above [analytics] shuffle_fit_z."""
    from shoe_controller.game import shuffle_fit as sf

    steps = steps or sf.STEPS
    t0 = time.time()
    tasks = _fit_tasks(shoes, chunk, 0, False, False, seed, cut_left, steps)
    raw: dict[Any, list[float]] = {f: [] for f in sf.FAMILIES}
    zs: list[float] = []
    pairs: list[float] = []
    with multiprocessing.Pool(workers) if workers > 1 else _Serial() as pool:
        for res in pool.imap(_fit_chunk, tasks):
            for f in sf.FAMILIES:
                raw[f] += res["raw"][f]
            zs += res["z"]
            pairs += res["pairs"]
            print(f"  fit null: {len(zs)}/{shoes} shoes, worst z {max(zs):.2f}, at or above "
                  f"{CONFIG.shuffle_fit_z}: {sum(z >= CONFIG.shuffle_fit_z for z in zs)}; raw "
                  + ", ".join(f"{statistics.fmean(raw[f]):.1f}" for f in sf.FAMILIES)
                  + f"; {time.time() - t0:.0f} s", flush=True)
    n = len(zs)
    mean_pairs = statistics.fmean(pairs)
    print(f"\nWhole-shoe fit, {n} fair shoes (cut card {cut_left} from the end, "
          f"{steps} steps, {mean_pairs:.1f} old-neighbour pairs seen on average):")
    for f in sf.FAMILIES:
        m, sd = statistics.fmean(raw[f]), statistics.stdev(raw[f])
        print(f"  family {f[0]} riffles{' + strip' if f[1] else ''}"
              f"{' + tray by hand' if f[2] else ''}: raw mean {m:.1f} sd "
              f"{sd:.1f} max {max(raw[f]):.1f}; per pair {m / mean_pairs:.3f}, "
              f"{sd / math.sqrt(mean_pairs):.3f} (NULL: {sf.NULL[f]})")
    if save:
        with open(save, "w") as fh:
            json.dump({"raw": {"/".join(map(str, f)): raw[f] for f in sf.FAMILIES},
                       "z": zs, "pairs": pairs, "seed": seed, "steps": steps}, fh)
    zsd = statistics.stdev(zs) if n > 1 else 0.0
    over = sum(z >= CONFIG.shuffle_fit_z for z in zs)
    print(f"  z (largest over families): mean {statistics.fmean(zs):.2f} sd {zsd:.2f} "
          f"worst {max(zs):.2f}; at or above shuffle_fit_z = {CONFIG.shuffle_fit_z}: "
          f"{over} of {n} shoes; {time.time() - t0:.0f} s")


def fit_run(per_kind: int, seed: int, workers: int = 1, chunk: int = 48,
            cut_left: int = CUT_LEFT, steps: int = 0) -> None:
    """Weak shoes caught by the whole-shoe fit at [analytics] shuffle_fit_z (at the shoe's
    end), per kind: the previous shoe's tray (dealt order or by hand) after 4-8 riffles,
    a strip (or none) and a cut."""
    from shoe_controller.game import shuffle_fit as sf

    steps = steps or sf.STEPS
    t0 = time.time()
    one = _fit_pair(5, True, True, random.Random(seed))
    cpu = time.process_time()
    sf.fit_test(one[0], one[1], DECKS, places=one[2], steps=steps)
    print(f"\nWhole-shoe fit, weak shoes ({per_kind} a kind, {steps} steps, threshold "
          f"z >= {CONFIG.shuffle_fit_z}); one shoe alone (what the daemon runs at a shoe's "
          f"end): {time.process_time() - cpu:.2f} s CPU")
    for kind, riffles, by_hand, stripped in FIT_KINDS:
        tasks = _fit_tasks(per_kind, chunk, riffles, by_hand, stripped, seed, cut_left, steps)
        zs: list[float] = []
        peaks: list[float] = []
        with multiprocessing.Pool(workers) if workers > 1 else _Serial() as pool:
            for res in pool.imap(_fit_chunk, tasks):
                zs += res["z"]
                peaks += res["peak"]
        caught = sum(z >= CONFIG.shuffle_fit_z for z in zs)
        card = sum(p >= CONFIG.shuffle_weak_threshold for p in peaks)
        either = sum(z >= CONFIG.shuffle_fit_z or p >= CONFIG.shuffle_weak_threshold
                     for z, p in zip(zs, peaks, strict=True))
        label = (f"{kind} shoe{' by hand' if by_hand else ''}, {riffles} riffles"
                 f"{', strip' if stripped else ', no strip'}, cut")
        print(f"  {label:<46} fit {caught}/{len(zs)} (z median {statistics.median(zs):.1f}, "
              f"min {min(zs):.1f}); card by card {card}; either {either}  "
              f"{time.time() - t0:.0f} s", flush=True)


def _round_ends(places: list[Any]) -> list[tuple[int, int]]:
    """(round, cards that had left the shoe when it ended): where the projection looks."""
    ends: dict[int, int] = {}
    for i, place in enumerate(places):
        if place is not None:
            ends[place[0]] = i + 1
    return sorted(ends.items())


def _chain_looks(ends: list[tuple[int, int]], dealt: int) -> list[tuple[int | None, int]]:
    """(round, cards) of the chain test's looks, as the projection takes them: each
    round's end where ``shuffle_chain.looks_passed`` grows, then the shoe's end."""
    from shoe_controller.game import shuffle_chain as sc

    out: list[tuple[int | None, int]] = []
    passed = 0
    for r, m in ends:
        if sc.looks_passed(m) > passed:
            passed = sc.looks_passed(m)
            out.append((r, m))
    return [*out, (ends[-1][0] if ends else None, dealt)]


def _pairs_chunk(task: tuple[int, int, bool, bool, int, int, str]) -> list[dict[str, Any]]:
    """Per shoe, for each test named in the task: the pair count's largest z over every
    look and both families, the round of its first look at or above the threshold, its
    z at the end (``pairs``); the chain test's alike (``chain``); and (weak shoes) the
    card-by-card test's peak and the whole-shoe fit's z on the same shoe (``others``)."""
    from shoe_controller.game import shuffle_chain as sc
    from shoe_controller.game import shuffle_fit as sf
    from shoe_controller.game import shuffle_pairs as sp
    from shoe_controller.game.shuffle_tracking import ShuffleTest

    count, riffles, by_hand, stripped, seed, cut_left, which = task
    rng = random.Random(seed)
    out = []
    shoes = [_pairs_shoe(riffles, by_hand, stripped, rng, cut_left) for _ in range(count)]
    others = riffles and "others" in which
    fitted = others and "nofit" not in which
    fits = sf.fit_many([(o, n, p) for o, p, n, _ in shoes], DECKS, seed=seed) if fitted else []
    for k, (old, places, new, new_places) in enumerate(shoes):
        shoe: dict[str, Any] = {}
        if "pairs" in which:
            ends = [(r, m) for r, m in _round_ends(new_places) if m >= sp.MIN_CARDS]
            tests = [sp.PairTest.start(sp.dealt_pairs(old), DECKS),
                     sp.PairTest.start(sp.tray_pairs(old, places), DECKS)]
            per = [[z for z, _, _ in t.looks(new, [m for _, m in ends])] for t in tests]
            best = [max(zs) for zs in zip(*per, strict=True)]
            fired = [r for (r, _), z in zip(ends, best, strict=True)
                     if z >= CONFIG.shuffle_pairs_z]
            shoe.update(peak=max(best), first=fired[0] if fired else None, end=best[-1],
                        families=[max(zs) for zs in per])
        if "chain" in which:
            looks = _chain_looks(_round_ends(new_places), len(new))
            chains = [sc.ChainTest.start(old, None, DECKS), sc.ChainTest.start(old, places, DECKS)]
            seen = [t.looks(new, [m for _, m in looks]) for t in chains]
            per = [[x.excess for x in s] for s in seen]
            best = [max(xs) for xs in zip(*per, strict=True)]
            fired = [r for (r, _), x in zip(looks, best, strict=True)
                     if x >= CONFIG.shuffle_chain_nats]
            shoe.update(chain_peak=max(best), chain_first=fired[0] if fired else None,
                        chain_fired=bool(fired), chain_families=[max(xs) for xs in per],
                        chain_looks=[[m, *(round(v, 3) for x in (a, b)
                                           for v in (x.excess, x.z, x.log_lr, x.mean, x.sd))]
                                     for (_, m), a, b in zip(looks, *seen, strict=True)])
        if others:
            # the card-by-card test as the projection feeds it: a round at a time
            card, fed, first = ShuffleTest.start(old, DECKS, places=places), 0, None
            for r, m in _round_ends(new_places):
                card, fed = card.feed(new[fed:m]), m
                if first is None and card.peak >= CONFIG.shuffle_weak_threshold:
                    first = r
            card = card.feed(new[fed:])
            shoe.update(card=card.peak, card_first=first, fit=fits[k].z if fitted else -math.inf,
                        last_round=max((r for r, _ in _round_ends(new_places)), default=None))
        out.append(shoe)
    return out


def _pairs_tasks(total: int, chunk: int, riffles: int, by_hand: bool, stripped: bool,
                 seed: int, cut_left: int, which: str = "pairs,others"
                 ) -> list[tuple[int, int, bool, bool, int, int, str]]:
    sizes = [min(chunk, total - i) for i in range(0, total, chunk)]
    return [(n, riffles, by_hand, stripped, seed * 7907 + 104723 * riffles + 37 * i
             + (1 if by_hand else 0) + (2 if stripped else 0), cut_left, which)
            for i, n in enumerate(sizes)]


def pairs_null_run(shoes: int, seed: int, workers: int = 1, chunk: int = 100,
                   cut_left: int = CUT_LEFT, save: str = "") -> None:
    """Fair shoes' pair counts: the largest z over every round's look and both families
    (dealt order, tray by hand), its worst, its upper quantiles, and the shoes at or above
    [analytics] shuffle_pairs_z."""
    t0 = time.time()
    peaks: list[float] = []
    fams: list[list[float]] = []
    with multiprocessing.Pool(workers) if workers > 1 else _Serial() as pool:
        for res in pool.imap(_pairs_chunk, _pairs_tasks(shoes, chunk, 0, False, False, seed,
                                                          cut_left, "pairs")):
            peaks += [r["peak"] for r in res]
            fams += [r["families"] for r in res]
            print(f"  pairs null: {len(peaks)}/{shoes} shoes, worst z {max(peaks):.2f}, at "
                  f"or above {CONFIG.shuffle_pairs_z}: "
                  f"{sum(p >= CONFIG.shuffle_pairs_z for p in peaks)}; "
                  f"{time.time() - t0:.0f} s", flush=True)
    ranked = sorted(peaks)
    q = {f: ranked[min(len(ranked) - 1, int(f * len(ranked)))] for f in (0.5, 0.99, 0.999)}
    print(f"\nPair count, {len(peaks)} fair shoes (cut card {cut_left} from the end), the "
          f"largest z over every round and both families: median {q[0.5]:.2f}, 99% "
          f"{q[0.99]:.2f}, 99.9% {q[0.999]:.2f}, worst {ranked[-1]:.2f}; worst dealt-order "
          f"family {max(f[0] for f in fams):.2f}, tray family {max(f[1] for f in fams):.2f}; "
          f"at or above shuffle_pairs_z = {CONFIG.shuffle_pairs_z}: "
          f"{sum(p >= CONFIG.shuffle_pairs_z for p in peaks)} of {len(peaks)}; "
          f"{time.time() - t0:.0f} s")
    if save:
        with open(save, "w") as fh:
            json.dump({"peak": peaks, "families": fams, "seed": seed}, fh)


def pairs_run(per_kind: int, seed: int, workers: int = 1, chunk: int = 25,
              cut_left: int = CUT_LEFT) -> None:
    """Weak shoes caught by the pair count at [analytics] shuffle_pairs_z, per kind, the
    round of its first alert, and on the same shoes how many the card-by-card test
    (shuffle_weak_threshold) and the whole-shoe fit (shuffle_fit_z) catch, and any of the
    three."""
    from shoe_controller.game import shuffle_pairs as sp

    rng = random.Random(seed)
    old, places, new, new_places = _pairs_shoe(5, True, True, rng, cut_left)
    cpu = time.process_time()
    tests = [sp.PairTest.start(sp.dealt_pairs(old), DECKS),
             sp.PairTest.start(sp.tray_pairs(old, places), DECKS)]
    start = time.process_time() - cpu
    ends = _round_ends(new_places)
    cpu = time.process_time()
    for _, m in ends:
        for t in tests:
            t.z(new[:m])
    look = (time.process_time() - cpu) / len(ends)
    print(f"\nPair count, weak shoes ({per_kind} a kind, threshold z >= "
          f"{CONFIG.shuffle_pairs_z}); CPU, as the projection runs it: {start * 1000:.0f} ms "
          f"at the first look, {look * 1000:.1f} ms a round after")
    t0 = time.time()
    for kind, riffles, by_hand, stripped in FIT_KINDS:
        res: list[dict[str, Any]] = []
        with multiprocessing.Pool(workers) if workers > 1 else _Serial() as pool:
            for part in pool.imap(_pairs_chunk, _pairs_tasks(per_kind, chunk, riffles,
                                                             by_hand, stripped, seed, cut_left)):
                res += part
        rounds = [r["first"] for r in res if r["first"] is not None]
        card = sum(r["card"] >= CONFIG.shuffle_weak_threshold for r in res)
        fit = sum(r["fit"] >= CONFIG.shuffle_fit_z for r in res)
        either = sum(r["first"] is not None or r["card"] >= CONFIG.shuffle_weak_threshold
                     or r["fit"] >= CONFIG.shuffle_fit_z for r in res)
        when = (f"round median {statistics.median(rounds):.0f}, 90% "
                f"{sorted(rounds)[int(0.9 * (len(rounds) - 1))]}" if rounds else "never")
        label = (f"{kind} shoe{' by hand' if by_hand else ''}, {riffles} riffles"
                 f"{', strip' if stripped else ', no strip'}, cut")
        peaks = [r["peak"] for r in res]
        print(f"  {label:<46} pairs {len(rounds)}/{len(res)} ({when}; largest z median "
              f"{statistics.median(peaks):.1f}, lowest {min(peaks):.1f}); card by card {card}; "
              f"fit {fit}; any {either}  {time.time() - t0:.0f} s", flush=True)


def chain_null_run(shoes: int, seed: int, workers: int = 1, chunk: int = 50,
                   cut_left: int = CUT_LEFT, save: str = "") -> None:
    """Fair shoes' chain tests: the largest statistic (nats over the controls' average)
    over every look and both trays (dealt order, collected by hand), its worst, its upper
    quantiles, the shoes at or above [analytics] shuffle_chain_nats, and the largest
    z-score too; ``save`` keeps every look of every shoe."""
    t0 = time.time()
    peaks: list[float] = []
    fams: list[list[float]] = []
    zs: list[float] = []
    looks: list[Any] = []
    z = CONFIG.shuffle_chain_nats
    with multiprocessing.Pool(workers) if workers > 1 else _Serial() as pool:
        for res in pool.imap(_pairs_chunk, _pairs_tasks(shoes, chunk, 0, False, False, seed,
                                                          cut_left, "chain")):
            peaks += [r["chain_peak"] for r in res]
            fams += [r["chain_families"] for r in res]
            zs += [max(max(v[2], v[7]) for v in r["chain_looks"]) for r in res]
            looks += [r["chain_looks"] for r in res]
            print(f"  chain null: {len(peaks)}/{shoes} shoes, worst {max(peaks):.2f} nats "
                  f"(largest z {max(zs):.2f}), at "
                  f"or above {z}: {sum(p >= z for p in peaks)}; {time.time() - t0:.0f} s",
                  flush=True)
    ranked = sorted(peaks)
    q = {f: ranked[min(len(ranked) - 1, int(f * len(ranked)))] for f in (0.5, 0.99, 0.999)}
    print(f"\nChain test, {len(peaks)} fair shoes (cut card {cut_left} from the end), the "
          f"largest statistic (nats) over its looks and both trays: median {q[0.5]:.2f}, "
          f"99% {q[0.99]:.2f}, "
          f"99.9% {q[0.999]:.2f}, worst {ranked[-1]:.2f}; worst dealt-order tray "
          f"{max(f[0] for f in fams):.2f}, by hand {max(f[1] for f in fams):.2f}; at or "
          f"above shuffle_chain_nats = {z}: {sum(p >= z for p in peaks)} of {len(peaks)}; "
          f"largest z-score (not alerted on) {max(zs):.2f}; "
          f"{time.time() - t0:.0f} s")
    if save:
        with open(save, "w") as fh:
            json.dump({"peak": peaks, "families": fams, "seed": seed, "looks": looks,
                       "look_fields": ["cards", *(f"{tray} {v}" for tray in ("dealt", "hand")
                                                  for v in ("excess", "z", "log_lr", "mean",
                                                            "sd"))]}, fh)


def chain_run(per_kind: int, seed: int, workers: int = 1, chunk: int = 8,
              cut_left: int = CUT_LEFT, everything: bool = False, fit: bool = True) -> None:
    """Weak shoes caught by the chain test at [analytics] shuffle_chain_nats, per kind, and
    the round of its first alert; with ``everything``, on the same shoes the pair count,
    the card-by-card test and (``fit``) the whole-shoe fit too, and any of them with the
    first round any alerts at."""
    from shoe_controller.game import shuffle_chain as sc

    rng = random.Random(seed)
    old, places, new, new_places = _pairs_shoe(5, True, True, rng, cut_left)
    looks = _chain_looks(_round_ends(new_places), len(new))
    cpu = time.process_time()
    tests = [sc.ChainTest.start(old, None, DECKS), sc.ChainTest.start(old, places, DECKS)]
    for _, m in looks:
        for t in tests:
            t.look(new[:m])
    look = (time.process_time() - cpu) / len(looks)
    print(f"\nChain test, weak shoes ({per_kind} a kind, threshold >= "
          f"{CONFIG.shuffle_chain_nats} nats); CPU, as the projection runs it: "
          f"{look * 1000:.0f} ms a look (both trays), {len(looks)} looks a shoe")
    which = "chain,pairs,others" + ("" if fit else ",nofit") if everything else "chain"
    t0 = time.time()
    for kind, riffles, by_hand, stripped in FIT_KINDS:
        res: list[dict[str, Any]] = []
        with multiprocessing.Pool(workers) if workers > 1 else _Serial() as pool:
            for part in pool.imap(_pairs_chunk, _pairs_tasks(per_kind, chunk, riffles, by_hand,
                                                             stripped, seed, cut_left, which)):
                res += part
        rounds = [r["chain_first"] for r in res if r["chain_fired"]]
        at_end = sum(r["chain_fired"] and r["chain_first"] is None for r in res)
        caught = sum(r["chain_fired"] for r in res)
        known = sorted(r for r in rounds if r is not None)
        when = (f"round median {statistics.median(known):.0f}, 90% "
                f"{known[int(0.9 * (len(known) - 1))]}" if known else "never by round")
        label = (f"{kind} shoe{' by hand' if by_hand else ''}, {riffles} riffles"
                 f"{', strip' if stripped else ', no strip'}, cut")
        peaks = [r["chain_peak"] for r in res]
        end = f", {at_end} at the end" if at_end else ""
        line = (f"  {label:<46} chain {caught}/{len(res)} ({when}{end}; "
                f"largest statistic median {statistics.median(peaks):.1f}, lowest "
                f"{min(peaks):.1f})")
        if everything:
            pairs = sum(r["first"] is not None for r in res)
            card = sum(r["card"] >= CONFIG.shuffle_weak_threshold for r in res)
            by_fit = (f"{sum(r['fit'] >= CONFIG.shuffle_fit_z for r in res)}" if fit
                      else "not run")
            either = sum(r["chain_fired"] or r["first"] is not None
                         or r["card"] >= CONFIG.shuffle_weak_threshold
                         or r["fit"] >= CONFIG.shuffle_fit_z for r in res)
            # the first round any test alerts at (the fit: at the shoe's end)
            firsts = []
            for r in res:
                alerted = [x for x in (r["chain_first"] if r["chain_fired"] else None,
                                       r["first"], r["card_first"],
                                       r["last_round"] if r["fit"] >= CONFIG.shuffle_fit_z
                                       else None) if x is not None]
                if alerted:
                    firsts.append(min(alerted))
            any_when = (f" (round median {statistics.median(firsts):.0f})" if firsts else "")
            line += (f"; pairs {pairs}; card by card {card}; fit {by_fit}; "
                     f"any {either}{any_when}")
        print(f"{line}  {time.time() - t0:.0f} s", flush=True)


def fit_truth_run(shoes: int, seed: int, riffles: int = 6, steps: int = 0) -> None:
    """Why the whole-shoe fit stops at five riffles: ``shoes`` fair and ``shoes`` weak
    shoes (``riffles`` GSR riffles, a strip and a cut; every card seen), scored with the
    ``riffles``-riffle gap table: the *true* matching of each weak shoe, and the best
    matching the search finds for each shoe, as z-scores against the fair shoes' best
    fits; and the true matching's score per old neighbour (the evidence riffles leave),
    against log((8!)**52), the matchings' number."""
    import numpy as np

    from shoe_controller.game import shuffle_fit as sf

    steps = steps or sf.STEPS
    cards = 52 * DECKS
    rng = np.random.default_rng(seed)
    table = sf.gap_table(cards, (riffles, True))
    codes = [c.code for c in ALL_CARDS]

    def shoe(weak: bool) -> tuple[list[str], list[str], float]:
        old = np.array([codes[i] for i in range(52) for _ in range(DECKS)])
        rng.shuffle(old)
        pos = sf._riffled(cards, riffles, True, rng) if weak else rng.permutation(cards)
        new = np.empty(cards, object)
        new[pos] = old
        return list(old), list(new), float(table[(pos[1:] - pos[:-1]) % cards].sum())

    def best(group: list[tuple[list[str], list[str], float]]) -> Any:
        built = [sf._slots(o, n, DECKS) for o, n, _ in group]
        return sf._anneal(*(np.stack([b[i] for b in built]) for i in range(3)), table,
                          np.random.default_rng(seed + 1), steps)

    t0 = time.time()
    fair = [shoe(False) for _ in range(shoes)]
    weak = [shoe(True) for _ in range(shoes)]
    fair_best, weak_best = best(fair), best(weak)
    mean, sd = float(fair_best.mean()), float(fair_best.std())
    true_z = [(w[2] - mean) / sd for w in weak]
    found_z = [(float(b) - mean) / sd for b in weak_best]
    per = statistics.fmean(w[2] for w in weak) / (cards - 1)
    print(f"\nWhole-shoe fit against the truth, {riffles} riffles and a strip, {shoes} fair and "
          f"{shoes} weak shoes, {steps} steps: against fair shoes' best fits (mean "
          f"{mean:.1f}, sd {sd:.1f}) the weak shoes' true matchings have median z "
          f"{statistics.median(true_z):.2f}, their best fits found "
          f"{statistics.median(found_z):.2f}; "
          f"the true matching scores {per:.3f} nats per old neighbour, {per * (cards - 1):.0f} "
          f"a shoe, against log((8!)**52) = {52 * math.log(math.factorial(8)):.0f}; "
          f"{time.time() - t0:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=1000, help="fair shoes (10000: full)")
    parser.add_argument("--with-pairs", action="store_true",
                        help="--shoes: the pair count on in the projection too (its alarms and "
                             "its worst z over every look)")
    parser.add_argument("--stacked", type=int, default=20, help="shoes of each stacked kind")
    parser.add_argument("--weak", type=int, default=40,
                        help="shoes of each weak-shuffle kind (300: full)")
    parser.add_argument("--weak-null", type=int, default=0,
                        help="fair shoes for the shuffle_weak test alone (10000: full)")
    parser.add_argument("--fast", action="store_true",
                        help="weak shuffles: the shuffle_weak test alone (not the projection)")
    parser.add_argument("--budget", type=float, default=0.0,
                        help="fair shoes (--shoes, --weak-null): stop after this many seconds")
    parser.add_argument("--chunk", type=int, default=250,
                        help="fair shoes (--shoes, --weak-null) per task and progress line")
    parser.add_argument("--speed", type=int, default=0,
                        help="shoes for the CPU cost of the shuffle_weak test (50)")
    parser.add_argument("--matching", type=int, default=0,
                        help="shoes for the identical-card matching comparison (20)")
    parser.add_argument("--oracle", type=int, default=0,
                        help="shoes per riffle count for the oracle (true identities) (40)")
    parser.add_argument("--resolution", type=int, default=0,
                        help="shoes per riffle count for the copy-resolution oracle (20)")
    parser.add_argument("--hindsight", type=int, default=0,
                        help="shoes per riffle count for the copy resolution with the whole "
                             "shoe seen (5)")
    parser.add_argument("--fit", type=int, default=0,
                        help="weak shoes a kind for the whole-shoe fit (100)")
    parser.add_argument("--fit-null", type=int, default=0,
                        help="fair shoes for the whole-shoe fit (10000: full)")
    parser.add_argument("--fit-steps", type=int, default=0,
                        help="annealing steps of the whole-shoe fit (default: shuffle_fit.STEPS)")
    parser.add_argument("--fit-save", default="",
                        help="--fit-null: write every shoe's scores to this JSON file")
    parser.add_argument("--pairs", type=int, default=0,
                        help="weak shoes a kind for the pair count (100)")
    parser.add_argument("--pairs-null", type=int, default=0,
                        help="fair shoes for the pair count (10000: full)")
    parser.add_argument("--pairs-save", default="",
                        help="--pairs-null: write every shoe's largest z to this JSON file")
    parser.add_argument("--chain", type=int, default=0,
                        help="weak shoes a kind for the chain test (48)")
    parser.add_argument("--chain-all", action="store_true",
                        help="--chain: the pair count, card-by-card test and fit on the same "
                             "shoes too (seconds a shoe)")
    parser.add_argument("--chain-no-fit", action="store_true",
                        help="--chain-all without the whole-shoe fit (its seconds a shoe)")
    parser.add_argument("--chain-null", type=int, default=0,
                        help="fair shoes for the chain test (10000: full)")
    parser.add_argument("--chain-save", default="",
                        help="--chain-null: write every look of every shoe to this JSON file")
    parser.add_argument("--fit-truth", type=int, default=0,
                        help="fair and weak shoes: the fit's true matching against its best (32)")
    parser.add_argument("--cut-left", type=int, default=CUT_LEFT,
                        help="the whole-shoe fit: cards behind the cut card")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--workers", type=int, default=1, choices=(1, 2),
                        help="processes (at most 2 on the shared machine)")
    args = parser.parse_args()
    if args.speed:
        speed_run(args.speed, args.seed)
    if args.matching:
        matching_run(args.matching, args.seed)
    if args.oracle:
        oracle_run(args.oracle, args.seed)
    if args.resolution:
        resolution_run(args.resolution, args.seed)
    if args.hindsight:
        hindsight_run(args.hindsight, args.seed)
    if args.fit_null:
        fit_null_run(args.fit_null, args.seed, args.workers, cut_left=args.cut_left,
                     steps=args.fit_steps, save=args.fit_save)
    if args.fit:
        fit_run(args.fit, args.seed, args.workers, cut_left=args.cut_left, steps=args.fit_steps)
    if args.fit_truth:
        fit_truth_run(args.fit_truth, args.seed, steps=args.fit_steps)
    if args.pairs_null:
        pairs_null_run(args.pairs_null, args.seed, args.workers, cut_left=args.cut_left,
                       save=args.pairs_save)
    if args.pairs:
        pairs_run(args.pairs, args.seed, args.workers, cut_left=args.cut_left)
    if args.chain_null:
        chain_null_run(args.chain_null, args.seed, args.workers, cut_left=args.cut_left,
                       save=args.chain_save)
    if args.chain:
        chain_run(args.chain, args.seed, args.workers, cut_left=args.cut_left,
                  everything=args.chain_all, fit=not args.chain_no_fit)
    if args.stacked:
        stacked_run(args.stacked, args.seed)
    if args.weak_null:
        weak_null_run(args.weak_null, args.seed, args.workers, args.budget, args.chunk)
    if args.weak:
        weak_run(args.weak, args.seed, args.workers, args.fast)
    if args.shoes:
        fair_run(args.shoes, args.seed, args.workers, args.budget, args.chunk, args.with_pairs)


if __name__ == "__main__":
    main()
