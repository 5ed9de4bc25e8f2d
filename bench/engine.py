"""Rounds per second through the pure game core, on pre-shuffled 8-deck shoes, one core.

Two figures, labelled for what they measure:

- full core: ``Shoe.apply`` (decide + evolve, every domain event built: prompts,
  results with settlement, bets open, burn, cut card, shoe end) over CardSeen inputs;
- tableau kernel: only the round machine's transition table over card values (what
  deciding the hands costs without events, state or settlement).

Usage: python bench/engine.py [--shoes N] [--seed S] [--repeat R]
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from shoe_controller.game.cards import ALL_CARDS  # noqa: E402
from shoe_controller.game.inputs import CardSeen, CutCardSeen, NewShoe  # noqa: E402
from shoe_controller.game.round import COMPLETE, NEXT, START  # noqa: E402
from shoe_controller.game.rules import Rules  # noqa: E402
from shoe_controller.game.shoe import Shoe  # noqa: E402


def shuffled_shoes(n: int, decks: int, seed: int, cut_from_end: int = 14) -> list[list]:
    """``n`` shoes as input lists: NewShoe, the cards, the cut card ``cut_from_end``
    cards before the end."""
    rng = random.Random(seed)
    shoes = []
    for _ in range(n):
        cards = [c for c in ALL_CARDS for _ in range(decks)]
        rng.shuffle(cards)
        inputs: list = [NewShoe(), *(CardSeen(c) for c in cards)]
        inputs.insert(len(inputs) - cut_from_end, CutCardSeen())
        shoes.append(inputs)
    return shoes


def full_core(shoes: list[list], rules: Rules) -> tuple[int, int, float]:
    """(rounds, events, seconds) applying every input through Shoe.apply."""
    shoe = Shoe(rules)
    rounds = events = 0
    t0 = time.perf_counter()
    for inputs in shoes:
        apply = shoe.apply
        for inp in inputs:
            evs = apply(inp)
            events += len(evs)
            for ev in evs:
                if ev.__class__.__name__ == "RoundResult":
                    rounds += 1
    return rounds, events, time.perf_counter() - t0


def tableau_kernel(shoes: list[list]) -> tuple[int, float]:
    """(rounds, seconds) dealing the shoes' card values through the transition table."""
    values = [[i.card.value for i in inputs if isinstance(i, CardSeen)] for inputs in shoes]
    nxt, complete = NEXT, COMPLETE
    rounds = 0
    t0 = time.perf_counter()
    for vals in values:
        node = START
        for v in vals:
            node = nxt[node * 10 + v]
            if complete[node]:
                rounds += 1
                node = START
    return rounds, time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shoes", type=int, default=200)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--repeat", type=int, default=3, help="best of R runs")
    args = ap.parse_args()
    shoes = shuffled_shoes(args.shoes, 8, args.seed)
    rules = Rules()  # 8 decks, first-card burn, commission, auto rounds and confirm
    best = None
    for _ in range(args.repeat):
        gc.collect()
        r = full_core(shoes, rules)
        if best is None or r[2] < best[2]:
            best = r
    rounds, events, secs = best
    print(f"full core (Shoe.apply: decide+evolve, all events): {rounds} rounds, {events} events"
          f" in {secs:.3f} s = {rounds / secs:,.0f} rounds/s ({events / secs:,.0f} events/s)")
    kbest = min((tableau_kernel(shoes) for _ in range(args.repeat)), key=lambda r: r[1])
    print(f"tableau kernel only (transition table over values, no events/state): "
          f"{kbest[0]} rounds in {kbest[1]:.3f} s = {kbest[0] / kbest[1]:,.0f} rounds/s")
    print(f"python {sys.version.split()[0]}, one core, {args.shoes} shoes of 8 decks, "
          f"best of {args.repeat}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
