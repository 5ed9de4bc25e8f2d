"""Does the bench's hand-collected tray (``integrity.discard_stack(..., by_hand=True)``) do
anything ``shuffle_tracking.tray_edges`` does not allow? Every pair of consecutive tray cards
of ``SHOES`` shoes must be an edge of the model.

Usage: ``python bench/experiments/shuffle_traycheck.py [SHOES]`` (20). Prints the pairs
checked and how many the model does not allow (0 expected).
"""

from __future__ import annotations

import itertools
import random
import sys
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import integrity as b

from shoe_controller.game.events import BurnIndicator, CardBurned, CardDealt
from shoe_controller.game.shuffle_tracking import tray_edges


def main() -> None:
    shoes = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    rng = random.Random(5)
    bad = total = 0
    for _ in range(shoes):
        previous = b.fresh_cards()
        rng.shuffle(previous)
        events = list(b.shoe_events(1, previous, lambda c: None))
        left = [ev for ev in events if isinstance(ev, BurnIndicator | CardBurned | CardDealt)]
        places = [(ev.round, ev.hand) if isinstance(ev, CardDealt) else None for ev in left]
        edges = tray_edges(places)
        # the cards renamed by where they left the shoe, to follow them into the tray
        renamed, k = [], 0
        for ev in events:
            if isinstance(ev, BurnIndicator | CardBurned | CardDealt):
                renamed.append(msgspec.structs.replace(ev, card=str(k)))
                k += 1
            else:
                renamed.append(ev)
        tray = b.discard_stack([str(i) for i in range(len(previous))], renamed, True, rng)
        ids = [int(x) for x in tray[: len(left)]]
        for x, y in itertools.pairwise(ids):
            total += 1
            if edges.get((x, y), 0) <= 0:
                bad += 1
    print(f"consecutive tray pairs {total}, not allowed by tray_edges {bad}")


if __name__ == "__main__":
    main()
