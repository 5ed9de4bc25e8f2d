"""Every component value of the card-by-card test (against the previous shoe, rounds known)
after every card, for some of bench/integrity.py's weak kinds (the shoes of
``shuffle_kinds.py SEED N KIND...``).

Usage: ``python bench/experiments/shuffle_record.py SEED N OUT.npz KIND...``. Saves per kind
``KIND_values`` (shoes, cards, components; NaN past a shoe's end) and ``KIND_rounds`` (the
round of each card), and ``names`` (each component's name), for ``shuffle_weights.py``.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import integrity as b
from shuffle_kinds import kind_seeds

from shoe_controller.game.events import BurnIndicator, CardBurned, CardDealt
from shoe_controller.game.shuffle_tracking import (
    _INDEX,
    ShuffleTest,
    _component_name,
)


def one(kind: str, riffles: int, by_hand: bool, rng: random.Random
        ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """One weak shoe: every component's value after each card, each card's round, names."""
    previous = b.fresh_cards()
    rng.shuffle(previous)
    events = list(b.shoe_events(1, previous, lambda c: None))
    sel = [ev for ev in events if isinstance(ev, BurnIndicator | CardBurned | CardDealt)]
    places = [(ev.round, ev.hand) if isinstance(ev, CardDealt) else None for ev in sel]
    test = ShuffleTest.start([ev.card for ev in sel], b.DECKS, places=places)
    stack = b.discard_stack(previous, events, by_hand, rng)
    cards = b.weakly_shuffled(stack, riffles, rng, stripped=not kind.endswith("no strip"))
    seq, rounds = [], []
    for ev in b.shoe_events(2, cards, lambda c: None):
        if isinstance(ev, BurnIndicator | CardBurned | CardDealt):
            seq.append(ev.card)
            rounds.append(getattr(ev, "round", 1))
    trackers = test._trackers
    names = [_component_name(t, i) for t in trackers for i in range(len(t.values))]
    out = np.zeros((len(seq), len(names)), dtype=np.float32)
    seen = [0] * 52
    total = 52 * b.DECKS
    for n, x in enumerate(seq):
        c = _INDEX[x]
        if b.DECKS - seen[c] > 0:
            p0 = (b.DECKS - seen[c]) / (total - n)
            for t in trackers:
                t.predict(c, p0)
        out[n] = [v for t in trackers for v in t.values]
        for t in trackers:
            t.place(c)
        seen[c] += 1
    return out, np.array(rounds), names


def main() -> None:
    seed, per_kind, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    save: dict[str, np.ndarray] = {}
    t0 = time.time()
    for want in sys.argv[4:]:
        vals, rnds, names = [], [], []
        for kind, riffles, hand, count, task_seed in kind_seeds(seed, want, per_kind):
            rng = random.Random(task_seed)
            for _ in range(count):
                v, r, names = one(kind, riffles, hand, rng)
                vals.append(v)
                rnds.append(r)
        m = max(len(v) for v in vals)
        values = np.full((len(vals), m, len(names)), np.nan, dtype=np.float32)
        rounds = np.full((len(vals), m), 10**6, dtype=np.int32)
        for i, (v, r) in enumerate(zip(vals, rnds, strict=True)):
            values[i, : len(v)] = v
            rounds[i, : len(r)] = r
        save[want + "_values"], save[want + "_rounds"] = values, rounds
        save["names"] = np.array(names)
        print(want, f"{time.time() - t0:.0f} s", flush=True)
    np.savez_compressed(path, **save)


if __name__ == "__main__":
    main()
