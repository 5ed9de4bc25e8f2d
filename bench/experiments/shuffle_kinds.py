"""bench/integrity.py's weak-shuffle run (``--weak N --fast``) for a few kinds only, on the
same seeds as ``--seed SEED``.

Usage: ``python bench/experiments/shuffle_kinds.py SEED N KIND...``, KIND one of d4..d8
(previous shoe in dealt order), h4..h8 (collected by hand), n4..n6 (new decks), s4..s6 (no
strip). Prints caught/N and the median / 90th-percentile round of the alert per kind.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import integrity as b

KINDS = [("previous", k, False) for k in (4, 5, 6, 7, 8)]
KINDS += [("previous", k, True) for k in (4, 5, 6, 7, 8)]
KINDS += [("new", k, False) for k in (4, 5, 6)]
KINDS += [("previous, no strip", k, False) for k in (4, 5, 6)]
CODE = {"d": ("previous", False), "h": ("previous", True), "n": ("new", False),
        "s": ("previous, no strip", False)}


def kind_seeds(seed: int, want: str, per_kind: int) -> list[tuple[str, int, bool, int, int]]:
    """The bench's tasks for kind ``want``: (kind, riffles, by hand, shoes, seed)."""
    kind, hand = CODE[want[0]]
    riffles = int(want[1:])
    n = KINDS.index((kind, riffles, hand))
    return [(kind, riffles, hand, min(25, per_kind - first), seed * 7919 + n * 100_003 + first)
            for first in range(0, per_kind, 25)]


def main() -> None:
    seed, per_kind = int(sys.argv[1]), int(sys.argv[2])
    out = []
    t0 = time.time()
    for want in sys.argv[3:]:
        res = []
        for task in kind_seeds(seed, want, per_kind):
            res += b._weak_task((*task, True))
        rounds = sorted(r[1] for r in res if r[0])
        med = statistics.median(rounds) if rounds else "-"
        p90 = rounds[math.ceil(0.9 * len(rounds)) - 1] if rounds else "-"
        out.append(f"{want} {len(rounds)}/{len(res)} {med}/{p90}")
    print(" | ".join(out) + f"  [{time.time() - t0:.0f} s]", flush=True)


if __name__ == "__main__":
    main()
