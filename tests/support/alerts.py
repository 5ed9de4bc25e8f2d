"""The game-protection projection's alerts of one test, as the daemon sees them: folded
event by event, and resumed from a journal folded part way (``protection.fold``)."""

from __future__ import annotations

import random
from typing import Any

from shoe_controller.game.events import IntegrityAlert
from shoe_controller.game.protection import AnalyticsConfig, fold, initial_state, protect
from shoe_controller.game.rules import Rules
from shoe_controller.game.shoe import Shoe
from tests.support.dealing import deal, tray
from tests.support.riffles import cut, riffles, strip


def alerts_of(test: str, events: list[Any], config: AnalyticsConfig | None = None
              ) -> list[IntegrityAlert]:
    """The alerts of ``test`` the projection raises over ``events``."""
    state = initial_state(Rules(), config)
    out = []
    for ev in events:
        state, raised = protect(state, ev)
        out += [e for e in raised if isinstance(e, IntegrityAlert)
                and e.evidence.get("test") == test]
    return out


def riffled_after(first_cards: list[str], seed: int, k: int = 4, shoe: Shoe | None = None
                  ) -> tuple[list[Any], list[Any]]:
    """(the events of a shoe dealt from ``first_cards``, those of the next shoe: its tray
    in dealt order given ``k`` riffles, a strip and a cut), by one shoe machine (``shoe``,
    or a new one)."""
    shoe = shoe or Shoe(Rules())
    first = deal(first_cards, shoe)
    rng = random.Random(seed)
    return first, deal(cut(strip(riffles(tray(first_cards, first), k, rng), rng), rng), shoe)


def alerts_after_resuming(test: str, events: list[Any], first: int) -> tuple[int, ...]:
    """Alerts of ``test`` raised after a resume from a journal folded just after its
    first alert (want 0: the fold marks it raised), and from one folded 30 events into
    the second shoe (want 1). ``first``: the events of the first shoe."""
    state = initial_state(Rules())
    at = None
    for k, ev in enumerate(events):
        state, raised = protect(state, ev)
        if any(isinstance(e, IntegrityAlert) and e.evidence.get("test") == test
               for e in raised):
            at = k
            break
    assert at is not None and at > first, "no alert in the second shoe"
    found = []
    for split in (at + 1, first + 30):
        state = fold(initial_state(Rules()), events[:split])
        count = 0
        for ev in events[split:]:
            state, raised = protect(state, ev)
            count += sum(1 for e in raised if isinstance(e, IntegrityAlert)
                         and e.evidence.get("test") == test)
        found.append(count)
    return tuple(found)
