"""Time of one exact analysis (every bet, one composition): target <= 50 ms.

    .venv/bin/python bench/odds.py [--shoes 5] [--decks 8] [--seed 1]

Deals seeded random 8-deck shoes and analyses the remaining composition before every
round, as the live protection projection does; prints ms per analysis (median, p95,
max) and the one-time set-up cost of the static tables.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from shoe_controller.game import odds
from shoe_controller.game.cards import ALL_CARDS
from shoe_controller.game.tableau import coup


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=5)
    parser.add_argument("--decks", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    start = time.perf_counter()
    odds.prepare()
    setup_ms = (time.perf_counter() - start) * 1000

    rng = random.Random(args.seed)
    times: list[float] = []
    for _ in range(args.shoes):
        shoe = [c for c in ALL_CARDS for _ in range(args.decks)]
        rng.shuffle(shoe)
        counts = [args.decks] * 52
        pos = 0
        while len(shoe) - pos > 20:  # a cut card ~20 cards from the end
            t = time.perf_counter()
            odds.analyse(counts)
            times.append((time.perf_counter() - t) * 1000)
            player, banker = coup(c.value for c in shoe[pos : pos + 6])
            used = len(player) + len(banker)
            for c in shoe[pos : pos + used]:
                counts[c.index] -= 1
            pos += used
    times.sort()
    p95 = times[int(0.95 * (len(times) - 1))]
    print(f"odds: {len(times)} analyses of {args.decks}-deck shoe compositions")
    print(f"odds: setup (static tables, once) {setup_ms:.1f} ms")
    print(
        f"odds: ms per analysis  median {statistics.median(times):.2f}  "
        f"p95 {p95:.2f}  max {times[-1]:.2f}   (target <= 50 ms)"
    )


if __name__ == "__main__":
    main()
