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
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from shoe_controller.game.cards import ALL_CARDS
from shoe_controller.game.events import RoundResult
from shoe_controller.game.inputs import CardSeen, CutCardSeen, NewShoe
from shoe_controller.game.round import COMPLETE, NEXT, START
from shoe_controller.game.rules import Rules
from shoe_controller.game.shoe import Shoe


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


def full_core(shoes: list[list], rules: Rules) -> tuple[int, int, float, float]:
    """(rounds, events, CPU seconds, wall seconds) applying every input via Shoe.apply.

    Rounds are counted from the shoe state after each shoe (rounds dealt), so the loop
    adds nothing per event beyond keeping the events list."""
    shoe = Shoe(rules)
    apply = shoe.apply
    rounds = events = 0
    c0, t0 = time.process_time(), time.perf_counter()
    for inputs in shoes:
        for inp in inputs:
            events += len(apply(inp))
        rounds += shoe.state.round
    return rounds, events, time.process_time() - c0, time.perf_counter() - t0


def count_results(shoes: list[list], rules: Rules) -> int:
    """Round results emitted over ``shoes`` (checks the count above is results)."""
    shoe = Shoe(rules)
    return sum(
        1 for inputs in shoes for inp in inputs for ev in shoe.apply(inp)
        if ev.__class__ is RoundResult
    )


def tableau_kernel(shoes: list[list]) -> tuple[int, float]:
    """(rounds, CPU seconds) dealing the shoes' card values through the transition table."""
    values = [[i.card.value for i in inputs if isinstance(i, CardSeen)] for inputs in shoes]
    nxt, complete = NEXT, COMPLETE
    rounds = 0
    t0 = time.process_time()
    for vals in values:
        node = START
        for v in vals:
            node = nxt[node * 10 + v]
            if complete[node]:
                rounds += 1
                node = START
    return rounds, time.process_time() - t0


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
    rounds, events, cpu, wall = best
    assert rounds == count_results(shoes, rules), "every round dealt must have a result"
    print(f"full core (Shoe.apply = decide+evolve, every event built): {rounds} rounds, "
          f"{events} events in {cpu:.3f} s CPU = {rounds / cpu:,.0f} rounds/s "
          f"({events / cpu:,.0f} events/s); wall {wall:.3f} s = {rounds / wall:,.0f} rounds/s")
    kbest = min((tableau_kernel(shoes) for _ in range(args.repeat)), key=lambda r: r[1])
    print(f"tableau kernel only (transition table over card values; no events, state or "
          f"settlement): {kbest[0]} rounds in {kbest[1]:.3f} s CPU = "
          f"{kbest[0] / kbest[1]:,.0f} rounds/s")
    print(f"python {sys.version.split()[0]}, one thread, {args.shoes} shoes of 8 decks, "
          f"best of {args.repeat}; CPU time (process_time) excludes time the process waited "
          f"for a core, wall time does not (load average now {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
