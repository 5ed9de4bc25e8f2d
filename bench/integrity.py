"""False-alarm and detection rates of the shuffle-integrity and edge-sorting tests.

    .venv/bin/python bench/integrity.py                 # ~1,000 fair shoes: a few minutes
    .venv/bin/python bench/integrity.py --shoes 10000   # the full measurement (~30 min)

Fair shoes: seeded random 8-deck shoes, dealt round by round by the tableau (burn by the
first card, cut card 16 cards from the end), each card's orientation independent of its
rank (each shoe draws its own share of upside-down cards, from none to half). The real
projection (``game.protection.protect``, default ``AnalyticsConfig``) is fed the same
events the game core emits and evaluates every test after every round, so the rate
printed is per shoe, with all the repeated looks included. The repeat test is measured
against *every* earlier fair shoe of the run (a larger history than the default 500).

Stacked shoes: several kinds of unshuffled, lightly shuffled, reused and edge-sorted
shoes; prints how many were detected and the median round of the first alert.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

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
CONFIG = AnalyticsConfig(shoe_analysis=False)  # integrity only; odds are bench/odds.py


def shoe_events(shoe: int, cards: list[str], orient: Callable[[str], str | None]) -> Iterator[Any]:
    """The events the game core emits for a shoe dealt in this order (no misdeals)."""
    yield ShoeStarted(shoe=shoe, decks=DECKS)
    first = cards[0]
    burn = parse_card(first).value or 10
    yield BurnIndicator(shoe=shoe, card=first, burn_count=burn)
    for code in cards[1 : 1 + burn]:
        yield CardBurned(shoe=shoe, card=code)
    pos, rnd = 1 + burn, 0
    while len(cards) - pos >= 6:
        rnd += 1
        last = len(cards) - pos <= CUT_LEFT + 6
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


def run_shoe(state: Any, shoe: int, cards: list[str], orient: Callable[[str], str | None]):
    """Feed one shoe through the projection; (state, alerts)."""
    found = []
    for ev in shoe_events(shoe, cards, orient):
        state, out = protect(state, ev)
        found += [e for e in out if isinstance(e, IntegrityAlert)]
    return state, found


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


def fair_run(shoes: int, seed: int) -> None:
    rng = random.Random(seed)
    state = initial_state(Rules(), CONFIG, salt=b"bench")
    history: dict[int, int] = {}  # fingerprint -> shoe, every earlier shoe
    alarms: Counter[str] = Counter()
    alarmed_shoes = 0
    worst: dict[str, float] = {"order_run": 0, "suit_run": 0, "z deck order": 0.0,
                               "z previous shoe": 0.0, "repeat windows": 0,
                               "edge p (min)": 1.0}
    start = time.perf_counter()
    for shoe in range(1, shoes + 1):
        cards = fresh_cards()
        rng.shuffle(cards)
        p_down = rng.choice((0.0, 0.02, 0.1, 0.3, 0.5))
        orient_rng = random.Random(rng.random())

        def orient(code: str, r: random.Random = orient_rng, p: float = p_down) -> str:
            return "down" if r.random() < p else "up"

        state = replace(state, known=FingerprintSet())  # repeats: measured below
        state, found = run_shoe(state, shoe, cards, orient)
        tests = {a.evidence["test"] for a in found}
        repeats = sum(1 for fp in state.fingerprints if fp in history)
        if repeats >= CONFIG.repeat_min_windows:
            tests.add("repeat")
        for fp in state.fingerprints:
            history.setdefault(fp, shoe)
        alarms.update(tests)
        alarmed_shoes += bool(tests)
        # the end-of-shoe statistics, to show the margin below each threshold
        seq = state.sequence
        worst["order_run"] = max(worst["order_run"], si.longest_order_run(seq))
        worst["suit_run"] = max(worst["suit_run"], si.longest_suit_run(seq))
        worst["z deck order"] = max(worst["z deck order"],
                                    si.adjacency_test(seq, si.DECK_ORDER).z)
        if state.previous_neighbours:
            worst["z previous shoe"] = max(worst["z previous shoe"],
                                           si.adjacency_test(seq, state.previous_neighbours).z)
        worst["repeat windows"] = max(worst["repeat windows"], repeats)
        t = es.edge_sorting_test(state.oriented, CONFIG.edge_sorting_min_expected)
        for p in (t.key_p, t.ranks_p):
            if p is not None:
                worst["edge p (min)"] = min(worst["edge p (min)"], p)
        if shoe % 500 == 0:
            print(f"  ... {shoe} fair shoes, {alarmed_shoes} with an alarm "
                  f"({time.perf_counter() - start:.0f} s)", flush=True)
    elapsed = time.perf_counter() - start
    bound = 3 / shoes if alarmed_shoes == 0 else None
    print(f"fair shoes: {shoes}, shoes with any false alarm: {alarmed_shoes} "
          f"(rate {alarmed_shoes / shoes:.2e}"
          + (f"; 95% upper bound {bound:.1e})" if bound else ")")
          + f"   target <= 1e-4   [{elapsed:.0f} s]")
    for test in ("order_run", "suit_run", "adjacency_deck_order", "adjacency_previous_shoe",
                 "repeat", "edge_sorting"):
        print(f"  {test:26s} false alarms {alarms[test]}")
    c = CONFIG
    limits = {"order_run": c.order_run_threshold, "suit_run": c.suit_run_threshold,
              "z deck order": c.adjacency_z, "z previous shoe": c.adjacency_z,
              "repeat windows": c.repeat_min_windows, "edge p (min)": c.edge_sorting_alpha}
    print("  worst end-of-shoe statistic over the fair shoes (alert threshold):")
    for name, value in worst.items():
        shown = f"{value:.2e}" if name.startswith("edge") else f"{value:.2f}"
        print(f"    {name:18s} {shown:>10s}   ({limits[name]:g})")


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=1000, help="fair shoes (10000: full)")
    parser.add_argument("--stacked", type=int, default=20, help="shoes of each stacked kind")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    stacked_run(args.stacked, args.seed)
    fair_run(args.shoes, args.seed)


if __name__ == "__main__":
    main()
